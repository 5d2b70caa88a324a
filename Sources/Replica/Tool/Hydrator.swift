import Foundation

/// Asks each item's owner about it before it reaches a model: the record store for records, a source for
/// its items, the host's delegate for items it indexed itself. It fails closed: an item that is gone, no
/// longer readable by a signed-in account, at another version than the one indexed, or whose owner cannot
/// answer in time is dropped, and (unless it is only stale or unanswered) queued for removal from the index.
struct Hydrator: Sendable {
    let store: Store
    /// The signed-in accounts searched: only their items are shown.
    let accounts: Set<AccountID>
    let hydration: Hydration

    /// The attributes that tie a record's (or a followed row's) item to its record: hydration needs them
    /// whatever attributes a query fetches.
    static let tracingKeys: [AttributeKey] = [.recordKind, .recordID]

    /// - Parameter accounts: the accounts searched (empty: every signed-in one).
    init(store: Store, accounts: [AccountID], hydration: Hydration) async throws {
        self.store = store
        let signedIn = try await store.signedInAccounts().map(\.id)
        self.accounts = Set(accounts.isEmpty ? signedIn : signedIn.filter(accounts.contains))
        self.hydration = hydration
    }

    /// Hydrates candidates in order, a few at a time, until `wanted` pass or the candidates run out.
    func hydrate(_ candidates: [SearchResult], wanting wanted: Int, includingContent: Bool) async -> (
        kept: [SearchResult], dropped: [DroppedItem]
    ) {
        var kept: [SearchResult] = []
        var dropped: [DroppedItem] = []
        var next = 0
        while kept.count < wanted && next < candidates.count {
            let slice = Array(candidates[next..<min(candidates.count, next + max(wanted - kept.count, 8))])
            next += slice.count
            let round = await hydrate(slice, includingContent: includingContent)
            kept += round.kept
            dropped += round.dropped
        }
        return (Array(kept.prefix(wanted)), dropped)
    }

    func hydrate(_ results: [SearchResult], includingContent: Bool) async -> (
        kept: [SearchResult], dropped: [DroppedItem]
    ) {
        var verdicts: [Int: Verdict] = [:]
        for (index, result) in results.enumerated() where !accounts.contains(result.account) {
            verdicts[index] = .drop("account '\(result.account)' is not signed in or not searched", remove: false)
        }
        // Ask each owner once for all of its items, the owners at the same time.
        let groups = Dictionary(grouping: results.indices.filter { verdicts[$0] == nil }) { index in
            OwnerKey(
                account: results[index].account, index: results[index].indexName, owner: results[index].origin.owner)
        }
        await withTaskGroup(of: [(Int, Verdict)].self) { group in
            for (owner, indices) in groups {
                let batch = indices.map { results[$0] }
                group.addTask {
                    Array(zip(indices, await answers(for: batch, owner: owner, includingContent: includingContent)))
                }
            }
            for await answered in group {
                for (index, verdict) in answered { verdicts[index] = verdict }
            }
        }
        var kept: [SearchResult] = []
        var dropped: [DroppedItem] = []
        var removals: [OwnerKey: [ItemIdentifier]] = [:]
        var records: [AccountID: [RecordTrace]] = [:]
        for (index, result) in results.enumerated() {
            switch verdicts[index] ?? .drop("no answer", remove: false) {
            case .keep(let current):
                kept.append(current)
            case .drop(let reason, let remove, let record):
                dropped.append(
                    DroppedItem(account: result.account, identifier: result.item.uniqueIdentifier, reason: reason))
                if remove {
                    removals[
                        OwnerKey(account: result.account, index: result.indexName, owner: result.origin.owner),
                        default: []
                    ].append(result.item.uniqueIdentifier)
                    if let record { records[result.account, default: []].append(record) }
                }
            }
        }
        for (key, identifiers) in removals {
            do {
                try await store.deleteReliably(
                    identifiers.map(PendingDeletion.Target.identifier), account: key.account, indexName: key.index)
            } catch {
                // The results are withheld all the same; the items stay until a later search drops them again.
                store.configuration.events(
                    StoreEvent(
                        kind: .deletionFailed, account: key.account, indexName: key.index,
                        message:
                            "\(identifiers.count) item(s) hydration no longer vouches for could not be removed from index '\(key.index)' of account '\(key.account)' (\((error as? ReplicaError)?.message ?? String(describing: type(of: error)))); they stay withheld from results"
                    ))
            }
        }
        // The projection engine has the last word on a record's item: the next catch-up projects each of
        // these records again as it is then. One deleted or unreadable stays out; one whose item was
        // removed by mistake (its record written again between the check and the removal) comes back.
        for (account, traces) in records {
            do {
                try await Blocking.run { [store] in
                    guard let database = try store.recordStorage(for: account, creating: false) else { return }
                    for trace in traces { try database.touch(kind: trace.kind, id: trace.id) }
                }
            } catch {
                store.configuration.events(
                    StoreEvent(
                        kind: .catchUpFailed, account: account, indexName: nil,
                        message:
                            "\(traces.count) record(s) whose items hydration removed from account '\(account)' could not be handed back to the projection "
                            + "(\((error as? ReplicaError)?.message ?? String(describing: type(of: error)))); their next change projects them again"
                    ))
            }
        }
        return (kept, dropped)
    }

    struct OwnerKey: Hashable {
        var account: AccountID
        var index: String
        var owner: ItemOwner
    }

    /// The record an item of the record store was projected from.
    struct RecordTrace: Sendable {
        var kind: String
        var id: String
    }

    enum Verdict: Sendable {
        case keep(SearchResult)
        /// `remove`: queue the item for removal from the index; `record`: the record it came from, to
        /// project again at the next catch-up.
        case drop(String, remove: Bool, record: RecordTrace? = nil)
    }

    private func answers(for batch: [SearchResult], owner: OwnerKey, includingContent: Bool) async -> [Verdict] {
        let timeoutReason = "its owner did not answer within \(hydration.timeout)"
        let result = await withTimeout(hydration.timeout) { () -> [Verdict] in
            switch owner.owner {
            case .records:
                return try await checkRecords(
                    batch, traces: try await traces(of: batch), includingContent: includingContent)
            case .table:
                if let table = hydration.followedTables.first(where: { $0.owner == owner.owner }) {
                    return try await checkTable(
                        batch, traces: try await traces(of: batch), table: table, includingContent: includingContent)
                }
            case .source(let name):
                return try await checkSource(batch, name: name, includingContent: includingContent)
            case .api:
                if let delegate = hydration.delegate {
                    let answers = try await delegate.currentItems(
                        batch.map(\.item.uniqueIdentifier), account: owner.account,
                        indexName: owner.index, includingContent: includingContent)
                    return batch.map { verdict($0, answers[$0.item.uniqueIdentifier]) }
                }
            case .other, .activities:
                break
            }
            // Items a host indexed itself, with no delegate to ask, stand as stored.
            return batch.map { .keep($0) }
        }
        switch result {
        case .success(let verdicts): return verdicts
        case .failure(let error):
            let reason = error is TimeoutError ? timeoutReason : "its owner could not be asked"
            return batch.map { _ in .drop(reason, remove: false) }
        }
    }

    /// What a source's (or delegate's) answer means for one result.
    private func verdict(_ result: SearchResult, _ answer: SourceAnswer?) -> Verdict {
        switch answer {
        case nil:
            return .drop("its owner did not answer for it", remove: false)
        case .gone(let reason)?:
            return .drop(reason, remove: true)
        case .current(let item, let version)?:
            if let version, let indexed = result.origin.version, version != indexed {
                return .drop("the index holds an older version", remove: false)
            }
            var current = result
            if let item { current.item = Self.refreshed(result.item, with: item) }
            return .keep(current)
        }
    }

    /// The stored item with the owner's current attributes and full text.
    static func refreshed(_ stored: SearchableItem, with current: SearchableItem) -> SearchableItem {
        var item = stored
        item.attributeSet = current.attributeSet
        return item
    }

    // MARK: Owners

    /// Each result's record kind and id: from its attributes, or, where a query did not fetch them, from
    /// the item as the index holds it. Never guessed: an item is judged by the record it came from.
    private func traces(of batch: [SearchResult]) async throws -> [ItemIdentifier: RecordTrace] {
        func trace(_ attributes: AttributeSet) -> RecordTrace? {
            guard let kind = attributes[.recordKind]?.textValue, let id = attributes[.recordID]?.textValue else {
                return nil
            }
            return RecordTrace(kind: kind, id: id)
        }
        var traces: [ItemIdentifier: RecordTrace] = [:]
        var untraced: [ItemIdentifier] = []
        for result in batch {
            if let found = trace(result.item.attributeSet) {
                traces[result.item.uniqueIdentifier] = found
            } else {
                untraced.append(result.item.uniqueIdentifier)
            }
        }
        // A batch is one owner's items in one index of one account.
        guard let first = batch.first, !untraced.isEmpty,
            let index = try await store.existingIndex(named: first.indexName, account: first.account)
        else { return traces }
        for stored in try await index.fetchItems(withIdentifiers: untraced) {
            traces[stored.item.uniqueIdentifier] = trace(stored.item.attributeSet)
        }
        return traces
    }

    private func checkRecords(_ batch: [SearchResult], traces: [ItemIdentifier: RecordTrace], includingContent: Bool)
        async throws -> [Verdict]
    {
        try await Blocking.run { [self] in
            try batch.map { result in
                guard let trace = traces[result.item.uniqueIdentifier] else {
                    return .drop("it cannot be traced to its record", remove: true)
                }
                let record = try store.records.record(account: result.account, kind: trace.kind, id: trace.id)
                return check(result, record: record, trace: trace, includingContent: includingContent) {
                    // A stale item means the projection lags: have the next catch-up apply the record again.
                    try store.recordStorage(for: result.account, creating: false)?.touch(kind: trace.kind, id: trace.id)
                }
            }
        }
    }

    private func checkTable(
        _ batch: [SearchResult], traces: [ItemIdentifier: RecordTrace], table: FollowedTable,
        includingContent: Bool
    ) async throws -> [Verdict] {
        try await Blocking.run { [self] in
            let app = try table.openDatabase()
            return try batch.map { result in
                guard
                    let id = traces[result.item.uniqueIdentifier]?.id ?? result.item.attributeSet[.recordID]?.textValue
                else {
                    return .drop("it cannot be traced to its row", remove: true)
                }
                return check(
                    result, record: try app.record(table, id: id, account: result.account), trace: nil,
                    includingContent: includingContent
                ) {}
            }
        }
    }

    /// - Parameter trace: the record to project again after its item is removed (records only).
    private func check(
        _ result: SearchResult, record: Record?, trace: RecordTrace?, includingContent: Bool,
        whenStale: () throws -> Void
    ) -> Verdict {
        guard let record, !record.isDeleted else { return .drop("the record was deleted", remove: true, record: trace) }
        guard record.isReadable(by: result.account) else {
            return .drop("account '\(result.account)' may no longer read the record", remove: true, record: trace)
        }
        guard result.origin.version == String(record.version) else {
            try? whenStale()
            return .drop(
                "the index holds version \(result.origin.version ?? "?") and the record is at \(record.version)",
                remove: false)
        }
        guard includingContent, let projections = hydration.projections,
            let current = try? projections.projection(for: record.kind).item(
                for: record, now: store.configuration.index.clock())
        else {
            return .keep(result)
        }
        var hydrated = result
        hydrated.item = Self.refreshed(result.item, with: current)
        return .keep(hydrated)
    }

    private func checkSource(_ batch: [SearchResult], name: String, includingContent: Bool) async throws -> [Verdict] {
        guard let definition = try await store.source(named: name) else {
            return batch.map { _ in .drop("its source was removed", remove: true) }
        }
        guard let sourceResolver = hydration.sourceResolver else {
            return batch.map { _ in .drop("its source cannot be asked here", remove: false) }
        }
        let source = try sourceResolver.source(for: definition)
        let context = try await SourceContext(definition: definition, store: store)
        let answers = try await source.answer(
            batch.map(\.item.uniqueIdentifier), includingContent: includingContent, context)
        return batch.map { verdict($0, answers[$0.item.uniqueIdentifier]) }
    }
}
