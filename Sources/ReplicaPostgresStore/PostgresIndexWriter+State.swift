package import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaPostgres

// What an index keeps beside its items: the client state, facts about itself, the projection engine's
// checkpoints, versions, quarantine and tombstones, and what each source saw of its entries.
extension PostgresIndexWriter {
    // MARK: Client state and facts

    /// The stored client state, read under a lock the transaction keeps to its end: a batch that compares
    /// it before writing its own (``IndexBatch/end(expectedClientState:newClientState:)``) must not read
    /// the state another session is about to replace. Without the lock two sessions could both find the
    /// state they expected, and the later commit would overwrite the earlier one's. The index's `created`
    /// row is locked rather than the state's own, which a first batch has not written yet.
    package func clientState() throws -> Data? {
        try execute("SELECT 1 FROM replica.meta WHERE account = $1 AND index_name = $2 AND key = 'created' FOR UPDATE")
        let result = try execute("SELECT state FROM replica.client_state WHERE account = $1 AND index_name = $2")
        return result.rowCount > 0 ? result.bytes(0, 0).map { Data($0) } : nil
    }

    package func setClientState(_ state: Data) throws {
        try execute(
            """
            INSERT INTO replica.client_state(account, index_name, state, updated) VALUES ($1, $2, $3, $4)
            ON CONFLICT (account, index_name) DO UPDATE SET state = excluded.state, updated = excluded.updated
            """, [.bytes([UInt8](state)), .double(now.timeIntervalSince1970)])
    }

    package func setMeta(_ key: String, _ value: String?) throws {
        if let value {
            try execute(
                """
                INSERT INTO replica.meta(account, index_name, key, value) VALUES ($1, $2, $3, $4)
                ON CONFLICT (account, index_name, key) DO UPDATE SET value = excluded.value
                """, [.text(key), .text(value)])
        } else {
            try execute("DELETE FROM replica.meta WHERE account = $1 AND index_name = $2 AND key = $3", [.text(key)])
        }
    }

    /// A fact the index keeps about itself, or `nil`.
    package func meta(_ key: String) throws -> String? {
        try firstText(
            "SELECT value FROM replica.meta WHERE account = $1 AND index_name = $2 AND key = $3", [.text(key)])
    }

    /// Those of `identifiers` that name no item (expired or not) and no quarantined record.
    package func absent(_ identifiers: [ItemIdentifier]) throws -> Set<ItemIdentifier> {
        guard !identifiers.isEmpty else { return [] }
        let result = try execute(
            """
            SELECT given.identifier FROM unnest($3::text[]) AS given(identifier)
            WHERE NOT EXISTS (SELECT 1 FROM replica.items
                              WHERE items.account = $1 AND items.index_name = $2 AND items.identifier = given.identifier)
              AND NOT EXISTS (SELECT 1 FROM replica.quarantine
                              WHERE quarantine.account = $1 AND quarantine.index_name = $2 AND quarantine.identifier = given.identifier)
            """, [Self.arrayLiteral(identifiers.map(\.rawValue))])
        return Set((0..<result.rowCount).compactMap { result.string($0, 0).map { ItemIdentifier($0) } })
    }

    /// The text in the first column of the first row a query returns, or `nil`.
    func firstText(_ sql: String, _ parameters: [PostgresValue]) throws -> String? {
        let result = try execute(sql, parameters)
        return result.rowCount > 0 ? result.string(0, 0) : nil
    }

    // MARK: Checkpoints

    package func checkpoint(_ consumer: String) throws -> String? {
        try firstText(
            "SELECT position FROM replica.checkpoints WHERE account = $1 AND index_name = $2 AND consumer = $3",
            [.text(consumer)])
    }

    /// Saves the position and, in the same statement, notifies `replica_projected` (delivered when the
    /// transaction commits), so that waiters for a write to become searchable
    /// (`RecordStore.waitUntilSearchable`) look at the checkpoint again.
    package func setCheckpoint(_ consumer: String, _ position: String) throws {
        try execute(
            """
            WITH saved AS (
                INSERT INTO replica.checkpoints(account, index_name, consumer, position, updated) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (account, index_name, consumer) DO UPDATE SET position = excluded.position, updated = excluded.updated
                RETURNING 1)
            SELECT pg_notify('replica_projected', $1::text || '/' || $2::text) FROM saved
            """, [.text(consumer), .text(position), .double(now.timeIntervalSince1970)])
    }

    package func removeCheckpoint(_ consumer: String) throws {
        try execute(
            "DELETE FROM replica.checkpoints WHERE account = $1 AND index_name = $2 AND consumer = $3",
            [.text(consumer)])
    }

    // MARK: Projection versions and rebuilds

    package func projectionStates() throws -> [String: ProjectionState] {
        let result = try execute(
            "SELECT kind, version, target_version, cursor FROM replica.projections WHERE account = $1 AND index_name = $2"
        )
        let rows = (0..<result.rowCount).map { row in
            (
                result.string(row, 0) ?? "",
                ProjectionState(
                    version: Int(result.int(row, 1) ?? 0), targetVersion: result.int(row, 2).map(Int.init),
                    cursor: result.string(row, 3))
            )
        }
        return Dictionary(rows, uniquingKeysWith: { $1 })
    }

    package func setProjectionState(_ kind: String, _ state: ProjectionState) throws {
        try execute(
            """
            INSERT INTO replica.projections(account, index_name, kind, version, target_version, cursor) VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (account, index_name, kind) DO UPDATE
            SET version = excluded.version, target_version = excluded.target_version, cursor = excluded.cursor
            """,
            [.text(kind), .int(Int64(state.version)), PostgresValue(state.targetVersion), PostgresValue(state.cursor)])
    }

    /// Records that a kind's items are built with `version`, unless the kind is already known.
    package func noteProjectionVersion(_ kind: String, _ version: Int) throws {
        try execute(
            """
            INSERT INTO replica.projections(account, index_name, kind, version) VALUES ($1, $2, $3, $4)
            ON CONFLICT (account, index_name, kind) DO NOTHING
            """, [.text(kind), .int(Int64(version))])
    }

    // MARK: Quarantine and tombstones

    /// Whether any record waits in quarantine.
    package func hasQuarantinedRecords() throws -> Bool {
        try execute("SELECT 1 FROM replica.quarantine WHERE account = $1 AND index_name = $2 LIMIT 1").rowCount > 0
    }

    /// The identifiers of every item `owner` made.
    package func identifiers(ownedBy owner: ItemOwner) throws -> [ItemIdentifier] {
        let result = try execute(
            "SELECT identifier FROM replica.items WHERE account = $1 AND index_name = $2 AND owner = $3 ORDER BY id",
            [.text(owner.rawValue)])
        return (0..<result.rowCount).compactMap { result.string($0, 0).map { ItemIdentifier($0) } }
    }

    package func quarantine(
        _ identifier: ItemIdentifier, kind: String, recordID: String, version: Int64, reason: String
    ) throws {
        try execute(
            """
            INSERT INTO replica.quarantine(account, index_name, identifier, kind, record_id, version, reason, at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            ON CONFLICT (account, index_name, identifier) DO UPDATE SET version = excluded.version, reason = excluded.reason, at = excluded.at
            """,
            [
                .text(identifier.rawValue), .text(kind), .text(recordID), .int(version), .text(reason),
                .double(now.timeIntervalSince1970),
            ])
    }

    package func releaseFromQuarantine(_ identifier: ItemIdentifier) throws {
        try execute(
            "DELETE FROM replica.quarantine WHERE account = $1 AND index_name = $2 AND identifier = $3",
            [.text(identifier.rawValue)])
    }

    package func tombstoneVersion(_ identifier: ItemIdentifier) throws -> Int64? {
        let result = try execute(
            "SELECT version FROM replica.tombstones WHERE account = $1 AND index_name = $2 AND identifier = $3",
            [.text(identifier.rawValue)])
        return result.rowCount > 0 ? result.int(0, 0) : nil
    }

    package func setTombstone(_ identifier: ItemIdentifier, version: Int64) throws {
        try execute(
            """
            INSERT INTO replica.tombstones AS tombstones (account, index_name, identifier, version) VALUES ($1, $2, $3, $4)
            ON CONFLICT (account, index_name, identifier) DO UPDATE SET version = greatest(tombstones.version, excluded.version)
            """, [.text(identifier.rawValue), .int(version)])
    }

    package func clearTombstone(_ identifier: ItemIdentifier) throws {
        try execute(
            "DELETE FROM replica.tombstones WHERE account = $1 AND index_name = $2 AND identifier = $3",
            [.text(identifier.rawValue)])
    }

    /// The version an item was projected from, when its owner records one as a number.
    package func storedVersion(_ identifier: ItemIdentifier) throws -> Int64? {
        try firstText(
            "SELECT source_version FROM replica.items WHERE account = $1 AND index_name = $2 AND identifier = $3",
            [.text(identifier.rawValue)]
        ).flatMap { Int64($0) }
    }

    // MARK: Source entries

    package func setEntry(_ entry: SourceEntry, source: String) throws {
        try execute(
            """
            INSERT INTO replica.source_entries(account, index_name, source, key, stamp, skip_reason) VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (account, index_name, source, key) DO UPDATE SET stamp = excluded.stamp, skip_reason = excluded.skip_reason
            """, [.text(source), .text(entry.key), .text(entry.stamp), PostgresValue(entry.skipReason)])
    }

    package func removeEntry(_ key: String, source: String) throws {
        try execute(
            "DELETE FROM replica.source_entries WHERE account = $1 AND index_name = $2 AND source = $3 AND key = $4",
            [.text(source), .text(key)])
    }

    /// Removes a source's entries whose keys start with `prefix`.
    package func removeEntries(withKeyPrefix prefix: String, source: String) throws {
        try execute(
            "DELETE FROM replica.source_entries WHERE account = $1 AND index_name = $2 AND source = $3 AND starts_with(key, $4)",
            [.text(source), .text(prefix)])
    }

    /// Forgets everything of a source: its items, entries and checkpoint.
    package func forgetSource(named source: String, owner: ItemOwner, checkpoint consumer: String) throws {
        try delete(owner: owner)
        try execute(
            "DELETE FROM replica.source_entries WHERE account = $1 AND index_name = $2 AND source = $3", [.text(source)]
        )
        try removeCheckpoint(consumer)
    }
}
