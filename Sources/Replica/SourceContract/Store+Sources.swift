public import Foundation

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
    package func addSource(_ definition: SourceDefinition) throws -> SourceDefinition {
        try definition.account.validate()
        try Self.validateIndexName(definition.indexName)
        return try catalog.addSource(definition, at: Date())
    }

    /// The sources of signed-in accounts, by name.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    package func sources() throws -> [SourceDefinition] {
        try catalog.sources()
    }

    /// The source with this name, if the store has it.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    package func source(named name: String) throws -> SourceDefinition? {
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
            try await index.write { writer in
                try writer.forgetSource(
                    named: definition.name, owner: definition.owner, checkpoint: definition.owner.rawValue)
            }
        }
        try await Blocking.run { [catalog] in try catalog.removeSource(named: name) }
    }

    /// Each source of a signed-in account with its last reported state.
    public func sourceStatuses() async throws -> [SourceStatus] {
        var statuses: [SourceStatus] = []
        for definition in try await sources() {
            let name = definition.name
            let report = try await Blocking.run { [catalog] in try catalog.sourceReport(named: name) }
            var skipped: [(String, Int)] = []
            if let index = try await existingIndex(named: definition.indexName, account: definition.account) {
                skipped = try await index.read { try $0.skippedEntries(name) }
            }
            statuses.append(
                SourceStatus(
                    definition: definition, state: report?.state ?? .idle, detail: report?.detail,
                    lastError: report?.lastError, lastErrorAt: report?.lastErrorAt, lastCommit: report?.lastCommit,
                    pending: report?.pending ?? 0,
                    skipped: skipped.map { (reason: $0.0, count: $0.1) }))
        }
        return statuses
    }

    // MARK: Reports from running sources (best effort: a report that cannot be written is not an error)

    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    func reportSourceState(_ name: String, _ state: SourceState, detail: String?) {
        try? catalog.setSourceState(name, state, detail: detail, at: Date())
    }

    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    func reportSourceError(_ name: String, _ message: String, at date: Date) {
        try? catalog.setSourceError(name, message, failedAt: date, at: Date())
    }

    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    func reportSourceCommit(_ name: String, at date: Date) {
        try? catalog.setSourceCommit(name, committedAt: date, at: Date())
    }

    /// Records how many changes a source has seen but not committed yet.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    package func reportSourcePending(_ name: String, _ count: Int) {
        try? catalog.setSourcePending(name, count, at: Date())
    }
}
