import Foundation
import ReplicaSQLite
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
/// let engine = ProjectionEngine(store: store, projections: ProjectionSet([notesProjection]))
/// let report = try await engine.catchUp(account: "alice")
/// ```
public final class ProjectionEngine: Sendable {
    public let store: Store
    public let projections: ProjectionSet
    /// Tables of apps' own databases followed through triggers.
    public let followedTables: [FollowedTable]
    private let appDatabases = Mutex<[String: AppDatabase]>([:])
    /// Changes read and applied per transaction; a rebuild reads twenty times as many records at once.
    let batchSize: Int

    /// The checkpoint name of the record store's change log in an index.
    static let consumer = "records"
    /// The owner of the items the record store's projection makes.
    static let owner = ItemOwner.records

    public init(store: Store, projections: ProjectionSet = ProjectionSet(), followedTables: [FollowedTable] = [],
                batchSize: Int = 500) {
        self.store = store
        self.projections = projections
        self.followedTables = followedTables
        self.batchSize = batchSize
    }

    /// Applies every change not yet applied to the account's index and finishes any rebuild.
    public func catchUp(account: AccountID) async throws -> CatchUpReport {
        try await Blocking.run { [self] in try catchUpNow(account: account) }
    }

    /// Catches up every signed-in account.
    public func catchUpAllAccounts() async throws -> CatchUpReport {
        try await Blocking.run { [self] in
            try store.signedInAccounts().reduce(CatchUpReport()) { try $0 + catchUpNow(account: $1.id) }
        }
    }

    /// Follows every signed-in account's change log (and the followed tables) until cancelled: a catch-up
    /// whenever a record store changed, checked every `interval`; followed tables every second. On
    /// cancellation, one last catch-up commits what is in flight.
    ///
    /// - Parameter onReport: called after each catch-up that did something.
    public func run(every interval: Duration = .milliseconds(100),
                    onReport: @escaping @Sendable (CatchUpReport) -> Void = { _ in }) async {
        var versions: [AccountID: Int] = [:]
        var lastTables = ContinuousClock.now
        while !Task.isCancelled {
            let dueTables = !followedTables.isEmpty && ContinuousClock.now - lastTables >= .seconds(1)
            if dueTables { lastTables = .now }
            let known = versions
            if let (report, changed) = try? await Blocking.run({ [self] () -> (CatchUpReport, [AccountID: Int]) in
                var report = CatchUpReport()
                var changed = known
                for account in try store.signedInAccounts().map(\.id) {
                    let records = try store.recordsDatabase(for: account, creating: false)
                    func version() throws -> Int? {
                        try records.map { records in try records.database.readNow { try $0.scalarInt("PRAGMA data_version") ?? 0 } }
                    }
                    if try version() != known[account] || dueTables {
                        report = report + (try catchUpNow(account: account))
                        // The catch-up's own writes (pruning the log) must not look like news next time.
                        changed[account] = try version()
                    }
                }
                return (report, changed)
            }) {
                versions = changed
                if report != CatchUpReport() { onReport(report) }
            }
            try? await Task.sleep(for: interval)
        }
        if let report = try? await catchUpAllAccounts(), report != CatchUpReport() { onReport(report) }
    }

    /// The synchronous form, for callers already off the cooperative pool.
    ///
    /// - Parameter rebuildBatchLimit: stop a rebuild after this many batches (it resumes next time).
    func catchUpNow(account: AccountID, rebuildBatchLimit: Int = .max) throws -> CatchUpReport {
        var report = CatchUpReport()
        if let records = try store.recordsDatabase(for: account, creating: false) {
            let index = try store.index(named: projections.indexName, account: account)
            try planRebuilds(index: index, records: records)
            report = report + (try rebuild(index: index, records: records, batchLimit: rebuildBatchLimit))
            report = report + (try follow(index: index, records: records))
        }
        // Only signed-in accounts are followed: following never signs an account in (after a logout,
        // the app's rows of the old account must not come back).
        guard !followedTables.isEmpty, try store.signedInAccounts().contains(where: { $0.id == account }) else { return report }
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

    private func isFixed(_ table: FollowedTable, toOtherThan account: AccountID) -> Bool {
        if case .fixed(let owner) = table.account { return owner != account }
        return false
    }

    // MARK: Planning

    /// Starts a full rebuild for an index that has never followed this log (new, or rebuilt after damage),
    /// and a kind's rebuild when its projection version changed.
    private func planRebuilds(index: SearchableIndex, records: RecordsDatabase) throws {
        let lastSequence = try records.lastSequence()
        let kinds = try records.kinds()
        try index.writeNow { writer in
            let states = try writer.projectionStates()
            let fresh = try writer.checkpoint(Self.consumer) == nil
            if fresh {
                // The log may have been pruned: rebuild everything from the records, then follow from here.
                try writer.setCheckpoint(Self.consumer, String(lastSequence))
            }
            for kind in kinds {
                let version = projections.projection(for: kind).version
                let state = states[kind]
                if fresh || state == nil {
                    try writer.setProjectionState(kind, .init(version: state?.version ?? 0, targetVersion: version, cursor: nil))
                } else if let state, (state.targetVersion ?? state.version) != version {
                    try writer.setProjectionState(kind, .init(version: state.version, targetVersion: version, cursor: nil))
                }
            }
        }
    }

    // MARK: Rebuilding

    private func rebuild(index: SearchableIndex, records: RecordsDatabase, batchLimit: Int) throws -> CatchUpReport {
        var report = CatchUpReport()
        var batches = 0
        let pending = try index.writeNow { try $0.projectionStates() }.filter { $0.value.targetVersion != nil }
        for (kind, state) in pending.sorted(by: { $0.key < $1.key }) {
            var cursor = state.cursor
            let projection = projections.projection(for: kind)
            guard projection.version == state.targetVersion else { continue }
            let limit = batchSize * 20
            let clock = index.configuration.clock
            // The next batch is read from the record store and projected on another thread while this one
            // is written.
            @Sendable func read(after start: String?) throws -> (records: [Record], projected: [Projected]) {
                let batch = try records.records(kind: kind, after: start, limit: limit)
                return (batch, try Self.project(batch, { _ in projection }, now: clock()))
            }
            let start = cursor
            var upcoming = Prefetch { try read(after: start) }
            while batches < batchLimit {
                batches += 1
                let (batch, projected) = try upcoming.get()
                let done = batch.count < limit
                if !done, let last = batch.last?.id {
                    upcoming = Prefetch { try read(after: last) }
                }
                let outcome = try index.writeNow { writer -> CatchUpReport in
                    var outcome = CatchUpReport()
                    try apply(projected, writer, &outcome)
                    let next = batch.last?.id ?? cursor
                    try writer.setProjectionState(kind, done
                        ? .init(version: projection.version, targetVersion: nil, cursor: nil)
                        : .init(version: state.version, targetVersion: projection.version, cursor: next))
                    CrashPoints.reach("rebuild.beforeCommit")
                    return outcome
                }
                CrashPoints.reach("rebuild.afterCommit")
                report.rebuilt += batch.count
                report.indexed += outcome.indexed
                report.removed += outcome.removed
                report.quarantined += outcome.quarantined
                if done { break }
                cursor = batch.last?.id
            }
        }
        return report
    }

    // MARK: Following the change log

    private func follow(index: SearchableIndex, records: RecordsDatabase) throws -> CatchUpReport {
        var report = CatchUpReport()
        var position = Int64(try index.writeNow { try $0.checkpoint(Self.consumer) } ?? "0") ?? 0
        while true {
            let batch = try records.changes(after: position, limit: batchSize * 2)
            guard let last = batch.last?.0.sequence else { break }
            // Each change is applied by projecting the record as it is now; several changes of one record
            // in a batch need it once.
            var seen = Set<String>()
            let current = batch.reversed().compactMap { change, record -> Record? in
                guard let record, seen.insert(record.kind + "\u{0}" + record.id).inserted else { return nil }
                return record
            }.reversed()
            let outcome = try index.writeNow { writer -> CatchUpReport in
                var outcome = CatchUpReport()
                for kind in Set(current.map(\.kind)) {
                    try writer.noteProjectionVersion(kind, projections.projection(for: kind).version)
                }
                try apply(Self.project(Array(current), projections.projection(for:), now: writer.now), writer, &outcome)
                try writer.setCheckpoint(Self.consumer, String(last))
                CrashPoints.reach("projection.beforeCommit")
                return outcome
            }
            CrashPoints.reach("projection.afterCommit")
            report = report + outcome
            report.changesApplied += batch.count
            position = last
        }
        try records.pruneChanges(through: position)
        return report
    }

    // MARK: Following an app's table

    private func appDatabase(_ path: String) throws -> AppDatabase {
        if let database = appDatabases.withLock({ $0[path] }) { return database }
        let database = try AppDatabase(path: path)
        return appDatabases.withLock { cache in
            if let existing = cache[path] { return existing }
            cache[path] = database
            return database
        }
    }

    private func followTable(_ table: FollowedTable, account: AccountID, index: SearchableIndex) throws -> CatchUpReport {
        var report = CatchUpReport()
        let app = try appDatabase(table.database.standardizedFileURL.path)
        let triggersWereMissing = try app.installTriggers(table)
        let projection = projections.projection(for: table.kind)
        var position = try index.writeNow { try $0.checkpoint(table.consumer) }.flatMap { Int64($0) }
        if position == nil || triggersWereMissing {
            // Never followed here, or changes may have gone unrecorded: read the whole table again.
            let start = try app.lastSequence(table)
            report = report + (try scan(table, app: app, projection: projection, account: account, index: index))
            try index.writeNow { try $0.setCheckpoint(table.consumer, String(start)) }
            position = start
        }
        var checkpoint = position ?? 0
        while true {
            // Entries up to the ceiling existed before the query below, so once it comes back short every
            // one of them that concerns this account has been seen: the checkpoint may pass the others too.
            let ceiling = try app.lastSequence(table)
            let changes = try app.changes(table, account: account, after: checkpoint, limit: batchSize * 2)
            guard let lastChange = changes.last?.sequence else {
                if ceiling > checkpoint {
                    try index.writeNow { try $0.setCheckpoint(table.consumer, String(ceiling)) }
                    checkpoint = ceiling
                }
                break
            }
            let last = changes.count < batchSize * 2 ? max(lastChange, ceiling) : lastChange
            let outcome = try index.writeNow { writer -> CatchUpReport in
                var outcome = CatchUpReport()
                try writer.noteProjectionVersion(table.kind, projection.version)
                for change in changes {
                    let identifier = projection.identifier(account: account, id: change.rowID)
                    if change.isDeletion {
                        outcome.removed += try writer.delete(identifiers: [identifier], owner: table.owner)
                        try writer.setTombstone(identifier, version: change.version ?? .max)
                        try writer.releaseFromQuarantine(identifier)
                    } else if let record = try app.record(table, id: change.rowID, account: account) {
                        try applyVersioned(record, projection, writer, owner: table.owner, &outcome)
                    }
                }
                try writer.setCheckpoint(table.consumer, String(last))
                CrashPoints.reach("table.beforeCommit")
                return outcome
            }
            report = report + outcome
            report.changesApplied += changes.count
            checkpoint = last
        }
        try pruneTableLog(table, app: app)
        return report
    }

    /// Reads every row of the account in the table, and removes the items of rows no longer there.
    private func scan(_ table: FollowedTable, app: AppDatabase, projection: Projection, account: AccountID,
                      index: SearchableIndex) throws -> CatchUpReport {
        var report = CatchUpReport()
        var unseen = Set(try index.writeNow { writer in
            try writer.identifiers(ownedBy: table.owner).map(\.rawValue)
        })
        var cursor: String?
        while true {
            let rows = try app.records(table, account: account, after: cursor, limit: batchSize)
            let outcome = try index.writeNow { writer -> CatchUpReport in
                var outcome = CatchUpReport()
                for record in rows {
                    unseen.remove(projection.identifier(account: account, id: record.id).rawValue)
                    try applyVersioned(record, projection, writer, owner: table.owner, &outcome)
                }
                return outcome
            }
            report = report + outcome
            guard rows.count == batchSize else { break }
            cursor = rows.last?.id
        }
        let gone = unseen
        report.removed += try index.writeNow { writer in try writer.delete(identifiers: gone.map(ItemIdentifier.init(rawValue:)), owner: table.owner) }
        return report
    }

    /// Applies a row of a followed table unless a deletion or the index already holds a newer version.
    private func applyVersioned(_ record: Record, _ projection: Projection, _ writer: IndexWriter, owner: ItemOwner,
                                _ outcome: inout CatchUpReport) throws {
        let identifier = projection.identifier(account: record.account, id: record.id)
        if let deleted = try writer.tombstoneVersion(identifier), deleted >= record.version { return }
        if let held = try writer.storedVersion(identifier), held > record.version { return }
        try writer.clearTombstone(identifier)
        if record.isDeleted {
            try writer.setTombstone(identifier, version: record.version)
        }
        try apply(record, projection, writer, owner: owner, &outcome)
    }

    /// Drops the table's change-log entries that every signed-in account following it has applied.
    private func pruneTableLog(_ table: FollowedTable, app: AppDatabase) throws {
        var lowest = Int64.max
        for account in try store.signedInAccounts().map(\.id) where !isFixed(table, toOtherThan: account) {
            guard let index = try store.existingIndex(named: projections.indexName, account: account) else { return }
            guard let position = try index.writeNow({ try $0.checkpoint(table.consumer) }).flatMap({ Int64($0) }) else { return }
            lowest = min(lowest, position)
        }
        if lowest != .max { try app.prune(table, through: lowest) }
    }

    /// What a record becomes: its item, or the record itself (with its projection) when it is deleted or
    /// does not fit its projection (then ``apply(_:_:_:owner:_:)`` removes or quarantines it).
    /// The record an item was projected from, to quarantine it if the item cannot be written.
    struct RecordReference: Sendable {
        var account: AccountID
        var kind: String
        var id: String
        var version: Int64
    }

    enum Projected: Sendable {
        case item(SearchableItem, ItemOrigin, from: RecordReference)
        case record(Record, Projection)
    }

    /// Projects records without touching the index, so that a rebuild can do it on another thread.
    static func project(_ records: [Record], _ projection: (String) -> Projection, now: Date) throws -> [Projected] {
        try records.map { record in
            let projection = projection(record.kind)
            guard !record.isDeleted else { return .record(record, projection) }
            do {
                let item = try projection.item(for: record, now: now)
                try item.validate()
                return .item(item, ItemOrigin(owner: Self.owner, version: String(record.version)), from: RecordReference(account: record.account, kind: record.kind, id: record.id, version: record.version))
            } catch let error as ReplicaError where error.code == .invalidItem {
                return .record(record, projection)
            }
        }
    }

    /// Makes the index hold exactly the projection of these records as they are now (each record once):
    /// deletions and records that do not fit first, then the items together, prepared on a second core.
    private func apply(_ projected: [Projected], _ writer: IndexWriter, _ outcome: inout CatchUpReport) throws {
        var items: [(SearchableItem, ItemOrigin)] = []
        items.reserveCapacity(projected.count)
        let anyQuarantined = try writer.hasQuarantinedRecords()
        var sources: [ItemIdentifier: RecordReference] = [:]
        for entry in projected {
            switch entry {
            case .item(let item, let origin, let source):
                items.append((item, origin))
                sources[item.uniqueIdentifier] = source
                if anyQuarantined { try writer.releaseFromQuarantine(item.uniqueIdentifier) }
            case .record(let record, let projection):
                try apply(record, projection, writer, &outcome)
            }
        }
        let refusedBefore = writer.refusedOwnership.count
        try writer.index(contentsOf: items)
        let refused = writer.refusedOwnership[refusedBefore...]
        for refusal in refused {
            guard let source = sources[refusal.identifier] else { continue }
            try quarantineRefused(refusal, from: source, writer, &outcome)
        }
        outcome.indexed += items.count - refused.count
    }

    /// Records an item the writer refused because another owner made one under the same identifier: the
    /// record waits in quarantine, and `status` says why.
    private func quarantineRefused(_ refusal: (identifier: ItemIdentifier, writer: ItemOwner, owner: ItemOwner), from source: RecordReference,
                                   _ writer: IndexWriter, _ outcome: inout CatchUpReport) throws {
        let reason = "its identifier is taken by an item another owner made (\(refusal.owner)); choose an identifier template that cannot collide"
        try writer.quarantine(refusal.identifier, kind: source.kind, recordID: source.id, version: source.version, reason: reason)
        outcome.quarantined.append(QuarantinedRecord(account: source.account, kind: source.kind, id: source.id,
                                                     version: source.version, reason: reason))
    }

    /// Makes the index hold exactly the projection of one record as it is now.
    private func apply(_ record: Record, _ projection: Projection, _ writer: IndexWriter, owner: ItemOwner = ProjectionEngine.owner,
                       _ outcome: inout CatchUpReport) throws {
        let identifier = projection.identifier(account: record.account, id: record.id)
        if record.isDeleted {
            outcome.removed += try writer.delete(identifiers: [identifier], owner: owner)
            try writer.releaseFromQuarantine(identifier)
            return
        }
        do {
            let item = try projection.item(for: record, now: writer.now)
            try item.validate()
            let origin = ItemOrigin(owner: owner, version: String(record.version))
            if try writer.index(item, origin: origin) == .notOwned, let refusal = writer.refusedOwnership.last {
                try quarantineRefused(refusal, from: RecordReference(account: record.account, kind: record.kind, id: record.id,
                                                                     version: record.version), writer, &outcome)
                return
            }
            try writer.releaseFromQuarantine(identifier)
            outcome.indexed += 1
        } catch let error as ReplicaError where error.code == .invalidItem {
            // The older item would be stale: it goes, and the record waits in quarantine for a newer version.
            outcome.removed += try writer.delete(identifiers: [identifier], owner: owner)
            try writer.quarantine(identifier, kind: record.kind, recordID: record.id, version: record.version, reason: error.message)
            outcome.quarantined.append(QuarantinedRecord(account: record.account, kind: record.kind, id: record.id,
                                                         version: record.version, reason: error.message))
        }
    }
}
