import Foundation
import ReplicaCore

extension RecordStore {
    /// Waits until every record written to `account` before the call is in its index: projected by the
    /// projection engine of whichever process runs it (`replica watch`, or an engine of the app's own),
    /// and readable by this store's searches. An app server that writes records and must show them in
    /// its next search calls this in between.
    ///
    /// The account's change log is the truth: the wait reads the log's last entry, then the index's
    /// checkpoint until it reaches that entry. On PostgreSQL the projection engine's commits notify the
    /// waiter (`LISTEN replica_projected`; one connection for the wait, opened only when the first look
    /// finds the index behind), so the wait ends within a round trip of the commit; a notification is
    /// only a prompt to look again, and a lost one costs at most 250 ms. On SQLite, which has no
    /// notifications, the checkpoint is looked at again after 2 ms, doubling to 50 ms.
    ///
    /// For example:
    /// ```swift
    /// try await store.records.write([Record(account: "alice", kind: "note", id: "42", version: 8, fields: ["title": "Launch plan"])])
    /// if try await store.records.waitUntilSearchable(account: "alice", timeout: .seconds(2)) {
    ///     let found = try await store.search(SearchQuery("launch"))
    ///     print(found.count)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - account: whose records.
    ///   - indexName: the index the records are projected into (the projection set's, `Store.defaultIndexName` by default).
    ///   - timeout: the longest wait.
    /// - Returns: whether they were searchable within `timeout` (`false`: no engine applied them in time).
    /// - Throws: ``ReplicaError`` with code `accountNotSignedIn` for an account that is not signed in, or
    ///   a storage error.
    public func waitUntilSearchable(
        account: AccountID, indexName: String = Store.defaultIndexName,
        timeout: Duration = .seconds(10)
    ) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        try await Blocking.run { [store] in _ = try store.requireSignedIn(account) }
        guard let records = try await store.recordStorage(for: account, creating: false) else { return true }
        let target = try await Blocking.run { try records.lastSequence() }
        let index = try await store.index(named: indexName, account: account)
        func projected() async throws -> Bool {
            let checkpoint = try await index.read { try $0.checkpoint(ProjectionEngine.consumer) }
            return (checkpoint.flatMap { Int64($0) } ?? 0) >= target
        }
        if target == 0 { return true }
        if try await projected() { return true }

        // Listening first, then looking: a commit between the two is seen by the look, one after it is heard.
        let commits = try await store.home.projectionCommits()
        while true {
            if try await projected() { return true }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            try await commits.next(within: left)
        }
    }
}
