import Foundation

// What a record becomes in the index: projecting it, and writing, removing or quarantining its item.
extension ProjectionEngine {
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
            guard !record.isDeleted, record.isReadableByItsAccount else { return .record(record, projection) }
            do {
                let item = try projection.item(for: record, now: now)
                try item.validate()
                return .item(
                    item, ItemOrigin(owner: Self.owner, version: String(record.version)),
                    from: RecordReference(
                        account: record.account, kind: record.kind, id: record.id, version: record.version))
            } catch let error as ReplicaError where error.code == .invalidItem {
                return .record(record, projection)
            }
        }
    }

    /// Makes the index hold exactly the projection of these records as they are now (each record once):
    /// deletions and records that do not fit first, then the items together, prepared on a second core.
    func apply(_ projected: [Projected], _ writer: any IndexWriter, _ outcome: inout CatchUpReport) throws {
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
    func quarantineRefused(
        _ refusal: (identifier: ItemIdentifier, writer: ItemOwner, owner: ItemOwner), from source: RecordReference,
        _ writer: any IndexWriter, _ outcome: inout CatchUpReport
    ) throws {
        let reason =
            "its identifier is taken by an item another owner made (\(refusal.owner)); choose an identifier template that cannot collide"
        try writer.quarantine(
            refusal.identifier, kind: source.kind, recordID: source.id, version: source.version, reason: reason)
        outcome.quarantined.append(
            QuarantinedRecord(
                account: source.account, kind: source.kind, id: source.id,
                version: source.version, reason: reason))
    }

    /// Makes the index hold exactly the projection of one record as it is now.
    func apply(
        _ record: Record, _ projection: Projection, _ writer: any IndexWriter,
        owner: ItemOwner = ProjectionEngine.owner,
        _ outcome: inout CatchUpReport
    ) throws {
        let identifier = projection.identifier(account: record.account, id: record.id)
        if record.isDeleted || !record.isReadableByItsAccount {
            outcome.removed += try writer.delete(identifiers: [identifier], owner: owner)
            try writer.releaseFromQuarantine(identifier)
            return
        }
        do {
            let item = try projection.item(for: record, now: writer.now)
            try item.validate()
            let origin = ItemOrigin(owner: owner, version: String(record.version))
            if try writer.index(item, origin: origin) == .notOwned, let refusal = writer.refusedOwnership.last {
                try quarantineRefused(
                    refusal,
                    from: RecordReference(
                        account: record.account, kind: record.kind, id: record.id,
                        version: record.version), writer, &outcome)
                return
            }
            try writer.releaseFromQuarantine(identifier)
            outcome.indexed += 1
        } catch let error as ReplicaError where error.code == .invalidItem {
            // The older item would be stale: it goes, and the record waits in quarantine for a newer version.
            outcome.removed += try writer.delete(identifiers: [identifier], owner: owner)
            try writer.quarantine(
                identifier, kind: record.kind, recordID: record.id, version: record.version, reason: error.message)
            outcome.quarantined.append(
                QuarantinedRecord(
                    account: record.account, kind: record.kind, id: record.id,
                    version: record.version, reason: error.message))
        }
    }
}
