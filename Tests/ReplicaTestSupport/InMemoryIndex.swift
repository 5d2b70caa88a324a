package import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaText
import Synchronization

// A third backend behind the index's seam, in memory: it shows that the seam is all an index needs
// (`IndexConformanceTests` runs the same behaviour on it, on SQLite and on PostgreSQL). What it writes is
// one value, copied for each transaction and put back when the transaction ends without an error, so a
// failed write leaves nothing, as a database's rollback does. Its words are the analyzer's tokens of
// each column (the same tokens both databases index), matched term by term and scored by BM25 with the
// column weights; it keeps no ranking lists (a search scores every match, as the databases do without
// them) and makes every item's words when it reads them, so there are none to make again.

/// An index kept in memory.
package final class InMemoryIndexStorage: IndexStorage {
    private let state = Mutex(InMemoryIndexState())
    private let closed = Mutex(false)

    package init() {}

    package func write<T: Sendable>(
        now: Date, defaultLifetime: TimeInterval, prepare: @escaping @Sendable () throws -> Void,
        _ body: @escaping @Sendable (any IndexWriter) throws -> T
    ) async throws -> T {
        try writeNow(now: now, defaultLifetime: defaultLifetime, prepare: prepare, body)
    }

    package func writeNow<T>(
        now: Date, defaultLifetime: TimeInterval, prepare: () throws -> Void, _ body: (any IndexWriter) throws -> T
    ) throws -> T {
        try checkOpen()
        return try state.withLock { state in
            try prepare()
            let writer = InMemoryIndexWriter(state: state, now: now, defaultLifetime: defaultLifetime)
            let result = try body(writer)
            try writer.saveWrittenLanguages()
            state = writer.state
            return result
        }
    }

    package func read<T: Sendable>(
        now: Date, prepare: @escaping @Sendable () throws -> Void,
        _ body: @escaping @Sendable (any IndexReader) throws -> T
    ) async throws -> T {
        try checkOpen()
        try prepare()
        return try body(InMemoryIndexReader(state: state.withLock { $0 }, now: now))
    }

    package func size() -> Int { state.withLock { $0.rows.values.reduce(0) { $0 + $1.size } } }
    package func compactedSize() async throws -> Int { size() }
    package func settle() async throws {}

    /// Counted in each transaction, in a load or not: nothing is held back.
    package func settleVocabulary() async throws {}
    package func close(discarding: Bool) { closed.withLock { $0 = true } }

    private func checkOpen() throws {
        guard !closed.withLock({ $0 }) else { throw ReplicaError(.accountNotSignedIn, "the index was closed") }
    }
}

/// One stored item.
struct InMemoryRow: Sendable {
    var id: Int64
    var row: PreparedRow
    /// Each column's tokens in ranking order (title, keywords, people, description, body): a token's
    /// positions in its column.
    var columns: [[String: [Int]]]
    /// Each column's length in positions.
    var lengths: [Int]

    init(id: Int64, row: PreparedRow) {
        self.id = id
        self.row = row
        columns = []
        lengths = []
        let text = row.text
        for column in [text.title, text.keywords, text.people, text.description, text.body] {
            var positions: [String: [Int]] = [:]
            var position = -1
            for token in TextAnalyzer.tokens(in: column, for: .indexing, language: text.language) {
                if !token.isColocated { position += 1 }
                positions[token.text, default: []].append(max(position, 0))
            }
            columns.append(positions)
            lengths.append(position + 1)
        }
    }

    var identifier: ItemIdentifier { ItemIdentifier(row.identifier) }
    var size: Int { row.attributes.utf8.count + lengths.reduce(0, +) * 8 }

    /// The item as stored, with its text content.
    func item() throws -> SearchableItem {
        let attributes = try AttributeSet(
            stored: row.attributes, contentType: row.contentType, body: row.text.body, title: row.text.title,
            description: row.text.description)
        return SearchableItem(
            uniqueIdentifier: identifier, domainIdentifier: row.domain.map(DomainIdentifier.init(rawValue:)),
            attributeSet: attributes, expirationDate: Date(timeIntervalSince1970: row.expires))
    }

    func found(score: Double) throws -> FoundItem {
        FoundItem(
            item: try item(), score: score, snippet: String(row.text.body.prefix(200)), origin: row.origin,
            indexedAt: Date(timeIntervalSince1970: row.indexed))
    }

    /// Where in each column a sequence of tokens stands, the last one as a prefix when `prefix`: the
    /// column and the position of its first token.
    func places(of tokens: [String], prefix: Bool) -> [(column: Int, position: Int)] {
        guard let first = tokens.first else { return [] }
        var places: [(column: Int, position: Int)] = []
        for (column, positions) in columns.enumerated() {
            func at(_ token: String, last: Bool) -> Set<Int> {
                guard last && prefix else { return Set(positions[token] ?? []) }
                return Set(positions.filter { $0.key.hasPrefix(token) }.flatMap(\.value))
            }
            var starts = at(first, last: tokens.count == 1)
            for (offset, token) in tokens.enumerated().dropFirst() {
                let next = at(token, last: offset == tokens.count - 1)
                starts = starts.filter { next.contains($0 + offset) }
            }
            places += starts.sorted().map { (column, $0) }
        }
        return places
    }
}

/// Everything an index holds: the items and what is kept beside them.
struct InMemoryIndexState: Sendable {
    var rows: [Int64: InMemoryRow] = [:]
    var byIdentifier: [String: Int64] = [:]
    var nextID: Int64 = 1
    var clientState: Data?
    /// As a new index on either database starts: its languages counted from its first item.
    var meta: [String: String] = [WrittenLanguages.key: ""]
    var contentTypes: [String: String] = [:]
    var checkpoints: [String: String] = [:]
    var projectionStates: [String: ProjectionState] = [:]
    var quarantine: [String: (kind: String, recordID: String, version: Int64, reason: String)] = [:]
    var tombstones: [String: Int64] = [:]
    var entries: [String: [String: SourceEntry]] = [:]
    var activities: [String: (activity: UserActivity, date: Date, views: Int)] = [:]
    /// Rows the enrichment pass has enriched.
    var enriched: Set<Int64> = []
    /// Rows waiting for the enrichment pass, with what an earlier pass made of them.
    var enrichment: [Int64: (input: String?, summary: String?, priority: Bool?, attempts: Int, retry: Date?)] = [:]
    /// Each model's vectors, by row.
    var vectors: [String: [Int64: [[Float]]]] = [:]

    func live(_ now: Date) -> [InMemoryRow] {
        rows.values.filter { $0.row.expires > now.timeIntervalSince1970 }.sorted { $0.id < $1.id }
    }
}

/// The reads of an in-memory index, on the value it held when the read began.
package struct InMemoryIndexReader: IndexReader {
    var state: InMemoryIndexState
    package let now: Date

    static let columnWeights: [Double] = [10, 5, 5, 2, 1]

    // MARK: Search

    package func matches(_ query: SearchQuery, pattern: FTSPattern?, limit: Int) throws
        -> (found: [(item: FoundItem, rowID: Int64)], inHeading: Set<Int64>, unreadable: [ItemIdentifier])
    {
        let passing = try rowIDs(passing: query)
        let rows = state.live(now).filter { passing?.contains($0.id) ?? true }
        guard let pattern else {
            func changed(_ row: InMemoryRow) -> Double { row.row.modified ?? row.row.created ?? row.row.indexed }
            let listed = rows.sorted { (changed($0), $1.id) > (changed($1), $0.id) }.prefix(limit)
            return (try listed.map { (try $0.found(score: 0), $0.id) }, [], [])
        }
        let terms = pattern.requiresAll ? pattern.terms : pattern.meaningfulTerms
        let matching = rows.filter { row in
            pattern.requiresAll ? terms.allSatisfy { holds(row, $0) } : terms.contains { holds(row, $0) }
        }
        let phrases = terms.flatMap { term in zip(term.alternatives, term.alternativeWeights()).map { ($0, $1) } }
        let averages = (0..<5).map { column in
            Double(rows.reduce(0) { $0 + $1.lengths[column] }) / Double(max(rows.count, 1))
        }
        var scored: [(row: InMemoryRow, score: Double)] = []
        for row in matching {
            var score = 0.0
            for (phrase, weight) in phrases {
                let holders = rows.filter { holds($0, phrase) }.count
                let idf = max(1e-6, log((Double(rows.count - holders) + 0.5) / (Double(holders) + 0.5)))
                let places = row.places(of: Self.tokens(of: phrase), prefix: Self.isPrefix(phrase))
                for column in 0..<5 {
                    let frequency = Double(places.filter { $0.column == column }.count)
                    guard frequency > 0 else { continue }
                    let length = Double(row.lengths[column]) / max(averages[column], 1)
                    score +=
                        weight * idf * Self.columnWeights[column] * frequency * 2.2
                        / (frequency + 1.2 * (0.25 + 0.75 * length))
                }
            }
            scored.append((row, score))
        }
        let best = scored.sorted { ($0.score, $1.row.id) > ($1.score, $0.row.id) }.prefix(limit)
        let inHeading = Set(
            best.filter { entry in
                terms.contains { term in
                    term.alternatives.contains { phrase in
                        entry.row.places(of: Self.tokens(of: phrase), prefix: Self.isPrefix(phrase)).contains {
                            $0.column < 3
                        }
                    }
                }
            }.map(\.row.id))
        return (try best.map { (try $0.row.found(score: $0.score), $0.row.id) }, inHeading, [])
    }

    package func rows(matching match: TermMatch, among rowIDs: [Int64]) throws -> Set<Int64> {
        Set(rowIDs.filter { id in state.rows[id].map { Self.holds($0, match) } ?? false })
    }

    package func rowIDs(passing query: SearchQuery) throws -> Set<Int64>? {
        let filtered =
            !query.contentTypes.isEmpty || !query.domains.isEmpty || !query.authors.isEmpty
            || !query.recipients.isEmpty || !query.owners.isEmpty || !query.excludedOwners.isEmpty
            || query.created != nil || query.modified != nil || query.predicate != nil
        guard filtered else { return nil }
        let matcher = query.predicate.map { PredicateMatcher($0, now: now, timeZone: query.timeZone) }
        return Set(
            try state.live(now).filter { row in
                try passes(row, query) && (matcher?.matches(try row.item().attributeSet) ?? true)
            }.map(\.id))
    }

    private func passes(_ stored: InMemoryRow, _ query: SearchQuery) throws -> Bool {
        let row = stored.row
        if !query.contentTypes.isEmpty && !query.contentTypes.contains(.item) {
            guard let type = row.contentType, let tree = state.contentTypes[type],
                query.contentTypes.contains(where: { tree.contains(" \($0.rawValue) ") })
            else { return false }
        }
        if !query.domains.isEmpty {
            guard let domain = row.domain,
                query.domains.contains(where: {
                    domain == $0.rawValue || domain.hasPrefix($0.rawValue + ".")
                })
            else { return false }
        }
        if !query.authors.isEmpty,
            !query.authors.contains(where: { row.authors?.contains($0.lowercased()) ?? false })
        {
            return false
        }
        if !query.recipients.isEmpty,
            !query.recipients.contains(where: { row.recipients?.contains($0.lowercased()) ?? false })
        {
            return false
        }
        if !query.owners.isEmpty && !query.owners.contains(row.origin.owner) { return false }
        if query.excludedOwners.contains(row.origin.owner) { return false }
        for (value, range) in [(row.created, query.created), (row.modified, query.modified)] {
            guard let range else { continue }
            guard let value else { return false }
            if let start = range.start, value < start.timeIntervalSince1970 { return false }
            if let end = range.end, value >= end.timeIntervalSince1970 { return false }
        }
        return true
    }

    package func nearest(to query: [Float], model: String, filters: SearchQuery, limit: Int, floor: MeaningFloor)
        throws -> [(rowID: Int64, cosine: Double)]
    {
        let passing = try rowIDs(passing: filters)
        let live = Set(state.live(now).map(\.id))
        let vectors = state.vectors[model] ?? [:]
        // The floor stands on every passage's cosine, in row order as a matrix holds them.
        let scores = vectors.keys.sorted().flatMap { id in
            vectors[id, default: []].map { vector in zip(vector, query).reduce(Float(0)) { $0 + $1.0 * $1.1 } }
        }
        let threshold = floor.threshold(among: scores)
        let ids = vectors.keys.filter { live.contains($0) && (passing?.contains($0) ?? true) }
        return try cosines(of: ids, to: query, model: model).filter { $0.value >= threshold }
            .sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(limit).map { ($0.key, $0.value) }
    }

    package func cosines(of rowIDs: [Int64], to query: [Float], model: String) throws -> [Int64: Double] {
        try bestPassageCosines(of: rowIDs, to: query, model: model).mapValues(\.cosine)
    }

    package func bestPassages(of rowIDs: [Int64], to query: [Float], model: String) throws -> [Int64: Int] {
        try bestPassageCosines(of: rowIDs, to: query, model: model).mapValues(\.passage)
    }

    private func bestPassageCosines(of rowIDs: [Int64], to query: [Float], model: String) throws
        -> [Int64: (passage: Int, cosine: Double)]
    {
        var best: [Int64: (passage: Int, cosine: Double)] = [:]
        for id in rowIDs {
            for (passage, vector) in (state.vectors[model]?[id] ?? []).enumerated() {
                let cosine = Double(zip(vector, query).reduce(Float(0)) { $0 + $1.0 * $1.1 })
                if cosine > best[id]?.cosine ?? -.infinity { best[id] = (passage, cosine) }
            }
        }
        return best
    }

    package func foundItems(_ rowIDs: [Int64]) throws -> [(item: FoundItem, rowID: Int64)] {
        try rowIDs.compactMap { id in try state.rows[id].map { (try $0.found(score: 0), id) } }
    }

    package func textContents(of identifiers: [ItemIdentifier]) throws -> [ItemIdentifier: String] {
        var contents: [ItemIdentifier: String] = [:]
        for identifier in identifiers {
            if let id = state.byIdentifier[identifier.rawValue], let body = state.rows[id]?.row.text.body,
                !body.isEmpty
            {
                contents[identifier] = body
            }
        }
        return contents
    }

    package func engagement(of identifiers: [ItemIdentifier]) throws -> [ItemIdentifier: Double] {
        var engagement: [ItemIdentifier: Double] = [:]
        for identifier in identifiers {
            let about = state.activities.values.filter {
                $0.activity.isEligibleForSearch && $0.activity.relatedUniqueIdentifier == identifier
            }
            guard let last = about.map(\.date).max() else { continue }
            engagement[identifier] = Engagement.value(
                lastViewed: last, views: about.reduce(0) { $0 + $1.views }, now: now)
        }
        return engagement
    }

    /// Whether a row holds a term: any of its alternatives.
    func holds(_ row: InMemoryRow, _ term: FTSPattern.Term) -> Bool { Self.holds(row, .term(term)) }

    static func holds(_ row: InMemoryRow, _ match: TermMatch) -> Bool {
        switch match {
        case .term(let term):
            return term.alternatives.contains { !row.places(of: tokens(of: $0), prefix: isPrefix($0)).isEmpty }
        case .all(let matches): return matches.allSatisfy { holds(row, $0) }
        case .any(let matches): return matches.contains { holds(row, $0) }
        case .near(let groups, let distance):
            // Each group's phrases side by side somewhere in one column, all within `distance` words of
            // one another (counted between them, as FTS5's NEAR counts).
            let spans: [[(column: Int, start: Int, end: Int)]] = groups.map { group in
                group.phrases.flatMap { phrase in
                    let tokens = tokens(of: phrase)
                    return row.places(of: tokens, prefix: isPrefix(phrase)).map {
                        ($0.column, $0.position, $0.position + tokens.count)
                    }
                }
            }
            guard !spans.contains(where: \.isEmpty) else { return false }
            func near(_ index: Int, column: Int, start: Int, end: Int, inside: Int) -> Bool {
                guard index < spans.count else { return end - start - inside <= distance }
                return spans[index].contains { span in
                    span.column == column
                        && near(
                            index + 1, column: column, start: min(start, span.start), end: max(end, span.end),
                            inside: inside + span.end - span.start)
                }
            }
            return spans[0].contains {
                near(1, column: $0.column, start: $0.start, end: $0.end, inside: $0.end - $0.start)
            }
        }
    }

    static func tokens(of term: FTSPattern.Term) -> [String] {
        let text: String =
            switch term {
            case .word(let text, _), .phrase(let text, _), .forms(let text, _, _, _): text
            }
        return TextAnalyzer.tokens(in: text, for: .query).filter { !$0.isColocated }.map(\.text)
    }

    static func isPrefix(_ term: FTSPattern.Term) -> Bool {
        switch term {
        case .word(_, let prefix), .phrase(_, let prefix): prefix
        case .forms: false
        }
    }

    // MARK: Items

    package func items(withIdentifiers identifiers: [ItemIdentifier]) throws -> [(SearchableItem, ItemOrigin, Date)] {
        try identifiers.compactMap { identifier in
            guard let id = state.byIdentifier[identifier.rawValue], let row = state.rows[id],
                row.row.expires > now.timeIntervalSince1970
            else { return nil }
            return (try row.item(), row.row.origin, Date(timeIntervalSince1970: row.row.indexed))
        }
    }

    package func allItems() throws -> [(SearchableItem, ItemOrigin, Date)] {
        try state.live(now).sorted { $0.row.identifier < $1.row.identifier }.map {
            (try $0.item(), $0.row.origin, Date(timeIntervalSince1970: $0.row.indexed))
        }
    }

    package func count() throws -> Int { state.live(now).count }
    package func rankingListsAreStale(minimumItems: Int) throws -> Bool { false }
    package func knownWordsPresent(_ terms: [FTSPattern.Term], in rowIDs: [Int64]) -> [Int64: Int]? { nil }
    package func clientState() throws -> Data? { state.clientState }
    package func meta(_ key: String) throws -> String? { state.meta[key] }

    /// How many live items hold each token.
    private func vocabulary() -> [String: Int64] {
        var documents: [String: Int64] = [:]
        for row in state.live(now) {
            for token in Set(row.columns.flatMap(\.keys)) where TextAnalyzer.Vocabulary.holds(token) {
                documents[token, default: 0] += 1
            }
        }
        return documents
    }

    package func vocabularyDocuments(ofAny words: [String]) throws -> Int64 {
        let documents = vocabulary()
        return words.compactMap { documents[$0] }.max() ?? 0
    }

    package func vocabulary(beginningWith first: String, lengths: ClosedRange<Int>, heldByMoreThan documents: Int64)
        throws -> [(word: String, documents: Int64)]
    {
        vocabulary().filter { $0.key.hasPrefix(first) && lengths.contains($0.key.count) && $0.value > documents }
            .sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
            .map { ($0.key, $0.value) }
    }

    package func completionSources(of prefix: String, sample: Int) throws -> [CompletionSource] {
        try state.live(now).sorted { $0.id > $1.id }.compactMap { row -> CompletionSource? in
            var words = Set<String>()
            for column in [row.row.text.title, row.row.text.keywords, row.row.text.description, row.row.text.body] {
                CompletionSource.forEachWord(in: column, beginning: prefix) { words.insert($0) }
            }
            guard !words.isEmpty else { return nil }
            return CompletionSource(
                item: try row.item(), origin: row.row.origin, indexedAt: Date(timeIntervalSince1970: row.row.indexed),
                words: words, title: row.row.text.title.isEmpty ? nil : row.row.text.title)
        }.prefix(sample).map { $0 }
    }

    // MARK: Activities, enrichment, vectors

    package func recentActivities(limit: Int) throws -> [RecentActivity] {
        var byItem: [ItemIdentifier: (activity: UserActivity, date: Date, views: Int)] = [:]
        for entry in state.activities.values where entry.activity.isEligibleForPrediction {
            let item = entry.activity.relatedUniqueIdentifier ?? entry.activity.itemIdentifier
            let held = byItem[item]
            byItem[item] = (
                held.map { $0.date >= entry.date ? $0.activity : entry.activity } ?? entry.activity,
                max(held?.date ?? entry.date, entry.date), (held?.views ?? 0) + entry.views
            )
        }
        return byItem.map { item, entry in
            RecentActivity(
                identifier: item,
                title: state.byIdentifier[item.rawValue].flatMap { state.rows[$0]?.row.text.title }
                    ?? entry.activity.title,
                activityType: entry.activity.activityType, lastViewed: entry.date, views: entry.views,
                engagement: Engagement.value(lastViewed: entry.date, views: entry.views, now: now),
                entity: entry.activity.entity)
        }.sorted { ($0.engagement, $1.identifier.rawValue) > ($1.engagement, $0.identifier.rawValue) }
            .prefix(limit).map { $0 }
    }

    package func pendingEnrichment(limit: Int) throws -> [PendingEnrichment] {
        try state.enrichment.filter { $0.value.retry.map { $0 <= now } ?? true }.keys.sorted().prefix(limit)
            .compactMap { id in
                guard let row = state.rows[id], let entry = state.enrichment[id] else { return nil }
                return PendingEnrichment(
                    rowID: id, item: try row.item(), origin: row.row.origin, indexed: row.row.indexed,
                    input: entry.input, summary: entry.summary, priority: entry.priority, attempts: entry.attempts)
            }
    }

    package func thread(domain: DomainIdentifier, upTo date: Date?, limit: Int) throws -> [SearchableItem] {
        func written(_ row: InMemoryRow) -> Double { row.row.created ?? row.row.indexed }
        return try state.live(now).filter { row in
            row.row.domain == domain.rawValue && (date.map { written(row) <= $0.timeIntervalSince1970 } ?? true)
        }.sorted { (written($0), $0.id) > (written($1), $1.id) }.prefix(limit).reversed().map { try $0.item() }
    }

    package func enrichmentCounts() throws -> EnrichmentCounts {
        var counts = EnrichmentCounts()
        for entry in state.enrichment.values {
            if entry.attempts > 0 { counts.failing += 1 } else { counts.pending += 1 }
        }
        counts.enriched = state.enriched.count
        return counts
    }

    package func pendingEmbeddings(model: String, limit: Int) throws -> [PendingEmbedding] {
        let embedded = state.vectors[model] ?? [:]
        return state.live(now).filter { embedded[$0.id] == nil }.prefix(limit).map { row in
            PendingEmbedding(
                rowID: row.id, indexed: row.row.indexed,
                text: PendingEmbedding.text(
                    title: row.row.text.title, description: row.row.text.description, body: row.row.text.body))
        }
    }

    package func embeddingCounts(model: String) throws -> (items: Int, passages: Int, backlog: Int) {
        let vectors = state.vectors[model] ?? [:]
        return (vectors.count, vectors.values.reduce(0) { $0 + $1.count }, try embeddingBacklog(model: model))
    }

    package func embeddingBacklog(model: String) throws -> Int {
        state.live(now).filter { state.vectors[model]?[$0.id] == nil }.count
    }

    package func holdsVectors(model: String) throws -> Bool { !(state.vectors[model] ?? [:]).isEmpty }

    // MARK: Projection and sources

    package func quarantined(account: AccountID) throws -> [QuarantinedRecord] {
        state.quarantine.sorted { $0.key < $1.key }.map {
            QuarantinedRecord(
                account: account, kind: $0.value.kind, id: $0.value.recordID, version: $0.value.version,
                reason: $0.value.reason)
        }
    }

    package func checkpoint(_ consumer: String) throws -> String? { state.checkpoints[consumer] }

    package func rebuildsInProgress() throws -> [(kind: String, from: Int, target: Int, cursor: String?)] {
        state.projectionStates.sorted { $0.key < $1.key }.compactMap { kind, state in
            state.targetVersion.map { (kind, state.version, $0, state.cursor) }
        }
    }

    package func sourceEntries(_ source: String) throws -> [String: SourceEntry] {
        state.entries[source] ?? [:]
    }

    package func skippedEntries(_ source: String) throws -> [(String, Int)] {
        var reasons: [String: Int] = [:]
        for entry in (state.entries[source] ?? [:]).values {
            if let reason = entry.skipReason { reasons[reason, default: 0] += 1 }
        }
        return reasons.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}

/// The writes of an in-memory index, on its own copy of the index until the transaction ends.
final class InMemoryIndexWriter: IndexRowWriter {
    var state: InMemoryIndexState
    let now: Date
    let defaultLifetime: TimeInterval
    var writtenLanguages = WrittenLanguages()
    var refusedOwnership: [(identifier: ItemIdentifier, writer: ItemOwner, owner: ItemOwner)] = []
    private var recordedTypes = ContentTypeMemo()

    init(state: InMemoryIndexState, now: Date, defaultLifetime: TimeInterval) {
        self.state = state
        self.now = now
        self.defaultLifetime = defaultLifetime
    }

    // MARK: Row operations (IndexRowWriter)

    func storedRow(_ identifier: ItemIdentifier) throws -> StoredRow? {
        guard let id = state.byIdentifier[identifier.rawValue], let stored = state.rows[id] else { return nil }
        let row = stored.row
        return StoredRow(
            id: id, domain: row.domain, contentType: row.contentType, created: row.created, modified: row.modified,
            expires: row.expires, authors: row.authors, recipients: row.recipients, attributes: row.attributes,
            owner: row.origin.owner, text: row.text)
    }

    func insertIfNew(_ row: PreparedRow) throws -> Int64? {
        guard state.byIdentifier[row.identifier] == nil else { return nil }
        let id = state.nextID
        state.nextID += 1
        state.byIdentifier[row.identifier] = id
        state.rows[id] = InMemoryRow(id: id, row: row)
        writtenLanguages.add(row.text.language)
        return id
    }

    func writeSourceVersion(of row: PreparedRow, over stored: StoredRow) throws {
        try writeMetadata(of: row, over: stored)
    }

    func writeMetadata(of row: PreparedRow, over stored: StoredRow) throws {
        // The same text: its columns' tokens stay.
        state.rows[stored.id]?.row = row
    }

    func rewrite(_ stored: StoredRow, with row: PreparedRow) throws {
        state.rows[stored.id] = InMemoryRow(id: stored.id, row: row)
        writtenLanguages.add(row.text.language)
        for model in state.vectors.keys { state.vectors[model]?[stored.id] = nil }
    }

    func recordContentType(_ type: ContentType, tree explicit: [String]?) throws {
        guard let tree = recordedTypes.treeToRecord(for: type, explicit: explicit) else { return }
        state.contentTypes[type.rawValue] = " " + tree + " "
        recordedTypes.noteRecorded(type, tree: tree)
    }

    func queueEnrichment(_ rowID: Int64) throws {
        state.enrichment[rowID] = (nil, nil, nil, 0, nil)
        state.enriched.remove(rowID)
    }

    func mayHaveStandIns() throws -> Bool {
        state.activities.values.contains {
            $0.activity.isEligibleForSearch && $0.activity.relatedUniqueIdentifier != nil
        }
    }

    func dropActivityItems(about identifier: String) throws {
        let standIns = state.activities.values.filter {
            $0.activity.isEligibleForSearch && $0.activity.relatedUniqueIdentifier?.rawValue == identifier
        }.map(\.activity.itemIdentifier)
        try delete(identifiers: standIns, owner: .activities)
    }

    // MARK: Items

    func index(contentsOf entries: [(SearchableItem, ItemOrigin)]) throws {
        for (item, origin) in entries { try index(item, origin: origin) }
    }

    func rowID(of identifier: ItemIdentifier, owner: ItemOwner?) throws -> Int64? {
        guard let id = state.byIdentifier[identifier.rawValue], let row = state.rows[id] else { return nil }
        return owner.map { row.row.origin.owner == $0 } ?? true ? id : nil
    }

    func absent(_ identifiers: [ItemIdentifier]) throws -> Set<ItemIdentifier> {
        Set(identifiers.filter { state.byIdentifier[$0.rawValue] == nil })
    }

    /// Deletes the rows that `condition` picks, of `owner` when one is given.
    private func deleteRows(owner: ItemOwner?, where condition: (InMemoryRow) -> Bool) -> Int {
        let doomed = state.rows.values.filter { row in
            condition(row) && (owner.map { row.row.origin.owner == $0 } ?? true)
        }
        for row in doomed { try? deleteRow(row.id) }
        return doomed.count
    }

    @discardableResult
    func delete(identifiers: [ItemIdentifier], owner: ItemOwner?) throws -> Int {
        let wanted = Set(identifiers.map(\.rawValue))
        return deleteRows(owner: owner) { wanted.contains($0.row.identifier) }
    }

    @discardableResult
    func delete(domains: [DomainIdentifier], owner: ItemOwner?) throws -> Int {
        deleteRows(owner: owner) { row in
            guard let domain = row.row.domain else { return false }
            return domains.contains { domain == $0.rawValue || domain.hasPrefix($0.rawValue + ".") }
        }
    }

    @discardableResult
    func delete(owner: ItemOwner) throws -> Int { deleteRows(owner: owner) { _ in true } }
    @discardableResult
    func deleteAll(owner: ItemOwner?) throws -> Int { deleteRows(owner: owner) { _ in true } }

    func deleteRow(_ id: Int64) throws {
        guard let row = state.rows.removeValue(forKey: id) else { return }
        state.byIdentifier[row.row.identifier] = nil
        state.enrichment[id] = nil
        state.enriched.remove(id)
        for model in state.vectors.keys { state.vectors[model]?[id] = nil }
    }

    @discardableResult
    func deleteItems(withIdentifierPrefix prefix: String, owner: ItemOwner) throws -> Int {
        deleteRows(owner: owner) { $0.row.identifier.hasPrefix(prefix) }
    }

    @discardableResult
    func purgeExpired(limit: Int) throws -> Int {
        let expired = state.rows.values.filter { $0.row.expires <= now.timeIntervalSince1970 }.map(\.id).sorted()
        for id in expired.prefix(limit) { try deleteRow(id) }
        return min(expired.count, limit)
    }

    /// None to build: this index scores every match.
    func rebuildRankingLists() throws -> RankingLists.Summary { RankingLists.Summary(terms: 0, entries: 0) }
    func removeRankingLists() throws {}
    /// Nothing to make again: this index makes an item's words whenever it reads them.
    func remakeWords(batchSize: Int, tally: WordsRemake.VocabularyTally) throws -> WordsRemake.Step { .finished }

    // MARK: State kept beside the items

    func setClientState(_ state: Data) throws { self.state.clientState = state }
    func clientState() throws -> Data? { state.clientState }
    func setMeta(_ key: String, _ value: String?) throws { state.meta[key] = value }
    func meta(_ key: String) throws -> String? { state.meta[key] }
    func checkpoint(_ consumer: String) throws -> String? { state.checkpoints[consumer] }
    func setCheckpoint(_ consumer: String, _ position: String) throws { state.checkpoints[consumer] = position }
    func removeCheckpoint(_ consumer: String) throws { state.checkpoints[consumer] = nil }
    func projectionStates() throws -> [String: ProjectionState] { state.projectionStates }

    func setProjectionState(_ kind: String, _ state: ProjectionState) throws {
        self.state.projectionStates[kind] = state
    }

    func noteProjectionVersion(_ kind: String, _ version: Int) throws {
        if state.projectionStates[kind] == nil {
            state.projectionStates[kind] = ProjectionState(version: version, targetVersion: nil, cursor: nil)
        }
    }

    func hasQuarantinedRecords() throws -> Bool { !state.quarantine.isEmpty }

    func identifiers(ownedBy owner: ItemOwner) throws -> [ItemIdentifier] {
        state.rows.values.filter { $0.row.origin.owner == owner }.map(\.identifier).sorted { $0.rawValue < $1.rawValue }
    }

    func quarantine(_ identifier: ItemIdentifier, kind: String, recordID: String, version: Int64, reason: String) throws
    {
        state.quarantine[identifier.rawValue] = (kind, recordID, version, reason)
    }

    func releaseFromQuarantine(_ identifier: ItemIdentifier) throws { state.quarantine[identifier.rawValue] = nil }
    func tombstoneVersion(_ identifier: ItemIdentifier) throws -> Int64? { state.tombstones[identifier.rawValue] }

    func setTombstone(_ identifier: ItemIdentifier, version: Int64) throws {
        state.tombstones[identifier.rawValue] = max(version, state.tombstones[identifier.rawValue] ?? version)
    }

    func clearTombstone(_ identifier: ItemIdentifier) throws { state.tombstones[identifier.rawValue] = nil }

    func storedVersion(_ identifier: ItemIdentifier) throws -> Int64? {
        state.byIdentifier[identifier.rawValue].flatMap { state.rows[$0]?.row.origin.version }.flatMap { Int64($0) }
    }

    func setEntry(_ entry: SourceEntry, source: String) throws {
        state.entries[source, default: [:]][entry.key] = entry
    }
    func removeEntry(_ key: String, source: String) throws { state.entries[source]?[key] = nil }

    func removeEntries(withKeyPrefix prefix: String, source: String) throws {
        state.entries[source] = state.entries[source]?.filter { !$0.key.hasPrefix(prefix) }
    }

    func forgetSource(named source: String, owner: ItemOwner, checkpoint consumer: String) throws {
        try delete(owner: owner)
        state.entries[source] = nil
        state.checkpoints[consumer] = nil
    }

    // MARK: Activities, enrichment, vectors

    func donate(_ activities: [UserActivity]) throws {
        for activity in activities {
            let date = activity.date ?? now
            let held = state.activities[activity.persistentIdentifier]
            state.activities[activity.persistentIdentifier] = (
                activity, max(held?.date ?? date, date), (held?.views ?? 0) + 1
            )
            try updateStandIn(for: activity, at: date)
        }
    }

    @discardableResult
    func deleteActivities(_ persistentIdentifiers: [String]) throws -> Int {
        var deleted = 0
        for identifier in persistentIdentifiers {
            guard let entry = state.activities.removeValue(forKey: identifier) else { continue }
            try delete(identifiers: [entry.activity.itemIdentifier], owner: .activities)
            deleted += 1
        }
        return deleted
    }

    @discardableResult
    func deleteAllActivities() throws -> Int { try deleteActivities(Array(state.activities.keys)) }

    @discardableResult
    func applyEnrichment(
        to pending: PendingEnrichment, input: String, summary: String?, priority: Bool?, skipped: [String]
    ) throws -> SearchableItem? {
        guard state.rows[pending.rowID]?.row.indexed == pending.indexed else { return nil }
        let merged = try mergeEnrichmentResults(into: pending, summary: summary, priority: priority)
        state.enrichment[pending.rowID] = nil
        state.enriched.insert(pending.rowID)
        return merged
    }

    func recordEnrichmentFailure(_ pending: PendingEnrichment, error: String, retry: Date) throws {
        guard let entry = state.enrichment[pending.rowID] else { return }
        state.enrichment[pending.rowID] = (entry.input, entry.summary, entry.priority, entry.attempts + 1, retry)
    }

    func dropEnrichment(_ pending: PendingEnrichment) throws { state.enrichment[pending.rowID] = nil }

    @discardableResult
    func setVectors(_ vectors: [[Float]], for pending: PendingEmbedding, model: String) throws -> Bool {
        guard state.rows[pending.rowID]?.row.indexed == pending.indexed else { return false }
        state.vectors[model, default: [:]][pending.rowID] = vectors
        return true
    }
}
