import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaSQLite

/// What the projection engine and sources keep in an index file beside the items (migration 0002).
extension SQLiteIndexWriter {
    // MARK: Checkpoints

    package func checkpoint(_ consumer: String) throws -> String? {
        guard
            case .text(let value)? = try connection.scalar(
                "SELECT position FROM checkpoints WHERE consumer = ?", [.text(consumer)])
        else {
            return nil
        }
        return value
    }

    package func setCheckpoint(_ consumer: String, _ position: String) throws {
        try connection.cached(
            """
            INSERT INTO checkpoints(consumer, position, updated) VALUES (?, ?, ?)
            ON CONFLICT(consumer) DO UPDATE SET position = excluded.position, updated = excluded.updated
            """
        ).run([.text(consumer), .text(position), .real(now.timeIntervalSince1970)])
    }

    package func removeCheckpoint(_ consumer: String) throws {
        try connection.execute("DELETE FROM checkpoints WHERE consumer = ?", [.text(consumer)])
    }

    // MARK: Projection versions and rebuilds

    package func projectionStates() throws -> [String: ProjectionState] {
        let rows = try connection.cached("SELECT kind, version, target_version, cursor FROM projections").rows { row in
            (
                row.text(0),
                ProjectionState(
                    version: row.int(1), targetVersion: row.optionalInt64(2).map(Int.init), cursor: row.optionalText(3))
            )
        }
        return Dictionary(rows, uniquingKeysWith: { $1 })
    }

    package func setProjectionState(_ kind: String, _ state: ProjectionState) throws {
        try connection.cached(
            """
            INSERT INTO projections(kind, version, target_version, cursor) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT(kind) DO UPDATE SET version = ?2, target_version = ?3, cursor = ?4
            """
        ).run([.text(kind), .integer(Int64(state.version)), SQLValue(state.targetVersion), SQLValue(state.cursor)])
    }

    /// Records that a kind's items are built with `version`, unless the kind is already known.
    package func noteProjectionVersion(_ kind: String, _ version: Int) throws {
        try connection.cached("INSERT INTO projections(kind, version) VALUES (?, ?) ON CONFLICT(kind) DO NOTHING")
            .run([.text(kind), .integer(Int64(version))])
    }

    // MARK: Quarantine and tombstones

    /// Whether any record waits in quarantine.
    package func hasQuarantinedRecords() throws -> Bool {
        try connection.scalar("SELECT 1 FROM quarantine LIMIT 1") != nil
    }

    /// The identifiers of every item `owner` made.
    package func identifiers(ownedBy owner: ItemOwner) throws -> [ItemIdentifier] {
        try connection.cached("SELECT identifier FROM items WHERE owner = ?").rows([.text(owner.rawValue)]) {
            ItemIdentifier($0.text(0))
        }
    }

    package func quarantine(
        _ identifier: ItemIdentifier, kind: String, recordID: String, version: Int64, reason: String
    ) throws {
        try connection.cached(
            """
            INSERT INTO quarantine(identifier, kind, record_id, version, reason, at) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(identifier) DO UPDATE SET version = excluded.version, reason = excluded.reason, at = excluded.at
            """
        ).run([
            .text(identifier.rawValue), .text(kind), .text(recordID), .integer(version), .text(reason),
            .real(now.timeIntervalSince1970),
        ])
    }

    package func releaseFromQuarantine(_ identifier: ItemIdentifier) throws {
        try connection.cached("DELETE FROM quarantine WHERE identifier = ?").run([.text(identifier.rawValue)])
    }

    package func tombstoneVersion(_ identifier: ItemIdentifier) throws -> Int64? {
        try connection.cached("SELECT version FROM tombstones WHERE identifier = ?").firstRow([
            .text(identifier.rawValue)
        ]) { $0.int64(0) }
    }

    package func setTombstone(_ identifier: ItemIdentifier, version: Int64) throws {
        try connection.cached(
            """
            INSERT INTO tombstones(identifier, version) VALUES (?, ?)
            ON CONFLICT(identifier) DO UPDATE SET version = max(version, excluded.version)
            """
        ).run([.text(identifier.rawValue), .integer(version)])
    }

    package func clearTombstone(_ identifier: ItemIdentifier) throws {
        try connection.cached("DELETE FROM tombstones WHERE identifier = ?").run([.text(identifier.rawValue)])
    }

    /// The version an item was projected from, when its owner records one as a number.
    package func storedVersion(_ identifier: ItemIdentifier) throws -> Int64? {
        try connection.cached("SELECT source_version FROM items WHERE identifier = ?")
            .firstRow([.text(identifier.rawValue)]) { $0.optionalText(0).flatMap { Int64($0) } } ?? nil
    }
}

extension SQLiteIndexReader {
    package func quarantined(account: AccountID) throws -> [QuarantinedRecord] {
        try connection.cached("SELECT kind, record_id, version, reason FROM quarantine ORDER BY kind, record_id").rows {
            row in
            QuarantinedRecord(
                account: account, kind: row.text(0), id: row.text(1), version: row.int64(2), reason: row.text(3))
        }
    }

    package func checkpoint(_ consumer: String) throws -> String? {
        guard
            case .text(let value)? = try connection.scalar(
                "SELECT position FROM checkpoints WHERE consumer = ?", [.text(consumer)])
        else {
            return nil
        }
        return value
    }

    package func rebuildsInProgress() throws -> [(kind: String, from: Int, target: Int, cursor: String?)] {
        try connection.cached(
            "SELECT kind, target_version, cursor, version FROM projections WHERE target_version IS NOT NULL ORDER BY kind"
        ).rows { row in
            (row.text(0), row.int(3), row.int(1), row.optionalText(2))
        }
    }
}
