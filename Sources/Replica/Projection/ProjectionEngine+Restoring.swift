import Foundation

// Items of live records that went missing from the index while their records did not change: found by
// comparing once, and projected again.
extension ProjectionEngine {
    /// The index fact that says its record items were compared with the record store.
    static let missingItemsCheckedKey = "records.missingItemsChecked"

    /// Projects again each live record (not deleted, readable by its account) whose item is neither in
    /// the index nor quarantined, once per index: builds before issue 19 let a read (`replica query
    /// --fetch`) remove record items, and the change log, which only says what changed, could not bring
    /// them back. Since then, hydration has each record whose item it removes projected again at the next
    /// catch-up, so this comparison is not repeated. A new or rebuilt index skips it: its rebuild projects
    /// every record.
    ///
    /// The comparison reads each record's id (not its fields) and looks its item's identifier up in the
    /// index: at 20,000 records, 0.1 s of a sync, where reading whole records took 0.9 s (debug build). It
    /// waits until no rebuild is pending, which would project the same records anyway.
    func restoreMissingItems(index: SearchableIndex, records: any RecordStorage) throws -> CatchUpReport {
        let pending = try index.writeNow { writer -> Bool in
            try writer.meta(Self.missingItemsCheckedKey) == nil
                && !writer.projectionStates().values.contains { $0.targetVersion != nil }
        }
        guard pending else { return CatchUpReport() }
        var report = CatchUpReport()
        let limit = batchSize * 20
        for kind in try records.kinds() {
            let projection = projections.projection(for: kind)
            var cursor: String?
            while true {
                let batch = try records.recordIDs(kind: kind, after: cursor, limit: limit)
                cursor = batch.last?.id
                let live = batch.filter(\.live).map(\.id)
                let account = records.account
                let missing = try index.writeNow { writer in
                    try writer.absent(live.map { projection.identifier(account: account, id: $0) })
                }
                if !missing.isEmpty {
                    // Only the records whose items are missing are read whole.
                    let found = try live.filter { missing.contains(projection.identifier(account: account, id: $0)) }
                        .compactMap { try records.record(kind: kind, id: $0) }
                    report =
                        report
                        + (try index.writeNow { writer -> CatchUpReport in
                            var outcome = CatchUpReport()
                            let projected = try Self.project(found, { _ in projection }, now: writer.now).filter {
                                entry in
                                // An item whose lifetime is over stays purged.
                                if case .item(let item, _, _) = entry {
                                    return item.expirationDate.map { $0 > writer.now } ?? true
                                }
                                return true
                            }
                            try apply(projected, writer, &outcome)
                            return outcome
                        })
                }
                if batch.count < limit { break }
            }
        }
        try index.writeNow { try $0.setMeta(Self.missingItemsCheckedKey, "1") }
        return report
    }
}

extension Record {
    /// Whether the account whose index the record goes to may read it. One it may not read is kept out
    /// of that index like a deleted one: nothing of it (words, title, vectors) is there to show.
    var isReadableByItsAccount: Bool { isReadable(by: account) }
}
