package import Foundation
import ReplicaCore

// The seam between an index and where it keeps its items. `SearchableIndex`, the projection engine, the
// sources and the search tool speak only these protocols; a SQLite file (ReplicaSQLiteStore) and a
// PostgreSQL database (ReplicaPostgresStore) implement them, in modules of their own, and the tests add a
// third in memory (`InMemoryIndexStorage`). No type of a storage engine crosses them, and an engine's own
// errors become `ReplicaError`s below them.

/// Where one index of one account keeps its items: it runs reads on a consistent snapshot and writes in
/// one transaction each, and says how much room the index takes.
package protocol IndexStorage: AnyObject, Sendable {
    /// Runs `body` in one write transaction; an error thrown by `body` rolls it back.
    ///
    /// - Parameter prepare: runs first inside the transaction, before `body` (the sign-in check, which must
    ///   hold the transaction's write lock so that no sign-out deletes the index between it and the commit).
    func write<T: Sendable>(
        now: Date, defaultLifetime: TimeInterval, prepare: @escaping @Sendable () throws -> Void,
        _ body: @escaping @Sendable (any IndexWriter) throws -> T
    ) async throws -> T

    /// ``write(now:defaultLifetime:prepare:_:)`` on the calling thread.
    @available(
        *, noasync, message: "it waits for the storage; in async code call write(now:defaultLifetime:prepare:_:)"
    )
    func writeNow<T>(
        now: Date, defaultLifetime: TimeInterval, prepare: () throws -> Void,
        _ body: (any IndexWriter) throws -> T
    ) throws -> T

    /// Runs `body` on one consistent snapshot.
    func read<T: Sendable>(
        now: Date, prepare: @escaping @Sendable () throws -> Void,
        _ body: @escaping @Sendable (any IndexReader) throws -> T
    ) async throws -> T

    /// How many bytes the index takes where it is kept.
    func size() -> Int

    /// How many bytes the index would take once its free space is given back.
    func compactedSize() async throws -> Int

    /// Puts a large rewrite where the index is kept for good (SQLite: the write-ahead log copied into the
    /// file and cut back), so the index has its size at once, not when its last connection closes.
    func settle() async throws

    /// Counts the vocabulary changes that loads held back (``IndexLoad``) into the index's vocabulary, in
    /// one transaction; nothing when none were (PostgreSQL holds none back).
    func settleVocabulary() async throws

    /// Stops all further use: the account was signed out.
    ///
    /// - Parameter discarding: the index is about to be deleted; nothing of it needs to be kept.
    @available(*, noasync, message: "it waits for work in progress on the storage")
    func close(discarding: Bool)
}

/// The reads of one index, on one snapshot. Every read leaves out expired items, purged or not.
///
/// A backend implements the primitives below; the ranking that makes one score of them (`search`) is
/// written once, in `IndexReader+Ranking.swift`, so both backends rank the same way.
package protocol IndexReader {
    /// The time the reads take as now: what has expired by then is left out.
    var now: Date { get }

    // MARK: Search primitives

    /// The items that match `pattern` (or, without one, the listing, most recently changed first) and
    /// pass the query's filters, best BM25 first, at most `limit`; each with its BM25 as its score (higher
    /// is better), its snippet (or how it is to be made: ``FoundItem/pendingSnippet``), and whether a term
    /// is in its title, keywords or people (`inHeading`).
    /// Items whose stored attributes cannot be read are left out and named in `unreadable`.
    func matches(_ query: SearchQuery, pattern: FTSPattern?, limit: Int) throws
        -> (found: [(item: FoundItem, rowID: Int64)], inHeading: Set<Int64>, unreadable: [ItemIdentifier])

    /// Which of `rowIDs` hold what `match` asks for.
    func rows(matching match: TermMatch, among rowIDs: [Int64]) throws -> Set<Int64>

    /// The row identifiers of the items that pass the query's filters and predicate, or `nil` when it has
    /// neither (every item not expired passes).
    func rowIDs(passing query: SearchQuery) throws -> Set<Int64>?

    /// The items closest in meaning to `query` among those that pass the query's filters: each scored by
    /// its best passage's cosine, best first, at most `limit`, none below `floor` (``MeaningFloor``).
    func nearest(to query: [Float], model: String, filters: SearchQuery, limit: Int, floor: MeaningFloor) throws -> [(
        rowID: Int64, cosine: Double
    )]

    /// The cosine of each of `rowIDs`' best passage with `query`, for the items that have vectors.
    func cosines(of rowIDs: [Int64], to query: [Float], model: String) throws -> [Int64: Double]

    /// The number (from 0) of each of `rowIDs`' best passage with `query`, for the items that have vectors.
    func bestPassages(of rowIDs: [Int64], to query: [Float], model: String) throws -> [Int64: Int]

    /// Found items for row ids (semantic matches that the words did not find), in the order given, each
    /// with the start of its text as its snippet.
    func foundItems(_ rowIDs: [Int64]) throws -> [(item: FoundItem, rowID: Int64)]

    /// The text content of each of these items that has one.
    func textContents(of identifiers: [ItemIdentifier]) throws -> [ItemIdentifier: String]

    /// How much each item was engaged with, from the activities about it (0 to 1).
    func engagement(of identifiers: [ItemIdentifier]) throws -> [ItemIdentifier: Double]

    // MARK: Items

    /// The items with these identifiers that are in the index and not expired, with their full text.
    func items(withIdentifiers identifiers: [ItemIdentifier]) throws -> [(SearchableItem, ItemOrigin, Date)]
    /// Every item that is searchable now, with its full text and origin, in identifier order.
    func allItems() throws -> [(SearchableItem, ItemOrigin, Date)]
    /// How many items are searchable now.
    func count() throws -> Int
    /// Whether the backend's structures for ranked search of common words are missing (with at least
    /// `minimumItems` items) or too far behind to be used (see ``RankingLists``).
    func rankingListsAreStale(minimumItems: Int) throws -> Bool

    /// How many of `terms` each of `rowIDs` holds, when this reader knows it for every one already (for
    /// the items it has just ranked through the ranking lists); `nil` otherwise.
    func knownWordsPresent(_ terms: [FTSPattern.Term], in rowIDs: [Int64]) -> [Int64: Int]?
    /// The snippets of the candidates ``matches(_:pattern:limit:)`` left to the reader
    /// (``PendingSnippet/matching(_:)``), by row id: a search makes those of the items it returns only.
    /// An item no longer under its identifier at that row gets none.
    func snippets(_ pending: [(rowID: Int64, identifier: ItemIdentifier, expression: String)]) throws -> [Int64: String]
    /// The client state of the last batch that set one.
    func clientState() throws -> Data?
    /// A value the index keeps about itself.
    func meta(_ key: String) throws -> String?
    /// How many items hold the most held of `words` in the index's vocabulary (0 when it has none of them).
    func vocabularyDocuments(ofAny words: [String]) throws -> Int64
    /// The tokens of the index's vocabulary (``TextAnalyzer/Vocabulary``) that begin with the character
    /// `first`, whose length in characters is within `lengths` and that more than `documents` items hold,
    /// each with how many items hold it, in byte order.
    func vocabulary(beginningWith first: String, lengths: ClosedRange<Int>, heldByMoreThan documents: Int64) throws
        -> [(word: String, documents: Int64)]
    /// The first `sample` items that have a word beginning with `prefix`, each with those words and its title
    /// when the title has one.
    func completionSources(of prefix: String, sample: Int) throws -> [CompletionSource]

    // MARK: Activities, enrichment, vectors

    /// The activities donated last, newest first.
    func recentActivities(limit: Int) throws -> [RecentActivity]
    /// Items written since the enrichment pass last looked at them, oldest first.
    func pendingEnrichment(limit: Int) throws -> [PendingEnrichment]
    /// The items of a domain (a thread), oldest first, up to `date`.
    func thread(domain: DomainIdentifier, upTo date: Date?, limit: Int) throws -> [SearchableItem]
    /// How many items are enriched, wait, fail or were skipped, and why.
    func enrichmentCounts() throws -> EnrichmentCounts
    /// Items with no vectors from `model` yet, oldest first.
    func pendingEmbeddings(model: String, limit: Int) throws -> [PendingEmbedding]
    /// How many items have vectors from `model`, how many passages they hold, and how many wait.
    func embeddingCounts(model: String) throws -> (items: Int, passages: Int, backlog: Int)
    /// How many items wait for vectors from `model`.
    func embeddingBacklog(model: String) throws -> Int
    /// Whether any item still holds vectors from `model` (a former model's, after the store changed
    /// models): asked on every search by meaning, so found through an index on the model, never by reading
    /// every item's.
    func holdsVectors(model: String) throws -> Bool

    // MARK: Projection and sources

    /// The records the projection engine could not project, with why.
    func quarantined(account: AccountID) throws -> [QuarantinedRecord]
    /// A consumer's position in its change log.
    func checkpoint(_ consumer: String) throws -> String?
    /// The projection rebuilds that have not finished.
    func rebuildsInProgress() throws -> [(kind: String, from: Int, target: Int, cursor: String?)]
    /// A source's entries by key.
    func sourceEntries(_ source: String) throws -> [String: SourceEntry]
    /// A source's skipped entries: how many for each reason.
    func skippedEntries(_ source: String) throws -> [(String, Int)]
}

/// The writes of one index, in one transaction. Reads made through it see the transaction's own writes.
package protocol IndexWriter: AnyObject {
    /// The time the writes take as now: new items expire from it, and what has expired by then is purged.
    var now: Date { get }

    /// Items this writer refused to write because another owner made them.
    var refusedOwnership: [(identifier: ItemIdentifier, writer: ItemOwner, owner: ItemOwner)] { get }

    // MARK: Items

    /// Adds or replaces an item, or merges it into the stored one (`isUpdate`).
    @discardableResult
    func index(_ item: SearchableItem, origin: ItemOrigin) throws -> UpsertOutcome
    /// Adds or replaces items, each with its origin, the fastest way the backend has.
    func index(contentsOf entries: [(SearchableItem, ItemOrigin)]) throws
    /// The row of an item, when it is there and (with `owner`) that owner made it.
    func rowID(of identifier: ItemIdentifier, owner: ItemOwner?) throws -> Int64?
    /// Which of these identifiers name no item (expired or not) and no quarantined record.
    func absent(_ identifiers: [ItemIdentifier]) throws -> Set<ItemIdentifier>
    /// Deletes the items with these identifiers that `owner` made (whoever made them when `nil`), with
    /// everything kept about them (words, vectors, enrichment); returns how many.
    @discardableResult
    func delete(identifiers: [ItemIdentifier], owner: ItemOwner?) throws -> Int
    /// Deletes the items `owner` made (any owner's when `nil`) whose domain is one of these or lies under
    /// one (`notes` takes `notes.work`); returns how many.
    @discardableResult
    func delete(domains: [DomainIdentifier], owner: ItemOwner?) throws -> Int
    /// Deletes every item `owner` made, or every item when `owner` is `nil`.
    @discardableResult
    func deleteAll(owner: ItemOwner?) throws -> Int
    /// Deletes one row, whoever made it (hydration found it gone).
    func deleteRow(_ id: Int64) throws
    /// Deletes the items `owner` made whose identifiers start with `prefix` (a source's items under a
    /// folder); returns how many.
    @discardableResult
    func deleteItems(withIdentifierPrefix prefix: String, owner: ItemOwner) throws -> Int
    /// Deletes up to `limit` expired items.
    @discardableResult
    func purgeExpired(limit: Int) throws -> Int
    /// Builds the ranking lists (``RankingLists``) from the index as it is, replacing any.
    func rebuildRankingLists() throws -> RankingLists.Summary
    /// Drops the ranking lists: ranked searches score every match until they are built again.
    func removeRankingLists() throws
    /// Makes the next `batchSize` items' words again with this analyzer beside the words searches read,
    /// and swaps the new words in at once when every item has them (``WordsRemake``). A writer that
    /// counts the vocabulary from the index's words at the swap may count it in `tally` instead, batch
    /// by batch (``WordsRemake/VocabularyTally``).
    func remakeWords(batchSize: Int, tally: WordsRemake.VocabularyTally) throws -> WordsRemake.Step

    // MARK: State kept beside the items

    /// Replaces the client state of the index's last batch (``IndexBatch``).
    func setClientState(_ state: Data) throws
    /// The client state as this transaction sees it. A backend shared by several processes holds it
    /// against their writers until the transaction ends, so a batch that compares it before writing its
    /// own cannot pass another's in between.
    func clientState() throws -> Data?
    /// Keeps a fact the index holds about itself under `key`, or forgets it (`nil`).
    func setMeta(_ key: String, _ value: String?) throws
    /// A fact the index holds about itself, as this transaction sees it.
    func meta(_ key: String) throws -> String?
    /// The languages of the rows this writer has written and not yet saved (``saveWrittenLanguages()``).
    var writtenLanguages: WrittenLanguages { get set }
    /// A consumer's position in its change log, as this transaction sees it.
    func checkpoint(_ consumer: String) throws -> String?
    /// Saves a consumer's position, committed with the items it wrote. A backend whose searches may run
    /// in other processes tells them when the transaction commits, so waiters for a write to become
    /// searchable look again.
    func setCheckpoint(_ consumer: String, _ position: String) throws
    /// Forgets a consumer's position: it starts from the beginning of its change log.
    func removeCheckpoint(_ consumer: String) throws
    /// Each projected kind's version, and the rebuild in progress if any.
    func projectionStates() throws -> [String: ProjectionState]
    /// Replaces a projected kind's state.
    func setProjectionState(_ kind: String, _ state: ProjectionState) throws
    /// Records that a kind's items are built with `version`, unless the kind is known already.
    func noteProjectionVersion(_ kind: String, _ version: Int) throws
    /// Whether any record waits in quarantine.
    func hasQuarantinedRecords() throws -> Bool
    /// The identifiers of every item `owner` made, expired or not.
    func identifiers(ownedBy owner: ItemOwner) throws -> [ItemIdentifier]
    /// Holds back a record the projection could not project, with why, replacing its earlier entry.
    func quarantine(_ identifier: ItemIdentifier, kind: String, recordID: String, version: Int64, reason: String) throws
    /// Lets a record out of quarantine (a newer version projected, or it was deleted).
    func releaseFromQuarantine(_ identifier: ItemIdentifier) throws
    /// The version at which the record behind an identifier was deleted, while one is remembered.
    func tombstoneVersion(_ identifier: ItemIdentifier) throws -> Int64?
    /// Remembers that the record behind an identifier was deleted at `version`, keeping the higher of
    /// that and a version already remembered.
    func setTombstone(_ identifier: ItemIdentifier, version: Int64) throws
    /// Forgets a deletion: the record was written again.
    func clearTombstone(_ identifier: ItemIdentifier) throws
    /// The version an item was projected from, when its owner records one as a number.
    func storedVersion(_ identifier: ItemIdentifier) throws -> Int64?
    /// Keeps what a source saw of one of its entries, replacing what it saw before.
    func setEntry(_ entry: SourceEntry, source: String) throws
    /// Forgets one of a source's entries.
    func removeEntry(_ key: String, source: String) throws
    /// Forgets a source's entries whose keys start with `prefix` (a folder's).
    func removeEntries(withKeyPrefix prefix: String, source: String) throws
    /// Forgets everything of a source: the items `owner` made, its entries and `consumer`'s checkpoint.
    func forgetSource(named source: String, owner: ItemOwner, checkpoint consumer: String) throws

    // MARK: Activities, enrichment, vectors

    /// Stores donated activities: a persistent identifier already held counts one more view, and a
    /// search-eligible activity about no item of this index stands in as an item of its own until that
    /// item is indexed (``IndexWriter/updateStandIn(for:at:)``).
    func donate(_ activities: [UserActivity]) throws
    /// Deletes activities by persistent identifier, and the items that stood in for them; returns how many.
    @discardableResult
    func deleteActivities(_ persistentIdentifiers: [String]) throws -> Int
    /// Deletes every activity (Core Spotlight's `deleteSavedUserActivities`), and the items that stood in
    /// for them; returns how many.
    @discardableResult
    func deleteAllActivities() throws -> Int
    /// Stores what the enrichment pass made of an item, unless it changed since `pending` was read.
    ///
    /// - Returns: the item as merged, or `nil` when it changed since it was read (it stays pending).
    @discardableResult
    func applyEnrichment(
        to pending: PendingEnrichment, input: String, summary: String?, priority: Bool?,
        skipped: [String]
    ) throws -> SearchableItem?
    /// Notes that enriching an item failed: it stays pending, and is tried again from `retry`.
    func recordEnrichmentFailure(_ pending: PendingEnrichment, error: String, retry: Date) throws
    /// Forgets an item that no longer asks for enrichment.
    func dropEnrichment(_ pending: PendingEnrichment) throws
    /// Stores an item's passage vectors, unless its text changed since `pending` was read.
    @discardableResult
    func setVectors(_ vectors: [[Float]], for pending: PendingEmbedding, model: String) throws -> Bool
}

extension IndexWriter {
    /// Fails with ``ReplicaError/Code/notOwner`` if any write of this transaction was refused because
    /// another owner made the item; the caller's transaction then rolls back.
    package func throwIfRefused() throws {
        guard let first = refusedOwnership.first else { return }
        let more = refusedOwnership.count > 1 ? " (and \(refusedOwnership.count - 1) more)" : ""
        throw ReplicaError(
            .notOwner,
            "item '\(first.identifier)'\(more) was made by \(first.owner), and only its owner can change it; nothing was written. Use another identifier"
        )
    }

    @discardableResult
    package func index(_ item: SearchableItem) throws -> UpsertOutcome { try index(item, origin: .api) }

    /// Adds or replaces items, all from one origin.
    package func index(contentsOf items: [SearchableItem], origin: ItemOrigin = .api) throws {
        try index(contentsOf: items.map { ($0, origin) })
    }

    package func rowID(of identifier: ItemIdentifier) throws -> Int64? { try rowID(of: identifier, owner: nil) }

    @discardableResult
    package func purgeExpired() throws -> Int { try purgeExpired(limit: 1000) }
}

// Rules every backend's writer follows, written once over the protocol.
extension IndexWriter {
    /// Keeps a donated activity's own item as its rule says: a search-eligible activity about no item of
    /// this index stands in as an item of its own (made by `.activities`); otherwise its stand-in goes.
    package func updateStandIn(for activity: UserActivity, at date: Date) throws {
        let aboutIndexedItem = try activity.relatedUniqueIdentifier.map { try rowID(of: $0) != nil } ?? false
        guard activity.isEligibleForSearch && !aboutIndexedItem else {
            _ = try delete(identifiers: [activity.itemIdentifier], owner: .activities)
            return
        }
        var attributes = activity.attributeSet ?? AttributeSet()
        if let title = activity.title { attributes.title = title }
        if !activity.keywords.isEmpty { attributes.keywords = (attributes.keywords ?? []) + activity.keywords }
        attributes[.lastUsedDate] = .date(date)
        if let entity = activity.entity {
            attributes[.entityType] = .text(entity.typeName)
            attributes[.entityID] = .text(entity.id)
        }
        let item = SearchableItem(
            uniqueIdentifier: activity.itemIdentifier, attributeSet: attributes, expirationDate: .distantFuture)
        try item.validate()
        try index(item, origin: ItemOrigin(owner: .activities))
    }

    /// Merges an enrichment's summary and priority into the item as its own owner made it.
    ///
    /// - Returns: the item as merged (unchanged when there is nothing to merge), or `nil` when the merge
    ///   found the item gone.
    package func mergeEnrichmentResults(into pending: PendingEnrichment, summary: String?, priority: Bool?) throws
        -> SearchableItem?
    {
        var update = AttributeSet()
        if let summary { update[.textContentSummary] = .text(summary) }
        if let priority { update[.isPriority] = .bool(priority) }
        var merged = pending.item
        guard !update.isEmpty else { return merged }
        let item = SearchableItem(uniqueIdentifier: pending.item.uniqueIdentifier, attributeSet: update, isUpdate: true)
        guard try index(item, origin: pending.origin) == .merged else { return nil }
        merged.attributeSet = merged.attributeSet.merging(update)
        return merged
    }
}

extension IndexReader {
    /// None: a backend that leaves no snippet to be made.
    package func snippets(_ pending: [(rowID: Int64, identifier: ItemIdentifier, expression: String)]) throws -> [Int64:
        String]
    { [:] }
}
