import Foundation
import Replica

// replica-bench: the figures in BENCHMARKS.md, each beside a baseline measured in the same run.
//
//   swift run -c release --package-path Benchmarks replica-bench index --corpus DIR [--items N] [--rounds R]
//   Benchmarks/.build/release/replica-bench postgres --corpus DIR   (issue 20 §6: replica on PostgreSQL)

let arguments = Array(CommandLine.arguments.dropFirst())

func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

let usage = """
    usage: replica-bench index --corpus DIR [--items N] [--rounds R] [--queries Q] [--write-passes P]
           replica-bench remake --corpus DIR [--items N] [--rounds R] [--batch B] [--postgres [--script PATH]]
           replica-bench lists-threshold --corpus DIR [--sizes N,N…] [--queries Q] [--postgres [--script PATH]]
           replica-bench profile-index --corpus DIR [--items N] [--raw]
           replica-bench profile-ranked --corpus DIR --store DIR [--items N] [--queries Q] [--repeat R] [--questions-only]
           replica-bench replication --corpus DIR [--items N] [--writes W]
           replica-bench batches --corpus DIR [--items N] [--batch B] [--rounds R] [--only "C1;C2"]
           replica-bench quality --documents FILE --queries FILE[,FILE…] [--model NAME] [--modes lexical,semantic,hybrid]
           replica-bench files --corpus DIR --replica PATH [--rounds R] [--writes W] [--no-recoll]
           replica-bench tool --corpus DIR --replica PATH [--items N] [--queries Q]
           replica-bench postgres --corpus DIR [--items N] [--rounds R] [--queries Q] [--accounts A] [--account-items M]
                                  [--sign-outs S] [--quality DIR] [--lexical-only] [--writes W]
                                  [--follow-seconds S] [--only load,quality,tenancy,standby,follow] [--script PATH]
                                  [--contestants raw,pg,sqlite,raw-index-first]
           replica-bench postgres-profile --corpus DIR --database URL --owner-database URL --store DIR [--items N]
                                  [--queries Q] [--repeat R] [--account A]
           replica-bench hybrid --store DIR [--rounds R]
           replica-bench enrichment --messages FILE [--sample FILE --predictions OUT] [--replica PATH]
           replica-bench load --replica PATH [--seconds S] [--plugin PATH] [--rewrite]
           replica-bench shared-load --replica PATH [--seconds S] [--only postgres,sqlite] [--search-rate R] [--script PATH]
      DIR is the corpus Benchmarks/make-corpus.sh builds (Debian's linux-doc).
    """

do {
    if arguments.first == "quality" {
        try await QualityBenchmark.run(
            documents: try require(
                option("--documents"), "quality needs --documents FILE (JSON lines: id, text, title)"),
            queries: try require(
                option("--queries"), "quality needs --queries FILE[,FILE…] (JSON lines: id, query, relevant)"
            ).split(separator: ",").map(String.init),
            model: option("--model") ?? "multilingual-e5-small",
            modes: (option("--modes") ?? "lexical,semantic,hybrid").split(separator: ",").map(String.init))
        exit(0)
    }
    if arguments.first == "hybrid" {
        guard let store = option("--store") else {
            throw BenchError("hybrid needs --store DIR (a store with items and vectors)")
        }
        try await HybridBenchmark.run(store: store, rounds: Int(option("--rounds") ?? "") ?? 5)
        exit(0)
    }
    if arguments.first == "postgres" {
        var options = PostgresBenchmark.Options()
        options.corpus = option("--corpus")
        if let value = option("--items") { options.itemCount = try require(Int(value), "--items takes a number") }
        if let value = option("--rounds") { options.rounds = try require(Int(value), "--rounds takes a number") }
        if let value = option("--queries") { options.queryCount = try require(Int(value), "--queries takes a number") }
        if let value = option("--accounts") { options.accounts = try require(Int(value), "--accounts takes a number") }
        if let value = option("--account-items") {
            options.accountItems = try require(Int(value), "--account-items takes a number")
        }
        if let value = option("--sign-outs") {
            options.signOuts = try require(Int(value), "--sign-outs takes a number")
        }
        if let value = option("--quality") { options.qualityData = value }
        if let value = option("--writes") { options.writes = try require(Int(value), "--writes takes a number") }
        if let value = option("--follow-seconds") {
            options.followSeconds = try require(Int(value), "--follow-seconds takes a number")
        }
        if let value = option("--script") { options.script = value }
        if let value = option("--only") { options.parts = Set(value.split(separator: ",").map(String.init)) }
        if let value = option("--contestants") {
            options.contestants = value.split(separator: ",").map {
                $0 == "raw-index-first" ? "raw, index first" : String($0)
            }
        }
        options.lexicalOnly = arguments.contains("--lexical-only")
        try await PostgresBenchmark.run(options)
        exit(0)
    }
    if arguments.first == "postgres-profile" {
        try await PostgresBenchmark.profile(
            corpus: try require(option("--corpus"), "postgres-profile needs --corpus DIR"),
            items: try require(Int(option("--items") ?? "100000"), "--items takes a number"),
            queryCount: try require(Int(option("--queries") ?? "100"), "--queries takes a number"),
            repeats: try require(Int(option("--repeat") ?? "3"), "--repeat takes a number"),
            url: try require(option("--database"), "postgres-profile needs --database URL (the app role's)"),
            ownerURL: try require(option("--owner-database"), "postgres-profile needs --owner-database URL"),
            store: try require(option("--store"), "postgres-profile needs --store DIR"),
            account: option("--account") ?? "bench-0")
        exit(0)
    }
    if arguments.first == "load" {
        guard let replica = option("--replica") else {
            throw BenchError("load needs --replica PATH (the built replica binary)")
        }
        let plugin = option("--plugin") ?? "Plugins/Exec/examples/notes-plugin.py"
        // Run from elsewhere, the default path names nothing, and every note would go unindexed.
        guard FileManager.default.fileExists(atPath: plugin) else {
            throw BenchError("no plugin at \(plugin): run from the package folder, or give --plugin PATH")
        }
        try await LoadBenchmark.run(
            replica: replica, plugin: plugin, seconds: Double(option("--seconds") ?? "") ?? 600,
            rewrite: arguments.contains("--rewrite"))
        exit(0)
    }
    if arguments.first == "shared-load" {
        guard let replica = option("--replica") else {
            throw BenchError("shared-load needs --replica PATH (the built replica binary)")
        }
        try await SharedLoadBenchmark.run(
            replica: replica, script: option("--script") ?? "scripts/postgres.sh",
            seconds: try require(Int(option("--seconds") ?? "600"), "--seconds takes a number"),
            backends: (option("--only") ?? "postgres,sqlite").split(separator: ",").map(String.init),
            searchRate: try option("--search-rate").map { try require(Double($0), "--search-rate takes a number") })
        exit(0)
    }
    if arguments.first == "shared-load-worker", arguments.count == 5, let number = Int(arguments[2]),
        let seconds = Int(arguments[3])
    {
        try await SharedLoadBenchmark.work(role: arguments[1], number: number, seconds: seconds, output: arguments[4])
        exit(0)
    }
    if arguments.first == "enrichment" {
        guard let messages = option("--messages") else {
            throw BenchError(
                "enrichment needs --messages FILE (python3 Benchmarks/quality/build_enrichment_set.py writes it)")
        }
        try await EnrichmentBenchmark.run(
            messages: messages, predictions: option("--predictions"), sample: option("--sample"),
            replica: option("--replica"))
        exit(0)
    }
    guard let command = arguments.first, let corpus = option("--corpus") else {
        print(usage)
        exit(2)
    }
    switch command {
    case "index":
        try await IndexBenchmark.run(
            corpus: corpus,
            itemCount: Int(option("--items") ?? "") ?? 100_000,
            rounds: Int(option("--rounds") ?? "") ?? 3,
            queryCount: Int(option("--queries") ?? "") ?? 200,
            writePasses: option("--write-passes").flatMap { Int($0) })
    case "remake":
        try await RemakeBenchmark.run(
            corpus: corpus, itemCount: Int(option("--items") ?? "") ?? 100_000,
            rounds: Int(option("--rounds") ?? "") ?? 3, batchSize: Int(option("--batch") ?? "") ?? 5_000,
            postgres: arguments.contains("--postgres"), script: option("--script") ?? PostgresBenchmark.Options().script
        )
    case "lists-threshold":
        try await ListsThresholdBenchmark.run(
            corpus: corpus,
            sizes: (option("--sizes") ?? "1000,3000,10000,30000").split(separator: ",").compactMap { Int($0) },
            queryCount: Int(option("--queries") ?? "") ?? 100, postgres: arguments.contains("--postgres"),
            script: option("--script") ?? PostgresBenchmark.Options().script)
    case "batches":
        try await BatchesBenchmark.run(
            corpus: corpus, itemCount: Int(option("--items") ?? "") ?? 100_000,
            batchSize: Int(option("--batch") ?? "") ?? 1_000, rounds: Int(option("--rounds") ?? "") ?? 3,
            only: option("--only").map { $0.split(separator: ";").map(String.init) })
    case "replication":
        try await ReplicationBenchmark.run(
            corpus: corpus, itemCount: Int(option("--items") ?? "") ?? 100_000,
            writes: Int(option("--writes") ?? "") ?? 200)
    case "files":
        guard let replica = option("--replica") else {
            throw BenchError("files needs --replica PATH (the built replica binary)")
        }
        try await FilesBenchmark.run(
            corpus: corpus, replica: replica, rounds: Int(option("--rounds") ?? "") ?? 3,
            writes: Int(option("--writes") ?? "") ?? 60, withRecoll: !arguments.contains("--no-recoll"))
    case "tool":
        guard let replica = option("--replica") else {
            throw BenchError("tool needs --replica PATH (the built replica binary)")
        }
        try await ToolBenchmark.run(
            corpus: corpus, replica: replica, itemCount: Int(option("--items") ?? "") ?? 100_000,
            queryCount: Int(option("--queries") ?? "") ?? 300)
    case "raw-load":
        guard let database = option("--database") else { throw BenchError("raw-load needs --database PATH") }
        try FilesBenchmark.rawLoad(corpus: corpus, database: database)
    case "profile-updates":
        // A bulk load, then updates in place, every other pass with never-firing triggers on items.
        try await IndexBenchmark.profileUpdates(corpus: corpus, itemCount: Int(option("--items") ?? "") ?? 100_000)
    case "profile-index":
        // Loads the corpus, then only indexes, three times: for `perf record --delay`; `--raw`: raw FTS5 beside.
        try await IndexBenchmark.profile(
            corpus: corpus, itemCount: Int(option("--items") ?? "") ?? 100_000,
            besideRaw: arguments.contains("--raw"))
    case "profile-ranked":
        // Ranked searches through the lists on a store kept in --store DIR (built there the first time).
        guard let store = option("--store") else { throw BenchError("profile-ranked needs --store DIR") }
        try await IndexBenchmark.profileRanked(
            corpus: corpus, itemCount: Int(option("--items") ?? "") ?? 100_000, store: store,
            queryCount: Int(option("--queries") ?? "") ?? 100, repeats: Int(option("--repeat") ?? "") ?? 1,
            questionsOnly: arguments.contains("--questions-only"))
    case "sql-variants":
        try await SQLVariants.run(corpus: corpus, itemCount: Int(option("--items") ?? "") ?? 100_000)
    default:
        print(usage)
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("replica-bench: \(error)\n".utf8))
    exit(1)
}
