import Foundation
import ReplicaSQLite

/// A source with what the watcher last said about it.
public struct SourceStatus: Sendable {
    /// The source as the store keeps it.
    public var definition: SourceDefinition
    /// What the source last reported doing; ``SourceState/idle`` when it has reported nothing.
    public var state: SourceState
    /// The detail the source gave with its state, if any.
    public var detail: String?
    /// The last failure the source reported, if any.
    public var lastError: String?
    /// When the last failure was reported.
    public var lastErrorAt: Date?
    /// When the source last committed a batch.
    public var lastCommit: Date?
    /// Changes seen but not committed yet.
    public var pending: Int
    /// Entries recorded as skipped, by reason.
    public var skipped: [(reason: String, count: Int)]
}

extension Store {
    /// Adds a source to a signed-in account of the store, naming it `<kind>-<n>` when it has no name.
    ///
    /// - Returns: the definition as stored, with its name.
    /// - Throws: `ReplicaError` for a name already taken or not valid, or with code `accountNotSignedIn`
    ///   when the account is not signed in.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    @discardableResult
    public func addSource(_ definition: SourceDefinition) throws -> SourceDefinition {
        try definition.account.validate()
        try Self.validateIndexName(definition.indexName)
        return try catalog.database.writeNow { connection in
            // In the same transaction as the insert: a source is never added to an account signed out meanwhile.
            guard try catalog.account(definition.account, connection)?.state == .signedIn else {
                throw ReplicaError(.accountNotSignedIn,
                                   "account '\(definition.account)' is not signed in; sign it in first (Store.signIn, or `replica accounts sign-in \(definition.account)`)")
            }
            var definition = definition
            if definition.name.isEmpty {
                let taken = Set(try connection.cached("SELECT name FROM sources").rows { $0.text(0) })
                var number = 1
                while taken.contains("\(definition.kind.rawValue)-\(number)") { number += 1 }
                definition.name = "\(definition.kind.rawValue)-\(number)"
            }
            try SourceDefinition.validateName(definition.name)
            if try connection.scalarInt("SELECT count(*) FROM sources WHERE name = ?", [.text(definition.name)]) != 0 {
                throw ReplicaError(.invalidArgument, "the store already has a source named '\(definition.name)'; choose another --name")
            }
            try connection.execute("INSERT INTO sources(name, kind, account, index_name, settings, added) VALUES (?, ?, ?, ?, ?, ?)",
                                   [.text(definition.name), .text(definition.kind.rawValue), .text(definition.account.rawValue),
                                    .text(definition.indexName), .text(definition.settings.serialized()), .real(Date().timeIntervalSince1970)])
            try connection.execute("INSERT INTO source_status(name, state, updated) VALUES (?, 'idle', ?)",
                                   [.text(definition.name), .real(Date().timeIntervalSince1970)])
            return definition
        }
    }

    /// The sources of signed-in accounts, by name.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    public func sources() throws -> [SourceDefinition] {
        try catalog.database.readNow { connection in
            try connection.cached("""
                SELECT s.name, s.kind, s.account, s.index_name, s.settings FROM sources s
                JOIN accounts a ON a.id = s.account WHERE a.state = 'signedIn' ORDER BY s.name
                """).rows { row in
                SourceDefinition(name: row.text(0), kind: SourceKind(rawValue: row.text(1)), account: AccountID(row.text(2)),
                                 indexName: row.text(3), settings: (try? JSON.parse(row.text(4))) ?? .object([]))
            }
        }
    }

    /// The source with this name, if the store has it.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    public func source(named name: String) throws -> SourceDefinition? {
        try sources().first { $0.name == name }
    }

    /// Removes a source and every item, entry and checkpoint it made.
    ///
    /// - Throws: `ReplicaError` with code `notFound` when there is no such source.
    public func removeSource(named name: String) async throws {
        guard let definition = try await source(named: name) else {
            throw ReplicaError(.notFound, "the store has no source named '\(name)'; 'replica sources list' shows them")
        }
        if let index = try await existingIndex(named: definition.indexName, account: definition.account) {
            try await index.write { writer in try writer.forgetSource(named: definition.name, owner: definition.owner, checkpoint: definition.owner.rawValue) }
        }
        try await Blocking.run { [self] in
            try catalog.database.writeNow { connection in
                try connection.execute("DELETE FROM sources WHERE name = ?", [.text(name)])
            }
        }
    }

    /// Each source of a signed-in account with its last reported state.
    public func sourceStatuses() async throws -> [SourceStatus] {
        var statuses: [SourceStatus] = []
        for definition in try await sources() {
            let row = try await catalog.database.read { connection in
                try connection.cached("SELECT state, detail, last_error, last_error_at, last_commit, pending FROM source_status WHERE name = ?")
                    .firstRow([.text(definition.name)]) { row in
                        (SourceState(rawValue: row.text(0)), row.optionalText(1), row.optionalText(2),
                         row.optionalDouble(3).map(Date.init(timeIntervalSince1970:)),
                         row.optionalDouble(4).map(Date.init(timeIntervalSince1970:)), row.int(5))
                    }
            }
            var skipped: [(String, Int)] = []
            if let index = try await existingIndex(named: definition.indexName, account: definition.account) {
                let name = definition.name
                skipped = try await index.read { try $0.skippedEntries(name) }
            }
            statuses.append(SourceStatus(definition: definition, state: row?.0 ?? .idle, detail: row?.1, lastError: row?.2,
                                         lastErrorAt: row?.3, lastCommit: row?.4, pending: row?.5 ?? 0,
                                         skipped: skipped.map { (reason: $0.0, count: $0.1) }))
        }
        return statuses
    }

    // MARK: Reports from running sources (best effort: a report that cannot be written is not an error)

    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    func reportSourceState(_ name: String, _ state: SourceState, detail: String?) {
        try? catalog.database.writeNow { connection in
            try connection.execute("UPDATE source_status SET state = ?, detail = ?, updated = ? WHERE name = ?",
                                   [.text(state.rawValue), SQLValue(detail), .real(Date().timeIntervalSince1970), .text(name)])
        }
    }

    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    func reportSourceError(_ name: String, _ message: String, at date: Date) {
        try? catalog.database.writeNow { connection in
            try connection.execute("UPDATE source_status SET last_error = ?, last_error_at = ?, updated = ? WHERE name = ?",
                                   [.text(message), .real(date.timeIntervalSince1970), .real(Date().timeIntervalSince1970), .text(name)])
        }
    }

    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    func reportSourceCommit(_ name: String, at date: Date) {
        try? catalog.database.writeNow { connection in
            try connection.execute("UPDATE source_status SET last_commit = ?, pending = 0, updated = ? WHERE name = ?",
                                   [.real(date.timeIntervalSince1970), .real(Date().timeIntervalSince1970), .text(name)])
        }
    }

    /// Records how many changes a source has seen but not committed yet.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    public func reportSourcePending(_ name: String, _ count: Int) {
        try? catalog.database.writeNow { connection in
            try connection.execute("UPDATE source_status SET pending = ?, updated = ? WHERE name = ?",
                                   [.integer(Int64(count)), .real(Date().timeIntervalSince1970), .text(name)])
        }
    }
}
