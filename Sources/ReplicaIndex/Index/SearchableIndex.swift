public import Foundation
package import ReplicaCore
import Synchronization

/// What an index checks before every operation: that its account is still signed in under the sign-in it
/// was opened with (a sign-out made by another process or another store must stop it). The store that
/// opens the index provides it; the index knows nothing of accounts beyond that.
package struct IndexLease: Sendable {
    /// Which sign-in the index was opened under.
    package let generation: Int64
    /// Throws ``ReplicaError/Code/accountNotSignedIn`` once the account was signed out since.
    package let check: @Sendable () throws -> Void

    package init(generation: Int64, check: @escaping @Sendable () throws -> Void) {
        self.generation = generation
        self.check = check
    }
}

extension ReplicaError {
    /// An account signed out (by this process or another) after its storage was opened under an earlier
    /// sign-in: the same words whichever storage notices.
    package static func signedOutSinceOpened(_ account: AccountID) -> ReplicaError {
        ReplicaError(
            .accountNotSignedIn,
            "account '\(account)' was signed out after its files were opened; nothing was read or written. Sign it in again to use it"
        )
    }
}

/// One named index of one account: Core Spotlight's `CSSearchableIndex`, kept in a SQLite file.
///
/// Get one from a ``Store``, for an account signed in with `Store.signIn`. Indexing an item whose
/// identifier is already present replaces it. Every read leaves out expired items at once; they are
/// purged at the next write, or by ``purgeExpiredItems()``.
///
/// For example:
/// ```swift
/// let store = try Store(directory: URL(fileURLWithPath: "/var/lib/notes/replica"))
/// try await store.signIn("alice")
/// let index = try await store.index(named: "Notes", account: "alice")
/// try await index.indexItems([item])
/// try await index.deleteItems(withDomainIdentifiers: ["account.alice.archive"])
/// ```
public final class SearchableIndex: Sendable {
    /// How an index behaves.
    public struct Configuration: Sendable {
        /// How long an item indexed without an expiration date stays: 30 days, as in Core Spotlight.
        /// Give an item `Date.distantFuture` to keep it.
        public var defaultLifetime: TimeInterval = 30 * 24 * 3600
        /// The clock that decides what has expired, and when embedding given a deadline stops; tests
        /// inject their own.
        public var clock: @Sendable () -> Date = { Date() }
        /// How long a write waits for another writer (in this or another process) before it fails.
        public var busyTimeout: TimeInterval = 600
        /// The most page cache each of the index's two SQLite connections keeps, in KiB: 64 MiB, which
        /// bulk loads and rebuilds gain from. A connection keeps what it wrote until another process
        /// commits, so a long-running host that writes alone (`replica watch`) grows towards this
        /// figure per index; such a host sets less.
        public var cacheKiB = 65_536

        /// Creates the default configuration.
        public init() {}
    }

    /// The index's name within its account.
    public let name: String
    /// The account whose items it holds.
    public let account: AccountID
    /// How the index behaves.
    public let configuration: Configuration
    /// Where the index keeps its items.
    package let storage: any IndexStorage
    /// The sign-in this index was opened under, checked at every operation: a sign-out made by another
    /// process or another ``Store`` value must stop it from serving or taking the account's data.
    package let signIn: IndexLease
    private let state: Mutex<State>
    private let events: @Sendable (StoreEvent) -> Void

    private struct State {
        weak var delegate: (any IndexDelegate)?
        /// The entity queries by type name, held weakly as the delegate is.
        var entityQueries: [String: WeakEntityQuery] = [:]
        /// A delivery of reindex requests is running; `deliverAgain` asks it for one more round (a
        /// receiver was set meanwhile).
        var delivering = false
        var deliverAgain = false
        var isInvalidated = false
    }

    /// The largest client state accepted, in bytes.
    public static let maximumClientStateSize = 4096

    /// Opens the index kept in `storage`.
    package init(
        storage: any IndexStorage, name: String, account: AccountID, signIn: IndexLease, configuration: Configuration,
        events: @escaping @Sendable (StoreEvent) -> Void
    ) {
        self.storage = storage
        self.name = name
        self.account = account
        self.signIn = signIn
        self.configuration = configuration
        self.events = events
        self.state = Mutex(State())
    }

    /// Throws once the index was invalidated (its account signed out).
    private func checkOpen() throws {
        try state.withLock { state in
            guard !state.isInvalidated else {
                throw ReplicaError(
                    .accountNotSignedIn, "account '\(account)' was signed out; its index '\(name)' is gone")
            }
        }
    }

    /// Fails, and stops all further use, when the account was signed out since this index was opened.
    @available(*, noasync, message: "it waits on the catalog; in async code call its async form")
    package func checkSignIn() throws {
        do {
            try signIn.check()
        } catch let error as ReplicaError where error.code == .accountNotSignedIn {
            invalidate()
            throw error
        }
    }

    /// Stops all further use; called when the account is signed out.
    ///
    /// - Parameter discardingFile: the index is about to be deleted: its storage closes without keeping
    ///   anything it holds back (SQLite: without copying its write-ahead log into the file first).
    @available(*, noasync, message: "it waits for work in progress on the storage; in async code call its async form")
    package func invalidate(discardingFile: Bool = false) {
        state.withLock { $0.isInvalidated = true }
        // Outside the lock: this waits for work in progress on the storage, which may need it.
        storage.close(discarding: discardingFile)
    }

    // MARK: Running work

    /// Runs `body` in one write transaction, after purging some expired items (unless told not to).
    package func write<T: Sendable>(
        purgingExpired: Bool = true, _ body: @escaping @Sendable (any IndexWriter) throws -> T
    ) async throws -> T {
        try checkOpen()
        // Inside the transaction, which holds the index's write lock: a write that passes the sign-in
        // check commits before any sign-out that follows it deletes the index, never into a deleted one.
        return try await storage.write(
            now: configuration.clock(), defaultLifetime: configuration.defaultLifetime,
            prepare: { [self] in try checkSignIn() }
        ) { writer in
            if purgingExpired { try writer.purgeExpired(limit: 256) }
            return try body(writer)
        }
    }

    /// Counts the vocabulary changes that loads held back (``IndexLoad``) into the index's vocabulary, so
    /// that typos are corrected towards the tokens they wrote too.
    package func settleVocabulary() async throws {
        try checkOpen()
        try await storage.settleVocabulary()
    }

    /// Runs `body` on one consistent snapshot.
    package func read<T: Sendable>(_ body: @escaping @Sendable (any IndexReader) throws -> T) async throws -> T {
        try checkOpen()
        return try await storage.read(now: configuration.clock(), prepare: { [self] in try checkSignIn() }, body)
    }

    /// Runs `body` in a write transaction on the calling thread, for engines that keep their own
    /// checkpoints beside the items (the projection engine, sources). In a load (``IndexLoad``) it is
    /// written as one only if the thread knows: work handed to `Blocking.run` takes the caller's load
    /// along only through ``IndexLoad/carried(_:)``.
    @available(*, noasync, message: "it waits for the storage; in async code call write(purgingExpired:_:)")
    package func writeNow<T>(_ body: (any IndexWriter) throws -> T) throws -> T {
        try checkOpen()
        return try storage.writeNow(
            now: configuration.clock(), defaultLifetime: configuration.defaultLifetime,
            prepare: { try checkSignIn() }, body)
    }

    // MARK: Indexing

    /// Adds or replaces items; items with `isUpdate` are merged into the stored ones.
    ///
    /// All items are checked before anything is written, and all are written in one transaction.
    ///
    /// Items made by another owner (the record store's projection, a source) cannot be replaced here.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidItem` for the first item that cannot be indexed, or
    ///   `notOwner` when an identifier belongs to an item another owner made (nothing is written then).
    public func indexItems(_ items: [SearchableItem]) async throws {
        for item in items { try item.validate() }
        try await write { writer in
            try writer.index(contentsOf: items)
            try writer.throwIfRefused()
        }
    }

    /// Deletes the items with these identifiers. Identifiers not in the index are ignored, and so are
    /// items another owner made (the record store's projection, a source): each owner deletes its own.
    ///
    /// - Returns: how many items were deleted.
    @discardableResult
    public func deleteItems(withIdentifiers identifiers: [ItemIdentifier]) async throws -> Int {
        try await write { writer in try writer.delete(identifiers: identifiers, owner: .api) }
    }

    /// Deletes every item whose domain is one of these or lies under one of them.
    ///
    /// Deleting `account.alice` deletes `account.alice.notes` too, but not `account.alicia`.
    ///
    /// Items another owner made (the record store's projection, a source) are left alone.
    ///
    /// - Returns: how many items were deleted.
    @discardableResult
    public func deleteItems(withDomainIdentifiers domains: [DomainIdentifier]) async throws -> Int {
        try await write { writer in try writer.delete(domains: domains, owner: .api) }
    }

    /// Deletes every item indexed through this API (the client state stays). Items another owner made
    /// (the record store's projection, a source) are left alone: each owner deletes its own.
    ///
    /// - Returns: how many items were deleted.
    @discardableResult
    public func deleteAllItems() async throws -> Int {
        try await write { writer in try writer.deleteAll(owner: .api) }
    }

    /// Deletes every item whose expiration date has passed; returns how many.
    @discardableResult
    public func purgeExpiredItems() async throws -> Int {
        try await write(purgingExpired: false) { writer in
            var total = 0
            while true {
                let purged = try writer.purgeExpired(limit: 1000)
                total += purged
                if purged < 1000 { return total }
            }
        }
    }

    /// Builds the lists that let a ranked search of common words read a few hundred items instead of
    /// every item with the words, from the index as it is; searches stay exact whatever is written
    /// afterwards, and score every match again once more than a few hundred items have changed since
    /// the last build (see `docs/benchmarks/ranked-search.md`). Returns how many words got a list. Both backends keep them
    /// (on PostgreSQL the account's other writers wait while they are built).
    @discardableResult
    public func rebuildRankingLists() async throws -> Int {
        let terms = try await write(purgingExpired: false) { writer in try writer.rebuildRankingLists().terms }
        // On SQLite the build rewrote the full-text index (merged into one segment) through the
        // write-ahead log.
        try await storage.settle()
        return terms
    }

    /// Drops the ranking lists and stops recording changes for them: ranked searches score every match,
    /// and writes pay nothing for the lists, until ``rebuildRankingLists()`` builds them again. Returns at
    /// once on a backend without them.
    public func removeRankingLists() async throws {
        try await write(purgingExpired: false) { writer in try writer.removeRankingLists() }
    }

    /// Whether the ranking lists are missing or behind enough that ranked searches score every match:
    /// a watcher rebuilds them when idle (``rebuildRankingLists()``).
    public func rankingListsAreStale(minimumItems: Int = 10_000) async throws -> Bool {
        try await read { reader in try reader.rankingListsAreStale(minimumItems: minimumItems) }
    }

    // MARK: Batches

    /// Starts a batch: its changes and its client state are written together when it ends.
    ///
    /// For example:
    /// ```swift
    /// let batch = index.beginBatch()
    /// try batch.indexItems(items)                               // what changed since the last sync
    /// try batch.deleteItems(withIdentifiers: ["note:alice:7"])   // what was deleted
    /// try await batch.end(clientState: Data("cursor=1812".utf8))
    /// ```
    public func beginBatch() -> IndexBatch { IndexBatch(index: self) }

    /// The client state stored by the last batch that ended, or `nil` if none has.
    public func fetchLastClientState() async throws -> Data? {
        try await read { try $0.clientState() }
    }

    // MARK: Reading

    /// Every searchable item with its full text, in identifier order (for tests and exports).
    public func allItems() async throws -> [SearchableItem] {
        try await read { try $0.allItems().map(\.0) }
    }

    /// How many items are searchable now.
    public func itemCount() async throws -> Int {
        try await read { try $0.count() }
    }

    /// The stored items with these identifiers, with their full text; missing and expired ones are left out.
    public func items(withIdentifiers identifiers: [ItemIdentifier]) async throws -> [SearchableItem] {
        try await read { reader in try reader.items(withIdentifiers: identifiers).map(\.0) }
    }

    /// The stored items with these identifiers, whole: every attribute, the text content, the owner and
    /// when each was written. Missing and expired identifiers are left out; the order is the one asked.
    ///
    /// - Throws: ``ReplicaError`` with code `accountNotSignedIn` when the account was signed out.
    public func fetchItems(withIdentifiers identifiers: [ItemIdentifier]) async throws -> [StoredItem] {
        try await read { reader in
            let unknown = WrittenLanguages.commonest(
                of: WrittenLanguages(meta: try reader.meta(WrittenLanguages.key)).counts)
            return try reader.items(withIdentifiers: identifiers).map { item, origin, indexed in
                StoredItem(
                    account: self.account, indexName: self.name, item: item, origin: origin, indexedAt: indexed,
                    languageWhenUnknown: unknown)
            }
        }
    }

    /// Searches this index alone. A ``Store`` searches every signed-in account at once.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidQuery` when the text has no searchable word.
    public func search(_ query: SearchQuery) async throws -> [SearchResult] {
        try await search(query, semantic: nil)
    }

    /// Searches by the words and, with `semantic`, by meaning too.
    package func search(_ query: SearchQuery, semantic: SemanticQuery?) async throws -> [SearchResult] {
        let semantic = try await withFormerModels(semantic)
        let (found, unreadable) = try await read { reader in
            try reader.search(query, pattern: try reader.pattern(of: query), semantic: semantic)
        }
        if !unreadable.isEmpty { try await dropUnreadable(unreadable) }
        return results(found)
    }

    /// Searches while the query's vector is still being computed: the candidates by their words are
    /// found first, then fused with those by meaning once `embedding` has the vector. The two halves
    /// read two snapshots a few milliseconds apart (an item found by its words in the first is returned
    /// as a search begun a moment earlier would return it, except its snippet, which a ranked search
    /// through SQLite's ranking lists makes in the second: from the item's text then, none if the item
    /// is gone), and the embedding no longer adds to the time the words take.
    package func search(_ query: SearchQuery, embedding: Task<SemanticQuery?, Never>) async throws -> [SearchResult] {
        let (pattern, candidates, unreadable) = try await read { reader in
            let pattern = try reader.pattern(of: query)
            let (candidates, unreadable) = try reader.lexicalCandidates(query, pattern: pattern)
            return (pattern, candidates, unreadable)
        }
        if !unreadable.isEmpty { try await dropUnreadable(unreadable) }
        let semantic = try await withFormerModels(await embedding.value)
        return results(
            try await read { reader in
                try reader.finishing(candidates, query: query, pattern: pattern, semantic: semantic)
            })
    }

    /// `semantic` with the queries by the former models whose vectors this index still holds
    /// (``SemanticQuery/alongside``).
    private func withFormerModels(_ semantic: SemanticQuery?) async throws -> SemanticQuery? {
        guard var semantic, !semantic.formerModels.isEmpty else { return semantic }
        let formers = semantic.formerModels
        let held = try await read { reader in try formers.filter { try reader.holdsVectors(model: $0.model) } }
        for former in held {
            guard let vector = await former.vector() else { continue }
            semantic.alongside.append(
                SemanticQuery(
                    vector: vector, model: former.model, baseline: former.baseline,
                    unrelatedCloseness: former.unrelatedCloseness, passageStart: former.passageStart))
        }
        return semantic
    }

    private func results(_ found: [FoundItem]) -> [SearchResult] {
        found.map { found in
            SearchResult(
                account: account, indexName: name, item: found.item, score: found.score, snippet: found.snippet,
                origin: found.origin, indexedAt: found.indexedAt, match: found.match, engagement: found.engagement)
        }
    }

    /// Embeds the items whose vectors are missing or from another model, in batches, until none is left
    /// (or `limit` items are done, or `deadline` has passed on the index's clock when a batch would
    /// start: the batch under way is finished and stored). Lexical search never waits for this: items
    /// are searchable by their words as soon as they are written.
    ///
    /// - Parameter progress: told the number embedded so far and the number still waiting.
    /// - Returns: how many items were embedded.
    @discardableResult
    package func embedPending(
        using embedder: any Embedder, batchSize: Int = 32, limit: Int = .max, until deadline: Date? = nil,
        progress: @Sendable (Int, Int) -> Void = { _, _ in }
    ) async throws -> Int {
        let model = embedder.modelIdentifier
        var done = 0
        // Counted once, and only when something waits (an idle watcher asks every two seconds): counting
        // after every batch scanned the whole index each time.
        var waiting: Int?
        while done < limit, deadline.map({ configuration.clock() < $0 }) ?? true {
            let batch = try await read { reader in try reader.pendingEmbeddings(model: model, limit: batchSize) }
            guard !batch.isEmpty else { break }
            if waiting == nil { waiting = try await read { reader in try reader.embeddingBacklog(model: model) } }
            // Abandoned when the task is cancelled: a stopping watcher never waits on the model.
            let vectors = try await Blocking.runAbandoningOnCancellation {
                try embedder.embed(documents: batch.map(\.text))
            }
            try Self.checkVectors(vectors, documents: batch.count, model: model)
            try await write(purgingExpired: false) { writer in
                for (pending, vectors) in zip(batch, vectors) {
                    try writer.setVectors(vectors, for: pending, model: model)
                }
            }
            done += batch.count
            waiting = max((waiting ?? 0) - batch.count, 0)
            progress(done, waiting ?? 0)
        }
        return done
    }

    /// Refuses what an embedder gave unless it is a list of vectors for each of `documents` documents,
    /// every value a finite number: a NaN cannot be stored (nor compared), and an item given no
    /// vectors would be asked for again and again.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidArgument`, naming the model.
    package static func checkVectors(_ vectors: [[[Float]]], documents: Int, model: String) throws {
        guard vectors.count == documents else {
            throw ReplicaError(
                .invalidArgument,
                "the embedding model \(model) gave vectors for \(vectors.count) texts, not \(documents); nothing was stored"
            )
        }
        guard vectors.allSatisfy({ $0.allSatisfy { $0.allSatisfy(\.isFinite) } }) else {
            throw ReplicaError(
                .invalidArgument,
                "the embedding model \(model) gave a vector holding a value that is not a finite number; nothing was stored"
            )
        }
    }

    /// Completions of a typed prefix from this index: words (as written) and titles, with how often each
    /// was seen.
    package func completions(of prefix: String) async throws -> (words: [String: Int], titles: [String: Int]) {
        try await read { reader in try reader.completions(of: prefix) }
    }

    /// What completions of a typed prefix are made of, item by item (see ``IndexReader/completionSources(of:sample:)``).
    package func completionSources(of prefix: String) async throws -> [CompletionSource] {
        try await read { reader in try reader.completionSources(of: prefix) }
    }

    /// Items waiting for vectors from `model`.
    package func embeddingBacklog(model: String) async throws -> Int {
        try await read { reader in try reader.embeddingBacklog(model: model) }
    }

    /// Vectors held and items waiting for them, under `model`.
    package func embeddingCounts(model: String) async throws -> (items: Int, passages: Int, backlog: Int) {
        try await read { reader in try reader.embeddingCounts(model: model) }
    }

    /// How many bytes the index takes where it is kept (for SQLite, its file and write-ahead log).
    public func fileSize() -> Int { storage.size() }

    /// The size the index settles at, without the log of recent writes (for SQLite, the file once its
    /// write-ahead log was copied into it).
    public func compactedFileSize() async throws -> Int {
        try checkOpen()
        try await Blocking.run { [self] in try checkSignIn() }
        return try await storage.compactedSize()
    }

    // MARK: Delegate

    /// Sets the owner that the index asks to reindex, and delivers any request still owed.
    ///
    /// A new or rebuilt index owes the delegate a request to reindex everything; setting a delegate
    /// delivers it at once (this call waits for it, unless a delivery already running takes it over),
    /// and it is not asked again once it returned without throwing. Entity queries (``setEntityQuery(_:forType:)``) are each owed their own.
    ///
    /// The index holds the delegate weakly, as Core Spotlight's index does: keep a strong reference to it
    /// (in the object that owns the app's storage, say) for as long as it should be asked.
    ///
    /// - Throws: what the delegate throws; the request stays owed.
    public func setDelegate(_ delegate: (any IndexDelegate)?) async throws {
        state.withLock { $0.delegate = delegate }
        try await deliverPendingReindex()
    }

    /// Tells the delegate, if one is set, that replica changed these items after they were indexed.
    package func notifyUpdated(_ updates: [ItemUpdate]) async {
        guard !updates.isEmpty, let delegate = state.withLock({ $0.delegate }) else { return }
        await delegate.searchableItemsDidUpdate(updates, in: self)
    }

    /// Sets the query an entity type's reindex requests go to (or removes it with `nil`), and delivers
    /// any request still owed, as ``setDelegate(_:)`` does.
    public func setEntityQuery(_ query: (any IndexedEntityQuery)?, forType typeName: String) async throws {
        state.withLock { $0.entityQueries[typeName] = query.map(WeakEntityQuery.init) }
        try await deliverPendingReindex()
    }

    /// Delivers owed reindex requests to the delegate and the entity queries.
    ///
    /// - A new or rebuilt index owes each receiver one request to reindex everything: the delegate and
    ///   every entity type's query get it once, whenever they are set (a query set a week later, for a
    ///   type the app added since, still gets it). Who has had it is kept in the index file, so a rebuilt
    ///   file owes it to everyone again.
    /// - Identifiers go to the entity query of their type (`entity:<type>:<id>`) or else to the delegate,
    ///   and are cleared once every receiver returned without throwing; with nobody to take some of them,
    ///   they all stay owed.
    package func deliverPendingReindex() async throws {
        // One delivery at a time, so no receiver is asked twice; a call made while one runs has it go
        // round again for what changed.
        let mine = state.withLock { state in
            if state.delivering {
                state.deliverAgain = true
                return false
            }
            state.delivering = true
            return true
        }
        guard mine else { return }
        do {
            repeat {
                try await deliverPendingReindexOnce()
            } while state.withLock({ state in
                defer { state.deliverAgain = false }
                if !state.deliverAgain { state.delivering = false }
                return state.deliverAgain
            })
        } catch {
            state.withLock {
                $0.delivering = false
                $0.deliverAgain = false
            }
            throw error
        }
    }

    private func deliverPendingReindexOnce() async throws {
        let (delegate, queries) = state.withLock { state in
            (state.delegate, state.entityQueries.compactMapValues { $0.query })
        }
        guard delegate != nil || !queries.isEmpty else { return }
        let (all, delivered, some) = try await read { reader in
            (
                try reader.meta("reindex_all_pending") == "1",
                try reader.meta("reindex_all_delivered").flatMap {
                    try? JSON.parse($0).arrayValue?.compactMap(\.stringValue)
                } ?? [],
                try reader.meta("reindex_identifiers")
            )
        }
        let description = IndexDescription(account: account, indexName: name)
        var askedForAll = Set(delivered)
        func markAsked(_ receiver: String) async throws {
            askedForAll.insert(receiver)
            // Added to what the file holds, not written over it: another process may have asked its own.
            try await write { writer in
                let stored =
                    try writer.meta("reindex_all_delivered")
                    .flatMap { try? JSON.parse($0).arrayValue?.compactMap(\.stringValue) } ?? []
                let list = JSON.array(Set(stored + [receiver]).sorted().map(JSON.string)).serialized()
                try writer.setMeta("reindex_all_delivered", list)
            }
        }
        if all {
            if let delegate, !askedForAll.contains("delegate") {
                try await delegate.reindexAllItems(in: self)
                try await markAsked("delegate")
            }
            for (type, query) in queries.sorted(by: { $0.key < $1.key }) where !askedForAll.contains("entity:" + type) {
                try await query.reindexAllEntities(indexDescription: description)
                try await markAsked("entity:" + type)
            }
        }
        guard let some, let identifiers = try? JSON.parse(some).arrayValue?.compactMap(\.stringValue),
            !identifiers.isEmpty
        else { return }
        var byType: [String: [String]] = [:]
        var others: [ItemIdentifier] = []
        for identifier in identifiers {
            let parts = identifier.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            if parts.count == 3, parts[0] == "entity", queries[String(parts[1])] != nil {
                byType[String(parts[1]), default: []].append(String(parts[2]))
            } else {
                others.append(ItemIdentifier(identifier))
            }
        }
        // What nobody here can take stays owed.
        if !others.isEmpty, delegate == nil { return }
        if !others.isEmpty { try await delegate?.reindexItems(withIdentifiers: others, in: self) }
        for (type, ids) in byType.sorted(by: { $0.key < $1.key }) {
            try await queries[type]?.reindexEntities(withIdentifiers: ids, indexDescription: description)
        }
        try await write { writer in try writer.setMeta("reindex_identifiers", nil) }
    }

    /// Removes items whose stored copy cannot be read and asks the owner for them again.
    private func dropUnreadable(_ identifiers: [ItemIdentifier]) async throws {
        try await write { writer in
            try writer.delete(identifiers: identifiers, owner: nil)
            let earlier =
                (try? writer.meta("reindex_identifiers"))
                .flatMap { try? JSON.parse($0).arrayValue } ?? []
            let all = (earlier + identifiers.map { JSON.string($0.rawValue) }).suffix(10_000)
            try writer.setMeta("reindex_identifiers", JSON.array(Array(all)).serialized())
        }
        events(
            StoreEvent(
                kind: .itemsUnreadable, account: account, indexName: name,
                message:
                    "\(identifiers.count) item(s) in index '\(name)' of account '\(account)' could not be read back; they were dropped and their owner asked to reindex them"
            ))
        try? await deliverPendingReindex()
    }
}

/// An entity query held weakly, as Core Spotlight holds its delegates.
struct WeakEntityQuery {
    weak var query: (any IndexedEntityQuery)?
    init(_ query: any IndexedEntityQuery) { self.query = query }
}
