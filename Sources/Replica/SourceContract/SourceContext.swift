public import Foundation

/// How far a source has got in one pass, for progress lines.
public struct SourceProgress: Sendable, Equatable {
    /// Entries looked at (files seen).
    public var seen = 0
    /// Entries indexed (new or changed).
    public var indexed = 0
    /// Entries skipped, with a reason recorded.
    public var skipped = 0
    /// Entries removed.
    public var removed = 0
    /// How many entries the pass expects to look at, when the source knows.
    public var expected: Int?

    /// Makes progress with every count at zero and no expected total.
    public init() {}
}

/// What a source's host tells it and lets it do: commit batches with their checkpoint, read back what it
/// committed, and report its state.
///
/// For example (in a source's `sync`):
/// ```swift
/// let known = try await context.entries()               // what it committed before
/// let events: [SourceEvent] = []                          // what changed since, by the source's own reading
/// try await context.commit(SourceBatch(events: events, checkpoint: "cursor-2"))
/// print(known.count)
/// ```
public final class SourceContext: Sendable {
    /// The source this context serves.
    public let definition: SourceDefinition
    /// The store, for the host's bookkeeping only: a source sees its own index through this contract.
    let store: Store
    let index: SearchableIndex
    private let onProgress: @Sendable (SourceProgress) -> Void

    /// The name under which the source's checkpoint is kept in its index.
    var consumer: String { definition.owner.rawValue }

    /// Makes a context for a source, opening the index it fills.
    ///
    /// - Parameters:
    ///   - definition: The source.
    ///   - store: The store the source belongs to.
    ///   - onProgress: Called with each report made through ``progress(_:)``; does nothing by default.
    /// - Throws: `ReplicaError` with code `accountNotSignedIn` when the source's account is not signed in, and
    ///   when its index cannot be opened (a bad index name, a file written by a newer replica).
    @available(*, noasync, message: "it waits on SQLite; in async code write 'try await SourceContext(…)'")
    package convenience init(
        definition: SourceDefinition, store: Store,
        onProgress: @escaping @Sendable (SourceProgress) -> Void = { _ in }
    ) throws {
        self.init(
            definition: definition, store: store,
            index: try store.index(named: definition.indexName, account: definition.account),
            onProgress: onProgress)
    }

    /// Makes a context for a source, opening the index it fills.
    ///
    /// - Parameters:
    ///   - definition: The source.
    ///   - store: The store the source belongs to.
    ///   - onProgress: Called with each report made through ``progress(_:)``; does nothing by default.
    /// - Throws: `ReplicaError` with code `accountNotSignedIn` when the source's account is not signed in, and
    ///   when its index cannot be opened (a bad index name, a file written by a newer replica).
    ///
    /// It runs on a thread of its own, so the caller's executor and Swift's cooperative pool are never held.
    public convenience init(
        definition: SourceDefinition, store: Store,
        onProgress: @escaping @Sendable (SourceProgress) -> Void = { _ in }
    ) async throws {
        self.init(
            definition: definition, store: store,
            index: try await store.index(named: definition.indexName, account: definition.account),
            onProgress: onProgress)
    }

    private init(
        definition: SourceDefinition, store: Store, index: SearchableIndex,
        onProgress: @escaping @Sendable (SourceProgress) -> Void
    ) {
        self.definition = definition
        self.store = store
        self.index = index
        self.onProgress = onProgress
    }

    /// The store's clock.
    public var now: Date { store.configuration.index.clock() }

    /// The checkpoint of the last committed batch, if any.
    public func checkpoint() async throws -> String? {
        let consumer = consumer
        return try await index.read { reader in try reader.checkpoint(consumer) }
    }

    /// Every entry the source has committed, by key.
    public func entries() async throws -> [String: SourceEntry] {
        let name = definition.name
        return try await index.read { reader in try reader.sourceEntries(name) }
    }

    /// Runs `body`, many commits in a row (a first scan of everything the source holds), as a load
    /// (``Store/load(accounts:isolation:_:)``), so that they take less time.
    ///
    /// Each commit is found by its words as soon as it is made, as always. On SQLite, what the commits
    /// add to the index's vocabulary (the words typos are corrected towards) is added up once, when
    /// `body` returns or throws, and FTS5's segments are left for the ranking lists' build to merge once
    /// (up to 64 a level meanwhile), instead of being merged as they are written; the lists are built
    /// after it. Until then a typo is corrected only towards the words the index held before. `replica
    /// sync` runs every source in a load; the file-tree, git and exec sources run their
    /// ``Source/watch(_:)``'s first scan (a plugin's, up to its first `idle`) in one, then follow changes
    /// outside it.
    ///
    /// For example, a source's `watch(_:)` commits what its first scan finds in a load:
    /// ```swift
    /// let known = try await context.entries()
    /// try await context.load {
    ///     for page in 0..<3 where known["page-\(page)"]?.stamp != "v1" {
    ///         var attributes = AttributeSet(contentType: .plainText)
    ///         attributes.textContent = "page \(page)"
    ///         let item = SearchableItem(uniqueIdentifier: ItemIdentifier("page-\(page)"), attributeSet: attributes)
    ///         let seen = SourceEntry(key: "page-\(page)", stamp: "v1")
    ///         try await context.commit(SourceBatch(events: [.upsert(item, entry: seen)], checkpoint: "page-\(page)"))
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - isolation: where `body` runs: the caller's actor, if any.
    ///   - body: the commits.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, once the vocabulary is added up.
    public func load<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T) async throws -> T {
        try await store.load(accounts: [definition.account], body)
    }

    /// Commits a batch: every event, the entries and the checkpoint, in one transaction.
    public func commit(_ batch: SourceBatch) async throws {
        guard !batch.isEmpty else { return }
        let definition = definition
        let consumer = consumer
        let keptDeletions = try await index.write { writer in
            let kept = try writer.apply(batch, from: definition, consumer: consumer)
            CrashPoints.reach("source.beforeCommit")
            return kept
        }
        await report(keptDeletions: keptDeletions)
        await store.reportSourceCommit(definition.name, at: now)  // status only; it never throws
    }

    /// Commits readings of things that can change while they are read (files), each kept only if what
    /// it read is still current: inside the write transaction, which every writer of the index takes in
    /// turn (the watcher, a `sync` beside it), `currentStamp` is asked for each reading's key, and a
    /// reading whose stamp is no longer the thing's stamp is left out. An older reading committed after
    /// a newer one (two writers' readings crossing) can then never overwrite it.
    ///
    /// - Parameters:
    ///   - readings: the readings, each with its events; committed together in one transaction.
    ///   - currentStamp: the stamp the thing a key names has now (`nil` when it is missing); called on
    ///     the index's writer queue, inside the transaction.
    /// - Returns: the keys of the readings left out, to read again.
    package func commit(_ readings: [SourceReading], currentStamp: @escaping @Sendable (String) -> String?) async throws
        -> [String]
    {
        guard !readings.isEmpty else { return [] }
        let definition = definition
        let consumer = consumer
        let (stale, keptDeletions) = try await index.write { writer -> ([String], [ItemIdentifier]) in
            var events: [SourceEvent] = []
            var stale: [String] = []
            for reading in readings {
                if !reading.isChecked || currentStamp(reading.key) == reading.stamp {
                    events += reading.events
                } else {
                    stale.append(reading.key)
                }
            }
            let kept = try writer.apply(SourceBatch(events: events), from: definition, consumer: consumer)
            CrashPoints.reach("source.beforeCommit")
            return (stale, kept)
        }
        await report(keptDeletions: keptDeletions)
        await store.reportSourceCommit(definition.name, at: now)
        return stale
    }

    /// Says in `status` which deletions the writer kept: nothing else would show them, since the
    /// source's entry for the key goes with the deletion.
    private func report(keptDeletions: [ItemIdentifier]) async {
        guard let first = keptDeletions.first else { return }
        let more = keptDeletions.count > 1 ? " and \(keptDeletions.count - 1) more" : ""
        await report(
            error:
                "the source asked to delete '\(first)'\(more), made by another owner; only an item's owner can delete it, "
                + "so it was kept")
    }

    /// Tells the host what the source is doing now; shown by `replica status`. For threads and other
    /// synchronous callers: it waits for the catalog's write lock.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    package func report(_ state: SourceState, detail: String? = nil) {
        store.reportSourceState(definition.name, state, detail: detail)
    }

    /// Records a failure (never quoting indexed content); shown by `replica status`.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    package func report(error message: String) {
        store.reportSourceError(definition.name, message, at: now)
    }

    /// Tells the host how many changes the source has seen but not committed yet; shown by `replica status`.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    package func reportPending(_ count: Int) {
        store.reportSourcePending(definition.name, count)
    }

    /// Tells the host what the source is doing now; shown by `replica status`.
    ///
    /// It runs on a thread of its own, so the caller's executor and Swift's cooperative pool are never held.
    public func report(_ state: SourceState, detail: String? = nil) async {
        await store.reportSourceState(definition.name, state, detail: detail)
    }

    /// Records a failure (never quoting indexed content); shown by `replica status`.
    ///
    /// It runs on a thread of its own, so the caller's executor and Swift's cooperative pool are never held.
    public func report(error message: String) async {
        await store.reportSourceError(definition.name, message, at: now)
    }

    /// Tells the host how many changes the source has seen but not committed yet; shown by `replica status`.
    ///
    /// It runs on a thread of its own, so the caller's executor and Swift's cooperative pool are never held.
    public func reportPending(_ count: Int) async {
        await store.reportSourcePending(definition.name, count)
    }

    /// Reports progress of the current pass.
    public func progress(_ progress: SourceProgress) {
        onProgress(progress)
    }
}

/// What a source is doing, as `replica status` shows it.
public struct SourceState: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The state's name, as `replica status` shows it.
    public let rawValue: String
    /// Makes a state from its name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The state's name.
    public var description: String { rawValue }

    /// Not doing anything; the state of a source just added.
    public static let idle = SourceState(rawValue: "idle")
    /// Catching up with the source as it is now, as in ``Source/sync(_:)``.
    public static let syncing = SourceState(rawValue: "syncing")
    /// Following changes as they happen, as in ``Source/watch(_:)``.
    public static let watching = SourceState(rawValue: "watching")
    /// Working, but not as well as it should (a watch limit reached: some folders are scanned instead).
    public static let degraded = SourceState(rawValue: "degraded")
    /// Failing; being retried with back-off.
    public static let failed = SourceState(rawValue: "failed")
    /// Not running.
    public static let stopped = SourceState(rawValue: "stopped")
}

// MARK: - The index side

extension IndexWriter {
    /// Returns the identifiers the batch asked to delete that another owner made: they are kept.
    func apply(_ batch: SourceBatch, from definition: SourceDefinition, consumer: String) throws -> [ItemIdentifier] {
        var keptDeletions: [ItemIdentifier] = []
        // Upserts go together through the pipelined path. A removal that may touch one of the upserts
        // waiting (its identifier, or one under its prefix) first writes them, so the events keep their
        // order; one that cannot (a file's earlier fragments, removed before its new reading is written)
        // leaves them waiting, so a pass over many files is written as one load, not a file at a time.
        // A source writes and deletes only its own items. An upsert whose identifier another owner holds is
        // refused by the writer, and its entry is recorded as skipped with the reason, so `status` shows it
        // and the rest of the batch goes on.
        var items: [(SearchableItem, ItemOrigin)] = []
        var entries: [ItemIdentifier: SourceEntry] = [:]
        var waiting = Set<String>()
        // Each waiting identifier's beginnings that end with "#" (a file's fragments are "path#…").
        var waitingFragmentPrefixes = Set<Substring>()
        func flush() throws {
            let refusedBefore = refusedOwnership.count
            try index(contentsOf: items)
            for refusal in refusedOwnership[refusedBefore...] {
                guard var entry = entries[refusal.identifier] else { continue }
                entry.skipReason = "its identifier is taken by an item another owner made (\(refusal.owner))"
                try setEntry(entry, source: definition.name)
            }
            items.removeAll()
            entries.removeAll()
            waiting.removeAll()
            waitingFragmentPrefixes.removeAll()
        }
        func flush(ifWaiting identifiers: [ItemIdentifier]) throws {
            if identifiers.contains(where: { waiting.contains($0.rawValue) }) { try flush() }
        }
        func flush(ifWaitingUnder prefix: String) throws {
            guard !waiting.isEmpty else { return }
            let touches =
                prefix.hasSuffix("#")
                ? waitingFragmentPrefixes.contains(Substring(prefix)) : waiting.contains { $0.hasPrefix(prefix) }
            if touches { try flush() }
        }
        let owner = definition.owner
        for event in batch.events {
            switch event {
            case .upsert(var item, let entry):
                if item.domainIdentifier == nil { item.domainIdentifier = definition.domain }
                items.append((item, ItemOrigin(owner: owner, version: entry?.stamp)))
                let identifier = item.uniqueIdentifier.rawValue
                waiting.insert(identifier)
                for index in identifier.indices where identifier[index] == "#" {
                    waitingFragmentPrefixes.insert(identifier[...index])
                }
                if let entry {
                    try setEntry(entry, source: definition.name)
                    entries[item.uniqueIdentifier] = entry
                }
            case .delete(let identifier, let key):
                try flush(ifWaiting: [identifier])
                if try delete(identifiers: [identifier], owner: owner) == 0, try rowID(of: identifier) != nil {
                    keptDeletions.append(identifier)
                }
                if let key { try removeEntry(key, source: definition.name) }
            case .deletePrefix(let identifierPrefix, let keyPrefix):
                try flush(ifWaitingUnder: identifierPrefix)
                try deleteItems(withIdentifierPrefix: identifierPrefix, owner: owner)
                try removeEntries(withKeyPrefix: keyPrefix, source: definition.name)
            case .skip(let entry, let identifiers):
                try flush(ifWaiting: identifiers)
                try delete(identifiers: identifiers, owner: owner)
                try setEntry(entry, source: definition.name)
            }
        }
        try flush()
        if let checkpoint = batch.checkpoint { try setCheckpoint(consumer, checkpoint) }
        return keptDeletions
    }
}
