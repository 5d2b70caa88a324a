import Foundation
import Replica
import ReplicaSQLite
import ReplicaText

/// Issue 2's benchmark: bulk indexing throughput and top-20 search latency, replica beside raw FTS5.
enum IndexBenchmark {
    /// The baselines' tokenizer: replica's own analyzer with English stems, as replica indexes English
    /// text, so that the ratios are like for like (issue 45 §5).
    static let tokenizer = "replica en"
    /// The index's tokenizer before issue 45, measured beside it: SQLite's own.
    static let todaysTokenizer = "porter unicode61 remove_diacritics 2"

    static func run(corpus: String, itemCount: Int, rounds: Int, queryCount: Int, writePasses: Int? = nil) async throws
    {
        let paragraphs = try Corpus.paragraphs(in: corpus, count: itemCount)
        let bytes = paragraphs.reduce(0) { $0 + $1.body.utf8.count + $1.title.utf8.count }
        print("corpus: \(paragraphs.count) paragraphs, \(bytes / 1_048_576) MiB of text, \(rounds) rounds")
        let (queries, commonPairs, common, questions) = rankedQueries(from: paragraphs, count: queryCount)
        // Issue 22: the ranked any-word classes, by scoring every match (no lists) and through the ranking lists.
        var rawCommonOr: [Double] = []
        var rawQuestions: [Double] = []
        var rawTypos: [Double] = []
        // Issue 45: the same two-word queries with a typo in one word (a letter dropped), ranked.
        let typos = queries.map(Corpus.withTypo)
        var full = RankedClasses()
        var listed = RankedClasses()
        var changed = RankedClasses()
        var merged = RankedClasses()
        var updateRates: [Double] = []
        var listedUpdateRates: [Double] = []
        // The lists' cost to writes on one index, with them and without them (items/s per pass).
        var withLists = (updates: [Double](), inserts: [Double]())
        var withoutLists = (updates: [Double](), inserts: [Double]())
        var listBuild: [Double] = []
        var listedSize = 0

        var rawRates: [Double] = []
        var replicaRates: [Double] = []
        var tunedRates: [Double] = []
        var porterRates: [Double] = []
        var toldRates: [Double] = []
        var rawTimes: [Double] = []
        var replicaTimes: [Double] = []
        var rawAny: [Double] = []
        var replicaRanked: [Double] = []
        var rawCommon: [Double] = []
        var replicaCommon: [Double] = []
        var rawCommonAny: [Double] = []
        var replicaCommonRanked: [Double] = []
        var rawSize = 0
        var replicaSize = 0
        for round in 0..<rounds {
            // Alternate who goes first, so neither always gets the warmer cache.
            // At a million items the tuned variant (not the baseline) would add minutes and tell nothing new.
            let contestants =
                itemCount > 200_000
                ? ["raw", "replica", "porter", "told"] : ["raw", "replica", "tuned", "porter", "told"]
            for contestant in (round % 2 == 0 ? contestants : contestants.reversed()) {
                let directory = try Measure.scratchDirectory(contestant)
                defer { Measure.removeDirectory(directory) }
                if contestant == "porter" {
                    // Raw FTS5 with the tokenizer the index had before issue 45: what the analyzer costs.
                    let raw = try RawFTS5(path: directory + "/porter.sqlite", tokenizer: todaysTokenizer)
                    porterRates.append(
                        Double(paragraphs.count) / (try await Measure.seconds { try raw.insert(paragraphs) }))
                } else if contestant == "told" {
                    // Issue 48's bulk baseline: raw FTS5 that tells each paragraph's language as replica
                    // does, so that both make the same index (English stems fixed tell none).
                    let raw = try RawFTS5(path: directory + "/told.sqlite", tellsLanguages: true)
                    toldRates.append(
                        Double(paragraphs.count) / (try await Measure.seconds { try raw.insert(paragraphs) }))
                } else if contestant == "tuned" {
                    // Not the baseline: raw FTS5 given the hash size replica's schema sets, to show what of
                    // replica's rate comes from that setting rather than from its own code.
                    let raw = try RawFTS5(path: directory + "/raw.sqlite", hashSize: 16 << 20)
                    tunedRates.append(
                        Double(paragraphs.count) / (try await Measure.seconds { try raw.insert(paragraphs) }))
                } else if contestant == "raw" {
                    let raw = try RawFTS5(path: directory + "/raw.sqlite")
                    let seconds = try await Measure.seconds { try raw.insert(paragraphs) }
                    rawRates.append(Double(paragraphs.count) / seconds)
                    rawTimes += try queries.map { query in try raw.timedSearch(query) }
                    rawAny += try queries.map { query in try raw.timedSearch(query, any: true) }
                    rawCommon += try common.map { word in try raw.timedSearch(word) }
                    rawCommonAny += try commonPairs.map { pair in try raw.timedSearch(pair, any: true) }
                    rawCommonOr += try common.map { word in try raw.timedSearch(word, any: true) }
                    rawQuestions += try questions.map { question in try raw.timedSearch(question, any: true) }
                    rawTypos += try typos.map { query in try raw.timedSearch(query, any: true) }
                    try raw.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                    rawSize = raw.size
                } else {
                    let store = try Store(directory: URL(fileURLWithPath: directory))
                    try await store.signIn("bench")
                    let index = try await store.index(account: "bench")
                    let items = paragraphs.map(makeItem)
                    let seconds = try await Measure.seconds { try await index.indexItems(items) }
                    replicaRates.append(Double(paragraphs.count) / seconds)
                    for query in queries { replicaTimes.append(try await timedSearch(store, query)) }
                    for query in queries { replicaRanked.append(try await timedSearch(store, query, ranked: true)) }
                    for word in common { replicaCommon.append(try await timedSearch(store, word)) }
                    for pair in commonPairs {
                        replicaCommonRanked.append(try await timedSearch(store, pair, ranked: true))
                    }
                    replicaSize = try await index.compactedFileSize()
                    try await full.measure(
                        store, queries: queries, commonPairs: commonPairs, common: common, questions: questions,
                        typos: typos)
                    // Writes without and with the lists: the same items updated in place with a changed title
                    // (an unchanged item is not written at all), 100 a batch.
                    func revised(_ item: SearchableItem, _ mark: String) -> SearchableItem {
                        var item = item
                        item.attributeSet.title = (item.attributeSet.title ?? "") + " " + mark
                        return item
                    }
                    func batchRate(_ batch: [SearchableItem]) async throws -> Double {
                        try await rate(index, writing: batch)
                    }
                    var updated = items.prefix(2_000).map { revised($0, "revised") }
                    func updateRate() async throws -> Double { try await batchRate(updated) }
                    updateRates.append(try await updateRate())
                    listBuild.append(try await Measure.seconds { try await index.rebuildRankingLists() })
                    try await listed.measure(
                        store, queries: queries, commonPairs: commonPairs, common: common, questions: questions,
                        typos: typos)
                    listedSize = try await index.compactedFileSize()
                    // 100 items changed since the build: searches rank them through FTS5 beside the lists.
                    try await index.indexItems(items.dropFirst(5_000).prefix(100).map { revised($0, "changed") })
                    try await changed.measure(
                        store, queries: queries, commonPairs: commonPairs, common: common, questions: questions,
                        typos: typos)
                    updated = items.prefix(2_000).map { revised($0, "again") }
                    listedUpdateRates.append(try await updateRate())
                    // Past 512 changes the lists are left aside: every match is scored again, now on the
                    // index the build merged into one segment (the fair comparison for the lists).
                    try await merged.measure(
                        store, queries: queries, commonPairs: commonPairs, common: common, questions: questions,
                        typos: typos)
                    // What the lists cost writes, on the same index: passes with and without them, each right
                    // after a build (which merges FTS5 into one segment), so that only the lists differ. Each
                    // pass updates 2,000 items in place and adds 2,000 new ones, 100 a batch.
                    // Which goes first alternates: the index grows by each pass's new items.
                    for pass in 0..<(writePasses ?? (itemCount > 200_000 ? 1 : 3)) {
                        for listed in pass % 2 == 0 ? [true, false] : [false, true] {
                            try await index.rebuildRankingLists()
                            if !listed { try await index.removeRankingLists() }
                            let mark = "pass\(pass)\(listed ? "with" : "without")"
                            let updates = try await batchRate(items.prefix(2_000).map { revised($0, mark) })
                            let inserts = try await batchRate(
                                items.dropFirst(10_000).prefix(2_000).map { item in
                                    SearchableItem(
                                        uniqueIdentifier: ItemIdentifier("\(mark)-\(item.uniqueIdentifier.rawValue)"),
                                        domainIdentifier: item.domainIdentifier,
                                        attributeSet: item.attributeSet, expirationDate: item.expirationDate)
                                })
                            if listed {
                                withLists.updates.append(updates)
                                withLists.inserts.append(inserts)
                            } else {
                                withoutLists.updates.append(updates)
                                withoutLists.inserts.append(inserts)
                            }
                        }
                    }
                }
            }
        }
        let rawRate = Measure.median(rawRates)
        let replicaRate = Measure.median(replicaRates)
        // Each round measures both back to back; the ratio within a round is steadier than a ratio of medians
        // on a shared machine.
        let ratios = zip(replicaRates, rawRates).map { $0 / $1 }
        func ms(_ values: [Double], _ p: Double) -> String { Measure.format(Measure.percentile(values, p) * 1000) }
        print(
            """

            | measure | raw SQLite FTS5 | replica | replica ÷ raw |
            |---|---|---|---|
            | items indexed per second (one transaction, median of \(rounds)) | \(Int(rawRate)) | \(Int(replicaRate)) | \(Measure.format(Measure.median(ratios))) (rounds: \(Measure.format(ratios.min()!))–\(Measure.format(ratios.max()!))) |
            | the same, raw FTS5 with SQLite's porter unicode61 (the index's tokenizer before issue 45) | \(Int(Measure.median(porterRates))) | \(Int(replicaRate)) | \(Measure.format(Measure.median(zip(replicaRates, porterRates).map { $0 / $1 }))); raw with replica's analyzer ÷ porter \(Measure.format(Measure.median(zip(rawRates, porterRates).map { $0 / $1 }))) |
            | the same, raw FTS5 telling each paragraph's language by CLD2 as replica does (issue 48's bulk baseline: the same index) | \(toldRates.isEmpty ? "not run" : "\(Int(Measure.median(toldRates)))") | \(Int(replicaRate)) | \(toldRates.isEmpty ? "" : Self.pairedRatios(replicaRates, toldRates)) |
            | the same, raw FTS5 given replica's 16 MiB FTS5 hash size (not the baseline) | \(tunedRates.isEmpty ? "not run" : "\(Int(Measure.median(tunedRates)))") | \(Int(replicaRate)) | \(tunedRates.isEmpty ? "" : Measure.format(Measure.median(zip(replicaRates, tunedRates).map { $0 / $1 }))) |
            | top-20 search p50, two-word queries, every word (ms) | \(ms(rawTimes, 50)) | \(ms(replicaTimes, 50)) | +\(Measure.format((Measure.percentile(replicaTimes, 50) - Measure.percentile(rawTimes, 50)) * 1000)) ms |
            | top-20 search p99, two-word queries, every word (ms) | \(ms(rawTimes, 99)) | \(ms(replicaTimes, 99)) | \(Measure.format(Measure.percentile(replicaTimes, 99) / Measure.percentile(rawTimes, 99))) |
            | top-20 search p50, one word in >10% of items (ms) | \(ms(rawCommon, 50)) | \(ms(replicaCommon, 50)) | +\(Measure.format((Measure.percentile(replicaCommon, 50) - Measure.percentile(rawCommon, 50)) * 1000)) ms |
            | top-20 search p99, one word in >10% of items (ms) | \(ms(rawCommon, 99)) | \(ms(replicaCommon, 99)) | \(Measure.format(Measure.percentile(replicaCommon, 99) / Measure.percentile(rawCommon, 99))) |
            | top-20 search p50, two-word queries, any word ranked (replica's default; raw: words OR-ed) (ms) | \(ms(rawAny, 50)) | \(ms(replicaRanked, 50)) | \(Measure.format(Measure.percentile(replicaRanked, 50) / Measure.percentile(rawAny, 50))) |
            | top-20 search p99, two-word queries, any word ranked (ms) | \(ms(rawAny, 99)) | \(ms(replicaRanked, 99)) | \(Measure.format(Measure.percentile(replicaRanked, 99) / Measure.percentile(rawAny, 99))) |
            | top-20 search p50, two words each in >10% of items, any word ranked (raw: OR) (ms) | \(ms(rawCommonAny, 50)) | \(ms(replicaCommonRanked, 50)) | \(Measure.format(Measure.percentile(replicaCommonRanked, 50) / Measure.percentile(rawCommonAny, 50))) |
            | top-20 search p99, two words each in >10% of items, any word ranked (ms) | \(ms(rawCommonAny, 99)) | \(ms(replicaCommonRanked, 99)) | \(Measure.format(Measure.percentile(replicaCommonRanked, 99) / Measure.percentile(rawCommonAny, 99))) |
            | index size on disk (MiB) | \(rawSize / 1_048_576) | \(replicaSize / 1_048_576) | \(Measure.format(Double(replicaSize) / Double(rawSize))) |

            queries: \(queries.count) two-word queries × \(rounds) rounds; \(common.count) common words × \(rounds) rounds

            Ranked any-word top-20 (issue 22): raw FTS5's ranked OR query; replica scoring every match (as indexed, and
            after the lists' build merged FTS5 into one segment); replica through its ranking lists (built, with the merge,
            in \(Measure.format(Measure.median(listBuild))) s; index \(replicaSize / 1_048_576) MiB without them,
            \(listedSize / 1_048_576) MiB with them, \(Measure.format(Double(listedSize) / Double(replicaSize)))×), and through them
            with 100 items changed since the build. Updates in place, 100 a batch: \(Int(Measure.median(updateRates))) items/s
            without lists, \(Int(Measure.median(listedUpdateRates))) with them (\(Measure.format(Measure.median(listedUpdateRates) / Measure.median(updateRates)))×;
            the first before the build, the second after it: not like for like).
            The lists' cost to writes on one index, passes alternating, each right after a build (medians of \(withLists.updates.count)):
            updates in place \(Int(Measure.median(withLists.updates))) items/s with the lists, \(Int(Measure.median(withoutLists.updates))) without
            (\(Measure.format(Measure.median(withLists.updates) / Measure.median(withoutLists.updates)))×; passes \(withLists.updates.map { String(Int($0)) }.joined(separator: ", ")) / \(withoutLists.updates.map { String(Int($0)) }.joined(separator: ", ")));
            new items \(Int(Measure.median(withLists.inserts))) with, \(Int(Measure.median(withoutLists.inserts))) without
            (\(Measure.format(Measure.median(withLists.inserts) / Measure.median(withoutLists.inserts)))×; passes \(withLists.inserts.map { String(Int($0)) }.joined(separator: ", ")) / \(withoutLists.inserts.map { String(Int($0)) }.joined(separator: ", "))).
            Each pair's own ratio (with ÷ without, the two passes back to back), median and range: updates \(pairedRatios(withLists.updates, withoutLists.updates)); new items \(pairedRatios(withLists.inserts, withoutLists.inserts)).

            | query class | raw FTS5 p50 / p99 (ms) | every match p50 / p99 | every match, merged | lists p50 / p99 | lists, 100 changed | lists ÷ raw p99 | lists ÷ merged p99 |
            |---|---|---|---|---|---|---|---|
            \(RankedClasses.row("two words", rawAny, full.pairs, merged.pairs, listed.pairs, changed.pairs))
            \(RankedClasses.row("two words each in >10% of items", rawCommonAny, full.commonPairs, merged.commonPairs, listed.commonPairs, changed.commonPairs))
            \(RankedClasses.row("one word in >10% of items", rawCommonOr, full.common, merged.common, listed.common, changed.common))
            \(RankedClasses.row("eight-word questions", rawQuestions, full.questions, merged.questions, listed.questions, changed.questions))
            \(RankedClasses.row("two words, one with a typo (raw: as typed)", rawTypos, full.typos, merged.typos, listed.typos, changed.typos))
            """)
    }

    /// The query classes of the ranked search: two-word queries, two words each in more than 10% of items
    /// (the case where ranking any word costs the most), one such word, and eight-word questions.
    static func rankedQueries(from paragraphs: [Paragraph], count: Int)
        -> (queries: [String], commonPairs: [String], common: [String], questions: [String])
    {
        let common = Corpus.commonWords(from: paragraphs)
        return (
            Corpus.queries(from: paragraphs, count: count, seed: 2026),
            zip(common, common.dropFirst() + common.prefix(1)).map { "\($0) \($1)" },
            common,
            Corpus.questions(from: paragraphs, count: count, seed: 2027)
        )
    }

    /// The median of each pair's ratio, with their range: a pair ran back to back, so its ratio is steadier
    /// than the ratio of two medians on a shared machine.
    static func pairedRatios(_ with: [Double], _ without: [Double]) -> String {
        let ratios = zip(with, without).map { $0 / $1 }.sorted()
        guard let low = ratios.first, let high = ratios.last else { return "none" }
        return
            "\(Measure.format(Measure.median(ratios)))× (\(Measure.format(low))–\(Measure.format(high)), \(ratios.count) pairs)"
    }

    /// Loads the corpus, then only indexes, three times: for `perf record --delay`. With `besideRaw`,
    /// raw FTS5 loads the same paragraphs after each, and each load's ratio is printed (for trying a
    /// change to bulk indexing quickly; `index` is the benchmark of record).
    static func profile(corpus: String, itemCount: Int, besideRaw: Bool = false) async throws {
        let paragraphs = try Corpus.paragraphs(in: corpus, count: itemCount)
        let items = paragraphs.map(makeItem)
        FileHandle.standardError.write(Data("loaded\n".utf8))
        for _ in 0..<3 {
            let directory = try Measure.scratchDirectory("profile")
            let store = try Store(directory: URL(fileURLWithPath: directory))
            try await store.signIn("bench")
            let index = try await store.index(account: "bench")
            let seconds = try await Measure.seconds { try await index.indexItems(items) }
            Measure.removeDirectory(directory)
            let rate = "\(Int(Double(items.count) / seconds)) items/s"
            guard besideRaw else {
                print(rate)
                continue
            }
            // Raw FTS5, then raw FTS5 telling each paragraph's language as replica does (not the baseline).
            var rawSeconds: [Double] = []
            for tells in [false, true] {
                let rawDirectory = try Measure.scratchDirectory("raw")
                let raw = try RawFTS5(path: rawDirectory + "/raw.sqlite", tellsLanguages: tells)
                rawSeconds.append(try await Measure.seconds { try raw.insert(paragraphs) })
                Measure.removeDirectory(rawDirectory)
            }
            // Rates' ratio: the same items, so raw's time over replica's.
            print(
                "\(rate), raw FTS5 \(Int(Double(items.count) / rawSeconds[0])), replica ÷ raw \(Measure.format(rawSeconds[0] / seconds)); telling languages \(Int(Double(items.count) / rawSeconds[1])), replica ÷ it \(Measure.format(rawSeconds[1] / seconds))"
            )
        }
    }

    /// Ranked any-word searches through the ranking lists, class by class, on a store kept in `store`
    /// between runs (loaded with the corpus and given its lists the first time): p50 and p99 of each
    /// class, `repeats` times over, for `perf record` and for trying changes to the search quickly;
    /// the eight-word questions alone when `questionsOnly`.
    static func profileRanked(
        corpus: String, itemCount: Int, store path: String, queryCount: Int, repeats: Int,
        questionsOnly: Bool = false
    ) async throws {
        let paragraphs = try Corpus.paragraphs(in: corpus, count: itemCount)
        let fresh = !FileManager.default.fileExists(atPath: path)
        let store = try Store(directory: URL(fileURLWithPath: path))
        if fresh {
            try await store.signIn("bench")
            let index = try await store.index(account: "bench")
            try await index.indexItems(paragraphs.map(makeItem))
            try await index.rebuildRankingLists()
        }
        FileHandle.standardError.write(Data("ready\n".utf8))
        let (everyPair, everyCommonPair, everyCommon, questions) = rankedQueries(from: paragraphs, count: queryCount)
        let (queries, commonPairs, common) = questionsOnly ? ([], [], []) : (everyPair, everyCommonPair, everyCommon)
        for _ in 0..<repeats {
            var classes = RankedClasses()
            try await classes.measure(
                store, queries: queries, commonPairs: commonPairs, common: common, questions: questions)
            for (name, times) in [
                ("two words", classes.pairs), ("two common words", classes.commonPairs),
                ("one common word", classes.common), ("eight-word questions", classes.questions),
            ] {
                print(
                    "\(name) (\(times.count)): p50 \(Measure.format(Measure.percentile(times, 50) * 1000)) ms, "
                        + "p99 \(Measure.format(Measure.percentile(times, 99) * 1000)) ms")
            }
        }
    }

    /// Loads the corpus into a store, then updates 2,000 items in place (100 a batch) six times, every other
    /// time with triggers on items' INSERT and UPDATE made by hand (never firing, as migration 0010's did
    /// before lists were built): for `perf record`, and to compare the two.
    static func profileUpdates(corpus: String, itemCount: Int) async throws {
        let items = try Corpus.paragraphs(in: corpus, count: itemCount).map(makeItem)
        let directory = try Measure.scratchDirectory("profile-updates")
        defer { Measure.removeDirectory(directory) }
        let store = try Store(directory: URL(fileURLWithPath: directory))
        try await store.signIn("bench")
        let index = try await store.index(account: "bench")
        try await index.indexItems(items)
        guard
            let file = FileManager.default.enumerator(atPath: directory)?.compactMap({ $0 as? String }).first(where: {
                $0.hasSuffix("/default.sqlite")
            })
        else {
            throw BenchError("no index file")
        }
        let raw = try Connection(path: directory + "/" + file)
        FileHandle.standardError.write(Data("loaded\n".utf8))
        for pass in 0..<6 {
            let trigger = pass % 2 == 1
            if trigger {
                try raw.execute(
                    "CREATE TRIGGER bench_inserted AFTER INSERT ON items WHEN new.id < 0 BEGIN SELECT 1; END")
                try raw.execute(
                    "CREATE TRIGGER bench_updated AFTER UPDATE OF title ON items WHEN new.id < 0 BEGIN SELECT 1; END")
            } else {
                try raw.execute("DROP TRIGGER IF EXISTS bench_inserted")
                try raw.execute("DROP TRIGGER IF EXISTS bench_updated")
            }
            let updated = items.prefix(2_000).map { item in
                var item = item
                item.attributeSet.title = (item.attributeSet.title ?? "") + " pass\(pass)"
                return item
            }
            print(
                "pass \(pass)\(trigger ? ", with triggers" : ""): \(Int(try await rate(index, writing: updated))) updates/s"
            )
        }
    }

    /// Items per second writing `batch` into `index`, 100 items a call.
    static func rate(_ index: SearchableIndex, writing batch: [SearchableItem]) async throws -> Double {
        let seconds = try await Measure.seconds {
            for start in stride(from: 0, to: batch.count, by: 100) {
                try await index.indexItems(Array(batch[start..<min(start + 100, batch.count)]))
            }
        }
        return Double(batch.count) / seconds
    }

    static func makeItem(_ paragraph: Paragraph) -> SearchableItem {
        var attributes = AttributeSet(contentType: .plainText)
        attributes.title = paragraph.title
        attributes.textContent = paragraph.body
        return SearchableItem(
            uniqueIdentifier: ItemIdentifier(paragraph.identifier), domainIdentifier: "bench.docs",
            attributeSet: attributes, expirationDate: .distantFuture)
    }

    /// - Parameter ranked: the default, any word ranked; otherwise every word required (as raw FTS5's
    ///   implicit AND, the issue-2 comparison).
    static func timedSearch(_ store: Store, _ text: String, ranked: Bool = false) async throws -> Double {
        var query = SearchQuery(text)
        query.limit = 20
        query.requiresAllWords = !ranked
        // REPLICA_BENCH_EXACT=1: the words as typed only, to tell what typo tolerance costs.
        query.typoTolerance = ProcessInfo.processInfo.environment["REPLICA_BENCH_EXACT"] == nil
        var count = 0
        let seconds = try await Measure.seconds { count = try await store.search(query).count }
        _ = count
        return seconds
    }
}

/// The baseline: one FTS5 table of (title, body), with replica's analyzer (English stems), weights and
/// pragmas. Telling languages, it is issue 48's bulk baseline.
final class RawFTS5 {
    let connection: Connection
    let path: String
    /// Whether each paragraph is stemmed for the language CLD2 tells it is in, as replica stems an item.
    let tellsLanguages: Bool

    /// - Parameter hashSize: FTS5's `hashsize` setting; `nil` keeps its default (1 MiB), as the baseline does.
    /// - Parameter tellsLanguages: the analyzer without a language of its own, and each paragraph's
    ///   language told from the start of its text before it is inserted, by replica's own rule
    ///   (`TextAnalyzer.itemLanguage`: the English rule, then CLD2), so that what telling costs is on both
    ///   sides.
    init(
        path: String, hashSize: Int? = nil, tokenizer: String = IndexBenchmark.tokenizer, tellsLanguages: Bool = false
    ) throws {
        self.path = path
        self.tellsLanguages = tellsLanguages
        connection = try Connection(path: path)
        let tokenizer = tellsLanguages ? "replica" : tokenizer
        try connection.execute("CREATE VIRTUAL TABLE t USING fts5(title, body, tokenize = '\(tokenizer)')")
        try connection.execute("INSERT INTO t(t, rank) VALUES ('rank', 'bm25(10.0, 1.0)')")
        if let hashSize { try connection.execute("INSERT INTO t(t, rank) VALUES ('hashsize', \(hashSize))") }
    }

    func insert(_ paragraphs: [Paragraph]) throws {
        let statement = try connection.prepare("INSERT INTO t(title, body) VALUES (?, ?)")
        try connection.transaction {
            for paragraph in paragraphs {
                func run() throws { try statement.run([.text(paragraph.title), .text(paragraph.body)]) }
                if tellsLanguages {
                    // The rule replica's writer follows; a text CLD2 is not sure of is English here.
                    let told = TextAnalyzer.itemLanguage(
                        given: [], text: TextAnalyzer.languageSample(of: [paragraph.title, paragraph.body]))
                    try TextAnalyzer.withDocumentLanguage(told.code, run)
                } else {
                    try run()
                }
            }
        }
    }

    /// The same work a search does: a ranked top 20 with snippets, read into strings.
    func timedSearch(_ text: String, any: Bool = false) throws -> Double {
        let pattern = text.split(separator: " ").map { "\"\($0)\"" }.joined(separator: any ? " OR " : " ")
        let start = DispatchTime.now().uptimeNanoseconds
        let rows = try connection.cached(
            "SELECT rowid, title, snippet(t, -1, '[', ']', '…', 24) FROM t WHERE t MATCH ? ORDER BY rank LIMIT 20"
        )
        .rows([.text(pattern)]) { row in (row.int64(0), row.text(1), row.text(2)) }
        _ = rows.count
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// How many rows match `text` (all its words), counting at most `limit`.
    func count(_ text: String, upTo limit: Int) throws -> Int {
        let pattern = text.split(separator: " ").map { "\"\($0)\"" }.joined(separator: " ")
        return try connection.cached("SELECT rowid FROM t WHERE t MATCH ? LIMIT \(limit)").rows([.text(pattern)]) {
            $0.int64(0)
        }.count
    }

    var size: Int {
        ["", "-wal"].reduce(0) { total, suffix in
            total + ((try? FileManager.default.attributesOfItem(atPath: path + suffix)[.size] as? Int) ?? 0)
        }
    }
}

/// The ranked any-word query classes of issue 22, timed through the store.
struct RankedClasses {
    var pairs: [Double] = [], commonPairs: [Double] = [], common: [Double] = [], questions: [Double] = [],
        typos: [Double] = []

    mutating func measure(
        _ store: Store, queries: [String], commonPairs pairsOfCommon: [String], common words: [String],
        questions sentences: [String], typos typed: [String] = []
    ) async throws {
        for query in typed { typos.append(try await IndexBenchmark.timedSearch(store, query, ranked: true)) }
        for query in queries { pairs.append(try await IndexBenchmark.timedSearch(store, query, ranked: true)) }
        for pair in pairsOfCommon {
            commonPairs.append(try await IndexBenchmark.timedSearch(store, pair, ranked: true))
        }
        for word in words { common.append(try await IndexBenchmark.timedSearch(store, word, ranked: true)) }
        for question in sentences {
            questions.append(try await IndexBenchmark.timedSearch(store, question, ranked: true))
        }
    }

    static func row(
        _ name: String, _ raw: [Double], _ full: [Double], _ merged: [Double], _ listed: [Double], _ changed: [Double]
    ) -> String {
        func ms(_ values: [Double]) -> String {
            Measure.format(Measure.percentile(values, 50) * 1000) + " / "
                + Measure.format(Measure.percentile(values, 99) * 1000)
        }
        func ratio(_ values: [Double]) -> String {
            Measure.format(Measure.percentile(listed, 99) / Measure.percentile(values, 99))
        }
        return
            "| \(name) | \(ms(raw)) | \(ms(full)) | \(ms(merged)) | \(ms(listed)) | \(ms(changed)) | \(ratio(raw)) | \(ratio(merged)) |"
    }
}
