import Foundation
import ReplicaSQLite
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex
@testable import ReplicaPostgresStore
@testable import ReplicaSQLiteStore

/// The ranking lists (issue 22 on SQLite, issue 20 on PostgreSQL: the same search over each backend's
/// tables): a ranked search that goes through them returns the top of scoring every match, item for item
/// and score for score, before and after every kind of write the index takes, and goes through them
/// often enough to matter.
@Suite struct RankingListsTests {
    let clock = Fixtures.ManualClock()

    /// A word's tiers are what a list sorted by impact (ties by row id) cut into tiers would hold, each
    /// with the impact of the best item after it as its floor: for lists around every tier's edge, with
    /// many ties (frequencies and lengths drawn from a few values) and none.
    @Test func tiersHoldWhatASortedListWouldCut() {
        var random = SplitMix(seed: 22)
        func sortedTiers(items: [Int64], frequencies: [Int64], lengths: [Int64], firstTier: Int)
            -> [(tier: Int64, floor: Double, entries: [UInt8])]
        {
            let ranked = items.indices.map { index in
                (
                    impact: RankingLists.impact(
                        frequency: Double(frequencies[index]), length: Double(lengths[index]), averageLength: 40),
                    index: index
                )
            }
            .sorted { $0.impact != $1.impact ? $0.impact > $1.impact : $0.index < $1.index }
            var tiers: [(tier: Int64, floor: Double, entries: [UInt8])] = []
            var start = 0
            var size = firstTier
            while start < ranked.count {
                let end = min(ranked.count, start + size)
                let entries = ranked[start..<end].map(\.index).sorted()
                    .map { (rowID: items[$0], frequency: frequencies[$0], length: lengths[$0]) }
                tiers.append(
                    (Int64(tiers.count), end < ranked.count ? ranked[end].impact : 0, RankingLists.encode(entries)))
                start = end
                size *= 4
            }
            return tiers
        }
        for count in [1, 7, 8, 9, 39, 40, 41, 167, 168, 169, 679, 680, 681, 2_727, 2_728, 2_729, 6_000] {
            for spread in [2, 5, 1_000] {
                var rowID: Int64 = 0
                let items = (0..<count).map { _ in
                    rowID += Int64.random(in: 1...3, using: &random)
                    return rowID
                }
                let frequencies = items.map { _ in Int64(Int.random(in: 1...spread, using: &random)) }
                let lengths = items.map { _ in Int64(10 * Int.random(in: 1...spread, using: &random)) }
                let byRow = Dictionary(uniqueKeysWithValues: zip(items, lengths))
                let made = RankingLists.tiers(
                    items: items, frequencies: frequencies, length: { byRow[$0] ?? 0 }, averageLength: 40, firstTier: 8)
                let expected = sortedTiers(items: items, frequencies: frequencies, lengths: lengths, firstTier: 8)
                let tiers = (made: made.map { $0.tier }, expected: expected.map { $0.tier })
                let floors = (made: made.map { $0.floor }, expected: expected.map { $0.floor })
                let entries = (made: made.map { $0.entries }, expected: expected.map { $0.entries })
                #expect(tiers.made == tiers.expected, "\(count) items, spread \(spread)")
                #expect(floors.made == floors.expected, "\(count) items, spread \(spread)")
                #expect(entries.made == entries.expected, "\(count) items, spread \(spread)")
            }
        }
    }

    /// Made-up words of two or three syllables, used with Zipf's law: a few in most items, most in few.
    /// Some have a plural too ("kalos"), whose stem is the word ("kalo"): a search for either is of
    /// the word as typed and its stem, weighed differently (``FTSPattern/typedFormWeight``).
    static let vocabulary: [String] = {
        let syllables = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "sho", "bu", "dra"]
        var words: [String] = []
        for first in syllables {
            for second in syllables where second != first {
                words.append(first + second)
                if words.count % 3 == 0 { words.append(first + second + "n") }
                if words.count % 4 == 1 { words.append(first + second + "s") }
            }
        }
        return words
    }()

    static func word(_ random: inout SplitMix, from vocabulary: [String] = vocabulary) -> String {
        // Zipf: P(rank r) ∝ 1/(r+1), by inverting the harmonic sums.
        let harmonics = vocabulary.indices.reduce(into: [Double]()) { sums, rank in
            sums.append((sums.last ?? 0) + 1 / Double(rank + 1))
        }
        let target = Double.random(in: 0..<harmonics[harmonics.count - 1], using: &random)
        let rank = harmonics.firstIndex { $0 > target } ?? harmonics.count - 1
        return vocabulary[rank]
    }

    static func words(_ count: ClosedRange<Int>, _ random: inout SplitMix) -> String {
        (0..<Int.random(in: count, using: &random)).map { _ in word(&random) }.joined(separator: " ")
    }

    func item(_ number: Int, _ random: inout SplitMix, tag: String = "") -> SearchableItem {
        var attributes = AttributeSet(contentType: number % 5 == 0 ? .html : .plainText)
        attributes.title = Self.words(1...4, &random) + tag
        if number % 3 == 0 { attributes.keywords = [Self.words(1...2, &random)] }
        if number % 4 == 0 { attributes.contentDescription = Self.words(2...6, &random) }
        attributes.textContent = Self.words(3...60, &random)
        // Some items expire: the clock is moved past them later.
        let expiration = number % 11 == 0 ? clock.now + 500 : Date.distantFuture
        let domain = DomainIdentifier(rawValue: number % 29 == 0 ? "small" : "d\(number % 4)")
        return SearchableItem(
            uniqueIdentifier: ItemIdentifier("i\(number)"), domainIdentifier: domain,
            attributeSet: attributes, expirationDate: expiration)
    }

    /// A query of one to eight words, common and rare, one in five of nine to sixteen (searched as more
    /// than twelve phrases when some words have stems), sometimes with a prefix, a phrase, a function
    /// word or an unknown word, and sometimes a filter.
    static func query(_ random: inout SplitMix) -> SearchQuery {
        let long = Int.random(in: 0..<5, using: &random) == 0
        let count = long ? Int.random(in: 9...16, using: &random) : Int.random(in: 1...8, using: &random)
        var parts = (0..<count).map { _ in word(&random) }
        switch Int.random(in: 0..<12, using: &random) {
        case 0: parts[0] += "*"
        case 1: parts.append("\"\(word(&random)) \(word(&random))\"")
        case 2: parts.append("the")
        case 3: parts.append("qqqzz")
        default: break
        }
        var query = SearchQuery(parts.joined(separator: " "))
        switch Int.random(in: 0..<8, using: &random) {
        case 0: query.domains = [DomainIdentifier(rawValue: "d\(Int.random(in: 0..<4, using: &random))")]
        case 1: query.contentTypes = [.html]
        case 2: query.domains = ["small"]
        default: break
        }
        return query
    }

    /// Whether a search's words can go through the lists: any of several words (no phrase typed in
    /// quotes, no prefix).
    static func isRankedByWords(_ pattern: FTSPattern) -> Bool {
        !pattern.requiresAll
            && pattern.meaningfulTerms.flatMap(\.alternatives).allSatisfy({
                if case .word(_, false) = $0 { true } else { false }
            })
    }

    /// Compares each query's candidates with and without the lists; returns how many used them, how
    /// many of those had a word as typed beside its stem (weighed less than it), and how many more than
    /// twelve phrases.
    func compare(_ index: SearchableIndex, queries: Int, seed: UInt64) async throws -> (
        usedLists: Int, rankedByWords: Int, weighted: Int, long: Int
    ) {
        var random = SplitMix(seed: seed)
        let (used, ranked, weighted, long, _) = try await compare(index, (0..<queries).map { _ in Self.query(&random) })
        return (used, ranked, weighted, long)
    }

    /// ``compare(_:queries:seed:)`` of the queries of `batch`; also returns how many of those that used
    /// the lists searched a word the analyzer splits into several (a phrase with no list).
    func compare(_ index: SearchableIndex, _ batch: [SearchQuery]) async throws -> (
        usedLists: Int, rankedByWords: Int, weighted: Int, long: Int, split: Int
    ) {
        try await index.read { reader in
            if let reader = reader as? PostgresIndexReader { return try Self.compare(reader, batch) }
            let reader = reader as! SQLiteIndexReader
            var split = 0
            var full = reader
            full.usesRankingLists = false
            var used = 0
            var ranked = 0
            var weighted = 0
            var long = 0
            for query in batch {
                let pattern = try #require(try query.validatedPattern())
                let limit = Ranking.candidateCount(query, pattern: pattern)
                if Self.isRankedByWords(pattern) { ranked += 1 }
                // Without the lists, `matches` is the full ranking itself: only what the lists give is compared.
                guard let listed = try reader.rankedByLists(query, pattern: pattern, limit: limit) else { continue }
                let fast = listed.found
                used += 1
                if pattern.phraseWeights.contains(where: { $0 != 1 }) { weighted += 1 }
                if pattern.phraseWeights.count > 12 { long += 1 }
                if Self.searchesASplitWord(pattern) { split += 1 }
                let scored = try full.matches(query, pattern: pattern, limit: limit)
                let slow = scored.found
                let text = query.text ?? ""
                try Self.expectTheSameTop(fast, slow, text)
                // An item in both has the same snippet, made later (for the items a search returns) and
                // through the words it has only, and a word in a heading column in both or neither.
                let made = try reader.snippets(
                    fast.compactMap { found in
                        guard case .matching(let expression) = found.item.pendingSnippet else { return nil }
                        return (found.rowID, found.item.item.uniqueIdentifier, expression)
                    })
                // None for a row id that no longer names the item (freed and taken by another in between).
                if let first = fast.first, case .matching(let expression) = first.item.pendingSnippet {
                    try #require(
                        try reader.snippets([(first.rowID, ItemIdentifier("another item"), expression)]).isEmpty)
                }
                let snippets = Dictionary(
                    slow.map { ($0.rowID, $0.item.snippet) }, uniquingKeysWith: { first, _ in first })
                for found in fast {
                    try #require(
                        found.item.snippet == nil && found.item.pendingSnippet != nil,
                        "\(text): a snippet made with the candidates")
                    if let snippet = snippets[found.rowID] {
                        try #require(made[found.rowID] == snippet, "\(text): a different snippet")
                        try #require(
                            listed.inHeading.contains(found.rowID) == scored.inHeading.contains(found.rowID),
                            "\(text): a word in a heading through the lists: \(listed.inHeading.contains(found.rowID))")
                    }
                }
            }
            return (used, ranked, weighted, long, split)
        }
    }

    /// ``compare(_:queries:seed:)`` on PostgreSQL, where the full ranking is the server's
    /// (`replica.ranked_matches`) and snippets are made by replica's own code from the text.
    static func compare(_ reader: PostgresIndexReader, _ batch: [SearchQuery]) throws -> (
        usedLists: Int, rankedByWords: Int, weighted: Int, long: Int, split: Int
    ) {
        var full = reader
        full.usesRankingLists = false
        var used = 0
        var ranked = 0
        var weighted = 0
        var long = 0
        var split = 0
        func snippet(_ found: FoundItem) -> String? {
            if case .made(let make)? = found.pendingSnippet { return make() }
            return found.snippet
        }
        for query in batch {
            let pattern = try #require(try query.validatedPattern())
            let limit = Ranking.candidateCount(query, pattern: pattern)
            if isRankedByWords(pattern) { ranked += 1 }
            guard let listed = try reader.matchesThroughRankingLists(query, pattern: pattern, limit: limit) else {
                continue
            }
            used += 1
            if pattern.phraseWeights.contains(where: { $0 != 1 }) { weighted += 1 }
            if pattern.phraseWeights.count > 12 { long += 1 }
            if searchesASplitWord(pattern) { split += 1 }
            let scored = try full.matches(query, pattern: pattern, limit: limit)
            let text = query.text ?? ""
            try expectTheSameTop(listed.found, scored.found, text)
            let slow = Dictionary(
                scored.found.map { ($0.rowID, snippet($0.item)) }, uniquingKeysWith: { first, _ in first })
            for found in listed.found {
                guard let expected = slow[found.rowID] else { continue }
                try #require(snippet(found.item) == expected, "\(text): a different snippet")
                try #require(
                    listed.inHeading.contains(found.rowID) == scored.inHeading.contains(found.rowID),
                    "\(text): a word in a heading through the lists: \(listed.inHeading.contains(found.rowID))")
            }
        }
        return (used, ranked, weighted, long, split)
    }

    /// Whether a search has a word the analyzer splits into several (a phrase with no list).
    static func searchesASplitWord(_ pattern: FTSPattern) -> Bool {
        pattern.meaningfulTerms.flatMap(PostgresIndexText.phrases(of:)).contains { $0.tokens.count > 1 }
    }

    /// Expects the candidates through the lists (`fast`) to be those of scoring every match (`slow`):
    /// as many, the same score position by position, and the same items above the last score (ties aside).
    static func expectTheSameTop(
        _ fast: [(item: FoundItem, rowID: Int64)], _ slow: [(item: FoundItem, rowID: Int64)], _ text: String
    ) throws {
        try #require(
            fast.count == slow.count,
            "\(text): \(fast.count) found through the lists, \(slow.count) by scoring every match")
        for (a, b) in zip(fast, slow) {
            try #require(
                abs(a.item.score - b.item.score) <= 1e-9 * max(1, abs(b.item.score)),
                "\(text): score \(a.item.score) through the lists, \(b.item.score) by scoring every match")
        }
        // The same items, ties aside: every item scoring above the last score is in both.
        guard let last = slow.last?.item.score else { return }
        let above = { (found: [(item: FoundItem, rowID: Int64)]) in
            Set(found.filter { $0.item.score > last + 1e-9 * max(1, last) }.map(\.rowID))
        }
        try #require(above(fast) == above(slow), "\(text): different items")
    }

    /// Builds the lists with a small first tier (shorter than the 60 candidates a search ranks), so a
    /// test-sized index has lists of several tiers and words without one.
    func buildLists(_ index: SearchableIndex) async throws {
        let summary = try await index.write(purgingExpired: false) { writer in
            if let writer = writer as? PostgresIndexWriter {
                return try writer.buildRankingLists(firstTier: 32, threshold: 60)
            }
            let writer = writer as! SQLiteIndexWriter
            return try RankingLists.build(writer.connection, now: writer.now, firstTier: 32, threshold: 60)
        }
        #expect(summary.terms > 20)
    }

    /// A store with alice's index of `count` random items and its lists built (``buildLists(_:)``);
    /// keep `storage` for as long as the index is used, and `random` to make more items.
    func listedIndex(of count: Int, seed: UInt64, on backend: TestBackend = .sqlite) async throws
        -> (storage: TestStore, index: SearchableIndex, random: SplitMix)
    {
        let storage = try await backend.makeStore(
            configuration: Fixtures.configuration(clock: clock), signingIn: "alice")
        let index = try await storage.store.index(account: "alice")
        var random = SplitMix(seed: seed)
        try await index.indexItems((0..<count).map { item($0, &random) })
        try await buildLists(index)
        return (storage, index, random)
    }

    @Test(arguments: TestBackend.available)
    func listsGiveTheFullRankingsTopUnderEveryWrite(_ backend: TestBackend) async throws {
        let (storage, index, seeded) = try await listedIndex(of: 1_500, seed: 22, on: backend)
        defer { withExtendedLifetime(storage) {} }
        var random = seeded

        // Built: nearly every ranked search of single words goes through the lists, and all agree.
        var (used, ranked, weighted, long) = try await compare(index, queries: 700, seed: 1)
        #expect(used >= ranked * 9 / 10, "only \(used) of \(ranked) searches used the lists")
        #expect(weighted >= 20, "only \(weighted) searches with a word as typed beside its stem used the lists")
        #expect(long >= 20, "only \(long) searches of more than twelve phrases used the lists")

        // Every kind of write after the build: in place, merged, deleted by id and by domain, new
        // items, and time passing some items' expiration.
        try await index.indexItems((0..<60).map { item($0 * 7, &random, tag: " kalo") })
        var merge = AttributeSet()
        merge.title = "rumi kalo lomi"
        try await index.indexItems(
            (0..<20).map {
                SearchableItem(uniqueIdentifier: ItemIdentifier("i\($0 * 13 + 1)"), attributeSet: merge, isUpdate: true)
            })
        try await index.deleteItems(withIdentifiers: (0..<20).map { ItemIdentifier("i\($0 * 17 + 2)") })
        try await index.deleteItems(withDomainIdentifiers: ["small"])
        try await index.indexItems((1_500..<1_540).map { item($0, &random) })
        clock.advance(by: 600)
        (used, ranked, _, _) = try await compare(index, queries: 700, seed: 2)
        #expect(used >= ranked * 9 / 10, "only \(used) of \(ranked) searches used the lists after writes")

        // Purged expired items, then a rebuild.
        try await index.purgeExpiredItems()
        try await buildLists(index)
        (used, ranked, _, _) = try await compare(index, queries: 500, seed: 3)
        #expect(used >= ranked * 9 / 10)

        // More changes than the lists follow: every search scores every match, and still agrees.
        try await index.indexItems((2_000..<2_000 + RankingLists.maximumChanges + 10).map { item($0, &random) })
        (used, _, _, _) = try await compare(index, queries: 100, seed: 4)
        #expect(used == 0)
        #expect(try await index.rankingListsAreStale())
        try await index.rebuildRankingLists()
        #expect(try await !index.rankingListsAreStale())
    }

    /// Chinese words of one to four characters, used with Zipf's law and written without spaces, as
    /// Chinese is: ICU's dictionary cuts a text into words, a word of three or more characters is also
    /// indexed as its pairs of characters, and a query's long word is searched as itself and its pairs,
    /// some of which the dictionary cuts in two ("也可" of "也可以" is "也" "可").
    static let chineseVocabulary = [
        "的", "也可以", "是", "正确的人", "在", "也", "满意的", "可", "人", "你", "可以", "知道", "报告", "是否",
        "正确", "听到", "讨论", "没有", "导致", "满意", "问题", "解决方案", "维护者", "提醒", "需要", "之后", "可能",
        "发生", "通过", "这样", "内核", "文档", "驱动程序", "设备", "内存", "补丁", "邮件列表", "开发者", "代码",
        "测试", "版本", "配置", "系统", "文件", "目录", "模块", "接口", "淡出", "很少", "讨论组",
    ]

    /// A ranked search of long Chinese words goes through the lists, a pair of characters that the
    /// analyzer splits into two words among its phrases (read whole through FTS5, as a phrase), and
    /// returns the top of scoring every match, with the same snippets and headings.
    @Test(arguments: TestBackend.available)
    func chineseWordsAndThePairsTheAnalyzerSplitsGoThroughTheLists(_ backend: TestBackend) async throws {
        let storage = try await backend.makeStore(
            configuration: Fixtures.configuration(clock: clock), signingIn: "alice")
        defer { withExtendedLifetime(storage) {} }
        let index = try await storage.store.index(account: "alice")
        var random = SplitMix(seed: 48)
        func text(_ count: ClosedRange<Int>) -> String {
            (0..<Int.random(in: count, using: &random)).map { _ in Self.word(&random, from: Self.chineseVocabulary) }
                .joined()
        }
        try await index.indexItems(
            (0..<1_200).map { number in
                var attributes = AttributeSet(contentType: .plainText)
                attributes.title = text(2...5)
                attributes.textContent = text(5...50)
                return SearchableItem(
                    uniqueIdentifier: ItemIdentifier("z\(number)"),
                    domainIdentifier: DomainIdentifier(rawValue: "d\(number % 3)"),
                    attributeSet: attributes)
            })
        try await buildLists(index)
        // Queries of function words alone ("的是") are refused: they are left out.
        let batch = (0..<300).map { _ in
            SearchQuery((0..<Int.random(in: 1...4, using: &random)).map { _ in text(2...4) }.joined(separator: " "))
        }.filter { (try? $0.validatedPattern()) != nil }
        let (used, ranked, _, _, split) = try await compare(index, batch)
        #expect(used >= ranked * 9 / 10, "only \(used) of \(ranked) searches used the lists")
        #expect(split >= 50, "only \(split) searches with a pair split in two used the lists")
    }

    /// A heading holds a phrase, on SQLite, where its words stand at consecutive places, as FTS5 marks
    /// it there: not a pair of characters at the place of the long word it is in, nor words apart.
    @Test func aHeadingHoldsAPhraseWhereItsWordsStandSideBySide() {
        func tokens(_ places: [(String, Int)]) -> [FTS5Tokenizer.Token] {
            places.map { FTS5Tokenizer.Token(text: $0.0, position: $0.1) }
        }
        let pair = [["也", "可"]]
        // "也可以", one word with its pairs at its place: the words "也" "可" are not there.
        #expect(!SQLiteIndexReader.holds(tokens([("也可以", 0), ("也可", 0), ("可以", 0)]), anyOf: pair))
        #expect(SQLiteIndexReader.holds(tokens([("你", 0), ("也", 1), ("可", 2)]), anyOf: pair))
        #expect(!SQLiteIndexReader.holds(tokens([("也", 0), ("你", 1), ("可", 2)]), anyOf: pair))
        #expect(!SQLiteIndexReader.holds(tokens([("可", 0), ("也", 1)]), anyOf: pair))
        // A word repeated: "的 的" in "的的的", not in "的".
        #expect(SQLiteIndexReader.holds(tokens([("的", 0), ("的", 1), ("的", 2)]), anyOf: [["的", "的"]]))
        #expect(!SQLiteIndexReader.holds(tokens([("的", 0)]), anyOf: [["的", "的"]]))
        // One word, at any place, beside another at the same place (a stem beside its word).
        #expect(SQLiteIndexReader.holds(tokens([("houses", 0), ("hous", 0)]), anyOf: [["tyres"], ["hous"]]))
        // Through the index's own tokenizer, as a search reads an item's title.
        let tokenizer = try! IndexTokenizer.shared.get()
        #expect(SQLiteIndexReader.holds(tokenizer.tokens(in: "也 可"), anyOf: pair))
        #expect(!SQLiteIndexReader.holds(tokenizer.tokens(in: "也可以"), anyOf: pair))
    }

    /// A build reads FTS5's pages itself (``RankingLists/Scan/pages``): its lists are byte for byte
    /// those read through fts5vocab, on an index whose doclists and position lists span many pages (a
    /// word in every item, a word 6,000 times in one item), with words in every column, words of
    /// scripts without spaces (their pairs of characters at one position) and rewritten items.
    @Test func listsReadFromFTS5sPagesAreThoseReadThroughFTS5vocab() async throws {
        let storage = try await TestBackend.sqlite.makeStore(
            configuration: Fixtures.configuration(clock: clock), signingIn: "alice")
        defer { withExtendedLifetime(storage) {} }
        let index = try await storage.store.index(account: "alice")
        var random = SplitMix(seed: 48)
        var items = (0..<2_400).map { item($0, &random, tag: $0 % 2 == 0 ? " 我们明天在北京开会讨论预算问题" : "") }
        var long = AttributeSet(contentType: .plainText)
        long.title = "kalo kalo"
        long.textContent = Array(repeating: "kalo rumi", count: 6_000).joined(separator: " ")
        items.append(SearchableItem(uniqueIdentifier: "long", attributeSet: long))
        try await index.indexItems(items)
        try await index.indexItems((0..<300).map { item($0 * 5, &random, tag: " rewritten") })
        try await index.deleteItems(withIdentifiers: (0..<100).map { ItemIdentifier("i\($0 * 7 + 3)") })
        let lists = { (scan: RankingLists.Scan) in
            try await index.write(purgingExpired: false) { writer in
                let connection = (writer as! SQLiteIndexWriter).connection
                let summary = try RankingLists.build(
                    connection, now: Date(timeIntervalSince1970: 0), firstTier: 32, threshold: 2, scan: scan)
                let rows = try connection.prepare(
                    "SELECT term, tier, documents, floor, hex(entries) FROM ranking_lists ORDER BY term, tier"
                )
                .rows { "\($0.text(0)) \($0.int64(1)) \($0.int64(2)) \($0.double(3)) \($0.text(4))" }
                return (summary, rows)
            }
        }
        let (read, fromPages) = try await lists(.pages)
        let (scanned, throughVocabulary) = try await lists(.vocabulary)
        #expect(read == scanned)
        #expect(read.terms > 200, "only \(read.terms) words with lists")
        #expect(fromPages.contains { $0.hasPrefix("北京 0 ") }, "a pair of Han characters has no list")
        #expect(fromPages.count == throughVocabulary.count)
        #expect(fromPages == throughVocabulary)
    }

    @Test func damagedListsAreNotUsedAndARebuildMendsThem() async throws {
        let (storage, index, _) = try await listedIndex(of: 400, seed: 7)
        defer { withExtendedLifetime(storage) {} }
        // The full-text index changed behind the lists' back (not through the writer, which records what it
        // inserts): the totals differ.
        try await index.write(purgingExpired: false) { writer in
            let connection = (writer as! SQLiteIndexWriter).connection
            try connection.execute(
                "INSERT INTO items(identifier, expires, attributes, indexed, title) VALUES ('x', 32503680000, '{}', 0, 'kalo kalo')"
            )
            try connection.execute(
                "INSERT INTO items_text(rowid, title) SELECT id, title FROM items WHERE identifier = 'x'")
        }
        let (used, _, _, _) = try await compare(index, queries: 200, seed: 5)
        #expect(used == 0)
    }

    @Test(.enabled(if: PostgresTestServer.isEnabled, "needs a PostgreSQL server"))
    func listsOfAnIndexChangedBehindTheirBackAreNotUsedOnPostgreSQL() async throws {
        let (storage, index, _) = try await listedIndex(of: 400, seed: 7, on: .postgres)
        defer { withExtendedLifetime(storage) {} }
        // The index's numbers moved without the writer, which records what it writes: they differ from
        // what the lists were built from, and nothing says which items changed.
        try await index.write(purgingExpired: false) { writer in
            try (writer as! PostgresIndexWriter).execute(
                """
                UPDATE replica.index_statistics SET items = items + 1, words = words + 2 WHERE account = $1 AND index_name = $2
                """)
        }
        var (used, _, _, _) = try await compare(index, queries: 200, seed: 5)
        #expect(used == 0)
        #expect(try await index.rankingListsAreStale(minimumItems: 100), "a watcher would rebuild them")
        try await index.write(purgingExpired: false) { writer in
            try (writer as! PostgresIndexWriter).execute(
                """
                UPDATE replica.index_statistics SET items = items - 1, words = words - 2 WHERE account = $1 AND index_name = $2
                """)
        }
        (used, _, _, _) = try await compare(index, queries: 200, seed: 5)
        #expect(used > 100)
        #expect(try await !index.rankingListsAreStale(minimumItems: 100))
    }

    @Test(arguments: TestBackend.available)
    func removedListsAreNotUsedAndWritesRecordNothingForThem(_ backend: TestBackend) async throws {
        let (storage, index, seeded) = try await listedIndex(of: 400, seed: 9, on: backend)
        defer { withExtendedLifetime(storage) {} }
        var random = seeded
        try await index.removeRankingLists()
        #expect(try await index.rankingListsAreStale(minimumItems: 100))
        try await index.indexItems((400..<420).map { item($0, &random) })
        let recorded = try await index.read { reader in
            if let reader = reader as? PostgresIndexReader {
                return try reader.run(
                    """
                    SELECT (SELECT count(*) FROM replica.ranking_changes) + (SELECT count(*) FROM replica.ranking_lists)
                        + (SELECT count(*) FROM replica.ranking_state)
                    """, []
                ).int(0, 0).map(Int.init)
            }
            return try (reader as! SQLiteIndexReader).connection.scalarInt(
                "SELECT (SELECT count(*) FROM ranking_changes) + (SELECT count(*) FROM ranking_lists)")
        }
        #expect(recorded == 0)
        let (used, _, _, _) = try await compare(index, queries: 100, seed: 6)
        #expect(used == 0)
        try await index.rebuildRankingLists()
        #expect(try await !index.rankingListsAreStale(minimumItems: 100))
    }
}
