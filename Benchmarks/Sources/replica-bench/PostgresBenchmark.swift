import Foundation
import Replica
import ReplicaPostgres
import ReplicaPostgresHome

/// Issue 20 §6: replica with its whole store on PostgreSQL, each figure beside raw PostgreSQL and beside
/// replica on SQLite, measured in the same run on a server the benchmark starts (`scripts/postgres.sh`,
/// `fsync` on) and stops.
enum PostgresBenchmark {
    struct Options {
        var corpus: String?
        var itemCount = 100_000
        var rounds = 1
        var queryCount = 200
        var accounts = 1_000
        var accountItems = 1_000
        var signOuts = 20
        var qualityData = "Benchmarks/quality/data"
        var lexicalOnly = false
        var script = "scripts/postgres.sh"
        var parts: Set<String> = ["load", "quality", "tenancy", "standby", "follow"]
        var writes = 300
        var followSeconds = 30
        /// Who loads and searches in the load part (all four unless `--contestants` names some, for
        /// profiling one of them alone).
        var contestants = ["raw", "pg", "sqlite", "raw, index first"]
    }

    static func run(_ options: Options) async throws {
        let server = try PostgresServer(script: options.script, name: "main")
        defer { server.stop() }
        try migrate(server)
        let version = try server.queryAsOwner("SHOW server_version").string(0, 0) ?? "?"
        print(
            "PostgreSQL \(version), a throwaway server (scripts/postgres.sh, fsync on), \(ProcessInfo.processInfo.activeProcessorCount) cores"
        )
        if options.parts.contains("load") { try await loadAndSearch(server, options) }
        if options.parts.contains("quality") { try await quality(server, options) }
        if options.parts.contains("tenancy") { try await tenancy(server, options) }
        if options.parts.contains("standby") { try await standby(server, options) }
        if options.parts.contains("follow") { try await follow(server, options) }
    }

    /// A store whose accounts live in the PostgreSQL database `url` names; `directory` holds its local things.
    static func postgresStore(
        _ directory: String, url: String, configuration: Store.Configuration = Store.Configuration()
    ) throws -> Store {
        try Store(
            directory: URL(fileURLWithPath: directory), database: .postgres(url: url), configuration: configuration)
    }

    /// Opens a store once as the owner, which applies the schema's migrations; the app role then finds
    /// the schema current.
    static func migrate(_ server: PostgresServer) throws {
        let directory = try Measure.scratchDirectory("pg-migrate")
        defer { Measure.removeDirectory(directory) }
        _ = try postgresStore(directory, url: server.ownerURL)
    }

    /// `VACUUM ANALYZE` of replica's tables (all their partitions), then a checkpoint: what autovacuum and
    /// the checkpointer would have done within minutes of the load, done now so that every search (raw's
    /// too) runs on the same settled state, with no checkpoint writing the load's pages meanwhile.
    static func settle(_ server: PostgresServer) throws {
        try server.ownerConnection().executeScript("VACUUM ANALYZE replica.items")
        try server.superuserConnection().executeScript("CHECKPOINT")
    }

    /// The bytes of an account's items and ranking lists partitions (rows, TOAST, every index).
    static func partitionSize(_ server: PostgresServer, account: String) throws -> Int {
        Int(
            try server.ownerConnection().execute(
                """
                SELECT sum(pg_total_relation_size(format('replica.%I', replica.partition_name(t, $1))::regclass))::bigint
                FROM unnest(ARRAY['items', 'ranking_lists', 'ranking_changes', 'ranking_state']) AS t
                """, [.text(account)]
            ).int(0, 0) ?? 0)
    }

    // MARK: Bulk indexing and ranked search

    static func loadAndSearch(_ server: PostgresServer, _ options: Options) async throws {
        let corpus = try require(options.corpus, "the load part needs --corpus DIR")
        let paragraphs = try Corpus.paragraphs(in: corpus, count: options.itemCount)
        let items = paragraphs.map(IndexBenchmark.makeItem)
        let bytes = paragraphs.reduce(0) { $0 + $1.body.utf8.count + $1.title.utf8.count }
        print(
            "\n## Bulk indexing and ranked search: \(paragraphs.count) paragraphs, \(bytes / 1_048_576) MiB of text, \(options.rounds) round(s)"
        )
        let common = Corpus.commonWords(from: paragraphs)
        let classes: [(name: String, queries: [String])] = [
            ("two words", Corpus.queries(from: paragraphs, count: options.queryCount, seed: 2026)),
            (
                "two words each in >10% of items",
                zip(common, common.dropFirst() + common.prefix(1)).map { "\($0) \($1)" }
            ),
            ("one word in >10% of items", common),
            (
                "eight-word questions",
                Corpus.questions(from: paragraphs, count: max(options.queryCount / 2, 1), seed: 2027)
            ),
        ]
        let questions = classes[3].queries
        var rates: [String: [Double]] = [:]
        // How long building the ranking lists took after each load, in seconds.
        var builds: [String: [Double]] = [:]
        var times: [String: [String: [Double]]] = [:]
        var sizes: [String: Int] = [:]
        var signOuts: [Double] = []
        for round in 0..<options.rounds {
            // Alternate who goes first, so that no one always gets the warmer cache.
            let contestants = options.contestants
            for contestant in (round % 2 == 0 ? contestants : contestants.reversed()) {
                FileHandle.standardError.write(Data("round \(round + 1): \(contestant)\n".utf8))
                switch contestant {
                case "raw", "raw, index first":
                    let raw = try RawPostgres(url: server.ownerURL, name: "raw_\(round)")
                    let seconds = try Measure.secondsNow { try raw.load(paragraphs, indexFirst: contestant != "raw") }
                    rates[contestant, default: []].append(Double(paragraphs.count) / seconds)
                    if contestant == "raw" {
                        try server.runAsOwner("VACUUM ANALYZE \(raw.table)")
                        try server.runAsSuperuser("CHECKPOINT")
                        for query in classes[0].queries.prefix(10) { _ = try raw.timedSearch(query) }  // warm-up
                        for (name, queries) in classes {
                            for query in queries {
                                times["raw", default: [:]][name, default: []].append(try raw.timedSearch(query))
                            }
                        }
                        for query in questions {
                            times["raw, stop words dropped", default: [:]][classes[3].name, default: []]
                                .append(try raw.timedSearch(query, dropStopWords: true))
                        }
                        sizes["raw"] = try raw.size
                    }
                    try raw.drop()
                case "pg":
                    let directory = try Measure.scratchDirectory("pg-store")
                    defer { Measure.removeDirectory(directory) }
                    let store = try postgresStore(directory, url: server.appURL)
                    let account = AccountID("bench-\(round)")
                    try await store.signIn(account)
                    let index = try await store.index(account: account)
                    let seconds = try await Measure.seconds { try await index.indexItems(items) }
                    rates["pg", default: []].append(Double(items.count) / seconds)
                    // As `replica sync` and `watch` do after a load: the ranking lists built.
                    builds["pg", default: []].append(
                        try await Measure.seconds { try await index.rebuildRankingLists() })
                    try settle(server)
                    // Raw over the rows replica wrote, query by query in turn with replica's own searches, so
                    // that both meet the same moments of this shared machine (and as warm a cache).
                    let sameRows = try RawOverReplicaRows(server, account: account.rawValue)
                    let stemmed = try classes.map { try $0.queries.map(sameRows.tsquery) }
                    // Warm-up, and a check that the baseline finds rows (it reads as the owner, under no policy).
                    guard try stemmed[0].prefix(10).contains(where: { try sameRows.matches($0) }) else {
                        throw BenchError("raw over replica's rows found nothing for the first ten two-word queries")
                    }
                    for query in stemmed[0].prefix(10) { _ = try sameRows.timedSearch(query) }
                    for query in classes[0].queries.prefix(10) {
                        _ = try await IndexBenchmark.timedSearch(store, query, ranked: true)
                    }
                    for ((name, queries), tsqueries) in zip(classes, stemmed) {
                        for (query, tsquery) in zip(queries, tsqueries) {
                            times["pg", default: [:]][name, default: []].append(
                                try await IndexBenchmark.timedSearch(store, query, ranked: true))
                            times["raw, replica's rows", default: [:]][name, default: []].append(
                                try sameRows.timedSearch(tsquery))
                        }
                    }
                    sizes["pg"] = try partitionSize(server, account: account.rawValue)
                    // With REPLICA_BENCH_KEEP, the account stays for looking at its rows afterwards.
                    guard ProcessInfo.processInfo.environment["REPLICA_BENCH_KEEP"] == nil else { continue }
                    signOuts.append(try await Measure.seconds { _ = try await store.signOut(account) })
                default:
                    let directory = try Measure.scratchDirectory("sqlite-store")
                    defer { Measure.removeDirectory(directory) }
                    let store = try Store(directory: URL(fileURLWithPath: directory))
                    try await store.signIn("bench")
                    let index = try await store.index(account: "bench")
                    let seconds = try await Measure.seconds { try await index.indexItems(items) }
                    rates["sqlite", default: []].append(Double(items.count) / seconds)
                    builds["sqlite", default: []].append(
                        try await Measure.seconds { try await index.rebuildRankingLists() })
                    times["sqlite"] = try await search(store, classes, adding: times["sqlite"] ?? [:])
                    sizes["sqlite"] = try await index.compactedFileSize()
                }
            }
        }
        func median(_ name: String) -> Double? { rates[name].map(Measure.median) }
        func rate(_ name: String) -> String { median(name).map { String(Int($0)) } ?? "–" }
        func divided(_ a: Double?, _ b: Double?) -> String {
            a.flatMap { a in b.map { Measure.format(a / $0) } } ?? "–"
        }
        func mebibytes(_ name: String) -> String { sizes[name].map { String($0 / 1_048_576) } ?? "–" }
        let ratios = zip(rates["pg"] ?? [], rates["raw"] ?? []).map { $0 / $1 }
        let spread =
            ratios.isEmpty ? "" : " (rounds: \(Measure.format(ratios.min()!))–\(Measure.format(ratios.max()!)))"
        print(
            """

            | measure | replica on PostgreSQL | raw PostgreSQL (COPY, then GIN index) | replica ÷ raw | replica on SQLite | PostgreSQL ÷ SQLite |
            |---|---|---|---|---|---|
            | items indexed per second (median of \(options.rounds)) | \(rate("pg")) | \(rate("raw")) | \(ratios.isEmpty ? "–" : Measure.format(Measure.median(ratios)))\(spread) | \(rate("sqlite")) | \(divided(median("pg"), median("sqlite"))) |
            | the same, raw's GIN index made before the COPY (not the baseline) | \(rate("pg")) | \(rate("raw, index first")) | \(divided(median("pg"), median("raw, index first"))) | | |
            | the ranking lists' build after the load, s (median) | \(builds["pg"].map { Measure.format(Measure.median($0)) } ?? "–") | – | – | \(builds["sqlite"].map { Measure.format(Measure.median($0)) } ?? "–") | \(divided(builds["pg"].map(Measure.median), builds["sqlite"].map(Measure.median))) |
            | size on disk, rows + TOAST + indexes (MiB) | \(mebibytes("pg")) | \(mebibytes("raw")) | \(divided(sizes["pg"].map(Double.init), sizes["raw"].map(Double.init))) | \(mebibytes("sqlite")) | \(divided(sizes["pg"].map(Double.init), sizes["sqlite"].map(Double.init))) |
            """)
        func ms(_ values: [Double]?, _ p: Double) -> String {
            values.map { Measure.format(Measure.percentile($0, p) * 1000) } ?? "–"
        }
        func ratio(_ a: [Double]?, _ b: [Double]?, _ p: Double) -> String {
            guard let a, let b else { return "–" }
            return Measure.format(Measure.percentile(a, p) / Measure.percentile(b, p))
        }
        print(
            """

            Ranked any-word top 20 (replica's default; raw: the words OR-ed, `ts_rank_cd`, `ORDER BY rank DESC LIMIT 20`), after `VACUUM ANALYZE`, ms:

            | queries | percentile | replica on PostgreSQL | raw PostgreSQL | replica ÷ raw | replica on SQLite | PostgreSQL ÷ SQLite |
            |---|---|---|---|---|---|---|
            """)
        for (name, queries) in classes {
            for p in [50.0, 99.0] {
                let mine = times["pg"]?[name]
                let theirs = times["raw"]?[name]
                let local = times["sqlite"]?[name]
                print(
                    "| \(name) (\(queries.count)) | p\(Int(p)) | \(ms(mine, p)) | \(ms(theirs, p)) | \(ratio(mine, theirs, p)) | \(ms(local, p)) | \(ratio(mine, local, p)) |"
                )
            }
        }
        for p in [50.0, 99.0] {
            let mine = times["pg"]?[classes[3].name]
            let theirs = times["raw, stop words dropped"]?[classes[3].name]
            print(
                "| eight-word questions, raw without English stop words (not the baseline) | p\(Int(p)) | \(ms(mine, p)) | \(ms(theirs, p)) | \(ratio(mine, theirs, p)) | | |"
            )
        }
        for (name, queries) in classes {
            for p in [50.0, 99.0] {
                let mine = times["pg"]?[name]
                let theirs = times["raw, replica's rows"]?[name]
                print(
                    "| \(name) (\(queries.count)), raw over replica's own rows: its tsvectors, GIN index and stems (like for like) | p\(Int(p)) | \(ms(mine, p)) | \(ms(theirs, p)) | \(ratio(mine, theirs, p)) | | |"
                )
            }
        }
        print(
            "\nsign-out of the \(items.count)-item account on PostgreSQL: \(signOuts.map { Measure.format($0 * 1000) + " ms" }.joined(separator: ", "))"
        )
    }

    /// Times every query of every class on `store` (ranked any-word top 20, by the words alone), after a
    /// warm-up of ten two-word queries; returns `times` with the new times added, by class.
    static func search(_ store: Store, _ classes: [(name: String, queries: [String])], adding times: [String: [Double]])
        async throws
        -> [String: [Double]]
    {
        var times = times
        for query in classes[0].queries.prefix(10) {
            _ = try await IndexBenchmark.timedSearch(store, query, ranked: true)
        }
        for (name, queries) in classes {
            for query in queries {
                times[name, default: []].append(try await IndexBenchmark.timedSearch(store, query, ranked: true))
            }
        }
        return times
    }
}
