import Foundation
import Synchronization

// Following an app's own SQLite tables through the triggers replica installs.
extension ProjectionEngine {
    // MARK: Following an app's table

    func appDatabase(_ table: FollowedTable) throws -> any FollowedDatabase {
        let key = table.isOnPostgres ? table.database.absoluteString : table.database.standardizedFileURL.path
        if let database = appDatabases.withLock({ $0[key] }) { return database }
        let database = try table.openDatabase()
        return appDatabases.withLock { cache in
            if let existing = cache[key] { return existing }
            cache[key] = database
            return database
        }
    }

    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    func followTable(_ table: FollowedTable, account: AccountID, index: SearchableIndex) throws -> CatchUpReport {
        var report = CatchUpReport()
        let app = try appDatabase(table)
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
                // The rows as they are now, read together.
                let rows = try app.records(table, ids: changes.filter { !$0.isDeletion }.map(\.rowID), account: account)
                for change in changes {
                    let identifier = projection.identifier(account: account, id: change.rowID)
                    if change.isDeletion {
                        outcome.removed += try writer.delete(identifiers: [identifier], owner: table.owner)
                        try writer.setTombstone(identifier, version: change.version ?? .max)
                        try writer.releaseFromQuarantine(identifier)
                    } else if let record = rows[change.rowID] {
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
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    func scan(
        _ table: FollowedTable, app: any FollowedDatabase, projection: Projection, account: AccountID,
        index: SearchableIndex
    ) throws -> CatchUpReport {
        var report = CatchUpReport()
        var unseen = Set(
            try index.writeNow { writer in
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
        report.removed += try index.writeNow { writer in
            try writer.delete(identifiers: gone.map(ItemIdentifier.init(rawValue:)), owner: table.owner)
        }
        return report
    }

    /// Applies a row of a followed table unless a deletion or the index already holds a newer version.
    func applyVersioned(
        _ record: Record, _ projection: Projection, _ writer: any IndexWriter, owner: ItemOwner,
        _ outcome: inout CatchUpReport
    ) throws {
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
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    func pruneTableLog(_ table: FollowedTable, app: any FollowedDatabase) throws {
        var lowest = Int64.max
        for account in try store.signedInAccounts().map(\.id) where !isFixed(table, toOtherThan: account) {
            guard let index = try store.existingIndex(named: projections.indexName, account: account) else { return }
            guard let position = try index.writeNow({ try $0.checkpoint(table.consumer) }).flatMap({ Int64($0) }) else {
                return
            }
            lowest = min(lowest, position)
        }
        if lowest != .max { try app.prune(table, through: lowest) }
    }

    /// What a record becomes: its item, or the record itself (with its projection) when it is deleted or
    /// does not fit its projection (then ``apply(_:_:_:owner:_:)`` removes or quarantines it).
}
