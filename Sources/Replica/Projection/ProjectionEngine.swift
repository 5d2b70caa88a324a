import Foundation
import Synchronization

/// What one catch-up did.
public struct CatchUpReport: Sendable, Equatable {
    /// Change-log entries applied.
    public var changesApplied = 0
    /// Items written (new or updated).
    public var indexed = 0
    /// Items removed because their record was deleted or could no longer be projected.
    public var removed = 0
    /// Items rebuilt because their kind's projection version changed.
    public var rebuilt = 0
    /// Records that could not be projected this time.
    public var quarantined: [QuarantinedRecord] = []
    /// Followed tables that could not be read (a schema that changed under them, a missing file); the
    /// rest went on.
    public var problems: [String] = []

    /// Creates an empty report: nothing done.
    public init() {}

    static func + (lhs: Self, rhs: Self) -> Self {
        var sum = lhs
        sum.changesApplied += rhs.changesApplied
        sum.indexed += rhs.indexed
        sum.removed += rhs.removed
        sum.rebuilt += rhs.rebuilt
        sum.quarantined += rhs.quarantined
        sum.problems += rhs.problems
        return sum
    }
}

/// Follows each account's change log from a checkpoint and keeps its index equal to the projection of
/// its records.
///
/// The checkpoint lives in the index file and advances in the same transaction as the writes it caused,
/// so killing the process at any instant and catching up again gives exactly the index an uninterrupted
/// run would have built. Each change is applied by projecting the record as it is now, so replaying any
/// stretch of the log changes nothing. When a kind's projection version changes, its items are rebuilt
/// in batches, resumably, each item replaced in place — searches keep finding the old item until then.
///
/// For example:
/// ```swift
/// let notesProjection = Projection(kind: "note", attributes: [(.title, ["title"]), (.textContent, ["body"])])
/// let engine = ProjectionEngine(store: store, projections: ProjectionSet([notesProjection], indexName: "Notes"))
/// let report = try await engine.catchUp(account: "alice")
/// ```
public final class ProjectionEngine: Sendable {
    /// The store whose accounts' indexes the engine keeps up to date.
    public let store: Store
    /// How records become items, and the index they go into.
    public let projections: ProjectionSet
    /// Tables of apps' own databases followed through triggers.
    public let followedTables: [FollowedTable]
    let appDatabases = Mutex<[String: any FollowedDatabase]>([:])
    /// Changes read and applied per transaction; a rebuild reads twenty times as many records at once.
    let batchSize: Int

    /// The checkpoint name of the record store's change log in an index.
    static let consumer = "records"
    /// The owner of the items the record store's projection makes.
    static let owner = ItemOwner.records

    /// Creates an engine; it does nothing until asked to catch up.
    ///
    /// - Parameters:
    ///   - store: the store whose accounts' record stores and indexes it works on.
    ///   - projections: how records become items, and the index they go into.
    ///   - followedTables: tables of apps' own databases to follow as well as the record stores.
    ///   - batchSize: the changes read and applied per transaction; a rebuild reads twenty times as many records
    ///     at once.
    public init(
        store: Store, projections: ProjectionSet, followedTables: [FollowedTable] = [],
        batchSize: Int = 500
    ) {
        self.store = store
        self.projections = projections
        self.followedTables = followedTables
        self.batchSize = batchSize
    }

    /// Applies every change not yet applied to the account's index and finishes any rebuild.
    ///
    /// - Throws: `ReplicaError` with code `accountNotSignedIn` for an account that is not signed in: it
    ///   has nothing to catch up, and saying nothing would hide a mistake.
    @discardableResult
    public func catchUp(account: AccountID) async throws -> CatchUpReport {
        guard try await store.signedInAccounts().contains(where: { $0.id == account }) else {
            throw ReplicaError(
                .accountNotSignedIn,
                "account '\(account)' is not signed in: there is nothing to catch up. Sign it in first")
        }
        return try await Blocking.run(IndexLoad.carried { [self] in try catchUpNow(account: account) })
    }

    /// Catches up every signed-in account.
    @discardableResult
    public func catchUpAllAccounts() async throws -> CatchUpReport {
        try await Blocking.run(
            IndexLoad.carried { [self] in
                try store.signedInAccounts().reduce(CatchUpReport()) { try $0 + catchUpNow(account: $1.id) }
            })
    }

    /// Follows every signed-in account's change log (and the followed tables) until cancelled: a catch-up
    /// whenever a record store changed, checked every `interval`; followed tables every second, and a
    /// followed PostgreSQL table as soon as its trigger's `NOTIFY replica_changes` arrives (the log's
    /// numbers stay the truth: a notification only says when to look). On cancellation, one last
    /// catch-up commits what is in flight. The first catch-up, which applies whatever changed while no
    /// engine followed (all of an app's records, the first time), is written as a load
    /// (``Store/load(accounts:isolation:_:)``), for the ranking lists to be built once, after it:
    /// `replica watch` builds them when it ends; an app that runs the engine itself calls
    /// ``Store/rebuildStaleRankingLists(accounts:minimumItems:building:)`` now and then, as the watcher does.
    ///
    /// A catch-up that fails is tried again at the next check; `onError` hears of it once per failure
    /// streak (and again when the error changes), never silently.
    ///
    /// - Parameters:
    ///   - interval: how often the record stores are checked for changes.
    ///   - onReport: called after each catch-up that did something.
    ///   - onError: called when a catch-up fails, with the error.
    public func run(
        every interval: Duration = .milliseconds(100),
        onReport: @escaping @Sendable (CatchUpReport) -> Void = { _ in },
        onError: @escaping @Sendable (any Error) -> Void = { _ in }
    ) async {
        var versions: [AccountID: Int] = [:]
        var lastTables = ContinuousClock.now
        var lastFailure: String?
        let listeners = FollowedDatabases.listeners(for: followedTables)
        var notified = false
        var isFirstPass = true
        func failed(_ error: any Error) {
            let description = String(describing: error)
            if description != lastFailure { onError(error) }
            lastFailure = description
        }
        while !Task.isCancelled {
            let dueTables = !followedTables.isEmpty && (notified || ContinuousClock.now - lastTables >= .seconds(1))
            notified = false
            if dueTables { lastTables = .now }
            let known = versions
            let catchUp: @Sendable () throws -> (CatchUpReport, [AccountID: Int]) = { [self] in
                var report = CatchUpReport()
                var changed = known
                for account in try store.signedInAccounts().map(\.id) {
                    let records = try store.recordStorage(for: account, creating: false)
                    func version() throws -> Int? {
                        try records.map { try $0.dataVersion() }
                    }
                    if try version() != known[account] || dueTables {
                        report = report + (try catchUpNow(account: account))
                        // The catch-up's own writes (pruning the log) must not look like news next time.
                        changed[account] = try version()
                    }
                }
                return (report, changed)
            }
            do {
                // The first pass applies what changed while nothing followed (an app's first records, a
                // whole import): as a load, as `records import` writes, its lists are built once after it.
                // Tried as a load once: a first pass that fails (the record store unreadable for a while)
                // is not a load every `interval`, each ending with every index's vocabulary settled.
                let asLoad = isFirstPass
                isFirstPass = false
                let (report, changed) =
                    asLoad
                    ? try await store.load { try await Blocking.run(IndexLoad.carried(catchUp)) }
                    : try await Blocking.run(catchUp)
                versions = changed
                lastFailure = nil
                if report != CatchUpReport() { onReport(report) }
            } catch {
                failed(error)
            }
            if listeners.isEmpty {
                try? await Task.sleep(for: interval)
            } else {
                // The first waits out the interval; any other is only asked.
                notified =
                    (try? await Blocking.run {
                        listeners.enumerated().reduce(false) { heard, listener in
                            listener.element.wait(upTo: listener.offset == 0 ? interval : .zero) || heard
                        }
                    }) ?? false
            }
        }
        do {
            let report = try await catchUpAllAccounts()
            if report != CatchUpReport() { onReport(report) }
        } catch {
            failed(error)
        }
    }

    /// The synchronous form, for callers already off the cooperative pool.
    ///
    /// - Parameter rebuildBatchLimit: stop a rebuild after this many batches (it resumes next time).
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    func catchUpNow(account: AccountID, rebuildBatchLimit: Int = .max) throws -> CatchUpReport {
        var report = CatchUpReport()
        if let records = try store.recordStorage(for: account, creating: false) {
            let index = try store.index(named: projections.indexName, account: account)
            try planRebuilds(index: index, records: records)
            report = report + (try rebuild(index: index, records: records, batchLimit: rebuildBatchLimit))
            report = report + (try follow(index: index, records: records))
            report = report + (try restoreMissingItems(index: index, records: records))
        }
        // Only signed-in accounts are followed: following never signs an account in (after a logout,
        // the app's rows of the old account must not come back).
        guard !followedTables.isEmpty, try store.signedInAccounts().contains(where: { $0.id == account }) else {
            return report
        }
        let index = try store.index(named: projections.indexName, account: account)
        for table in followedTables where !isFixed(table, toOtherThan: account) {
            do {
                report = report + (try followTable(table, account: account, index: index))
            } catch let problem as FollowProblem {
                report.problems.append(problem.description)
            } catch let error as ReplicaError where error.code == .notFound {
                report.problems.append(error.message)
            }
        }
        return report
    }

    func isFixed(_ table: FollowedTable, toOtherThan account: AccountID) -> Bool {
        if case .fixed(let owner) = table.account { return owner != account }
        return false
    }

}
