import Foundation

// Planning and running rebuilds: a new index, or a projection whose version changed, is rebuilt from
// the records in batches that resume where they stopped.
extension ProjectionEngine {
    // MARK: Planning

    /// Starts a full rebuild for an index that has never followed this log (new, or rebuilt after damage),
    /// and a kind's rebuild when its projection version changed.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    func planRebuilds(index: SearchableIndex, records: any RecordStorage) throws {
        let lastSequence = try records.lastSequence()
        let kinds = try records.kinds()
        try index.writeNow { writer in
            let states = try writer.projectionStates()
            let fresh = try writer.checkpoint(Self.consumer) == nil
            if fresh {
                // The log may have been pruned: rebuild everything from the records, then follow from here.
                // The rebuild projects every record: no item can be missing that a comparison would find.
                try writer.setCheckpoint(Self.consumer, String(lastSequence))
                try writer.setMeta(Self.missingItemsCheckedKey, "1")
            }
            for kind in kinds {
                let version = projections.projection(for: kind).version
                let state = states[kind]
                if fresh || state == nil {
                    try writer.setProjectionState(
                        kind, .init(version: state?.version ?? 0, targetVersion: version, cursor: nil))
                } else if let state, version > (state.targetVersion ?? state.version) {
                    // Only a newer version rebuilds. An older build of the app (still installed beside a
                    // newer one, or run again after a downgrade) leaves the newer items and any rebuild in
                    // progress alone, and projects the changes it applies with its own version: two builds
                    // in the field never rebuild back and forth.
                    try writer.setProjectionState(
                        kind, .init(version: state.version, targetVersion: version, cursor: nil))
                }
            }
        }
    }

    // MARK: Rebuilding

    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    func rebuild(index: SearchableIndex, records: any RecordStorage, batchLimit: Int) throws -> CatchUpReport {
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
                    try writer.setProjectionState(
                        kind,
                        done
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
}
