import Foundation

// Following the record store's change log from the index's checkpoint.
extension ProjectionEngine {
    // MARK: Following the change log

    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    func follow(index: SearchableIndex, records: any RecordStorage) throws -> CatchUpReport {
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
}
