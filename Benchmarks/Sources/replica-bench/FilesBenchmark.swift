import Foundation
import Replica
import ReplicaFileTree
import ReplicaSQLite

#if canImport(Glibc)
import Glibc
#endif

/// Issue 4's benchmark: a full index of the corpus tree by `replica sync` (a file-tree source), beside a
/// raw SQLite FTS5 loader and recoll in the same run; and write-to-searchable latency while watching.
enum FilesBenchmark {
    struct Run {
        var seconds: Double
        var cpu: Double
        var peakMiB: Double
    }

    /// Starts a command as a child with posix_spawn, its standard output going to `output` (or nowhere).
    /// Foundation's `Process.waitUntilExit` was seen to hang here when called off the main thread.
    static func spawn(_ command: [String], environment: [String: String] = [:], output: String = "/dev/null") throws
        -> pid_t
    {
        var pid: pid_t = 0
        let arguments = command.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        let merged =
            ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { strdup("\($0.key)=\($0.value)") } + [
                nil
            ]
        defer { merged.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        defer { posix_spawn_file_actions_destroy(&actions) }
        guard posix_spawnp(&pid, command[0], &actions, nil, arguments, merged) == 0 else {
            throw BenchError("cannot start \(command[0])")
        }
        return pid
    }

    /// Runs a command as a child and measures it with `wait4`: its own wall time, CPU time and peak RSS.
    static func measure(_ command: [String], environment: [String: String] = [:]) throws -> Run {
        let start = DispatchTime.now().uptimeNanoseconds
        let pid = try spawn(command, environment: environment)
        var status: Int32 = 0
        var usage = rusage()
        wait4(pid, &status, 0, &usage)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        guard status == 0 else { throw BenchError("\(command.joined(separator: " ")) failed with status \(status)") }
        let cpu =
            Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
        return Run(seconds: seconds, cpu: cpu, peakMiB: Double(usage.ru_maxrss) / 1024)
    }

    static func directorySize(_ path: String) -> Int {
        let enumerator = FileManager.default.enumerator(atPath: path)
        var total = 0
        while let name = enumerator?.nextObject() as? String {
            total += (try? FileManager.default.attributesOfItem(atPath: path + "/" + name)[.size] as? Int) ?? 0
        }
        return total
    }

    static func run(corpus: String, replica: String, rounds: Int, writes: Int, withRecoll: Bool) async throws {
        let bench = CommandLine.arguments[0]
        var raw: [Run] = []
        var mine: [Run] = []
        var recoll: [Run] = []
        var sizes = (raw: 0, replica: 0, recoll: 0)
        for round in 0..<rounds {
            var contestants = ["raw", "replica"] + (withRecoll ? ["recoll"] : [])
            for _ in 0..<(round % contestants.count) { contestants.append(contestants.removeFirst()) }
            for contestant in contestants {
                let scratch = try Measure.scratchDirectory("files-\(contestant)")
                defer { Measure.removeDirectory(scratch) }
                switch contestant {
                case "raw":
                    raw.append(
                        try measure([bench, "raw-load", "--corpus", corpus, "--database", scratch + "/raw.sqlite"]))
                    sizes.raw = directorySize(scratch)
                case "replica":
                    _ = try measure([replica, "--store", scratch + "/store", "accounts", "sign-in", "bench"])
                    _ = try measure([
                        replica, "--store", scratch + "/store", "sources", "add", "files", "--account", "bench",
                        "--name", "corpus", corpus,
                    ])
                    // The words only, as the loader.
                    mine.append(try measure([replica, "--store", scratch + "/store", "sync", "--no-embed"]))
                    sizes.replica = directorySize(scratch + "/store")
                default:
                    try writeRecollConfiguration(scratch, corpus: corpus)
                    recoll.append(try measure(["recollindex", "-c", scratch, "-z"]))
                    sizes.recoll = directorySize(scratch + "/xapiandb")
                }
                print("round \(round + 1): \(contestant) done")
            }
        }
        func median(_ runs: [Run], _ value: (Run) -> Double) -> Double { Measure.median(runs.map(value)) }
        let rawTime = median(raw, \.seconds)
        print(
            """

            | system | full index wall | CPU | peak RSS | index size | wall ÷ raw FTS5 |
            |---|---|---|---|---|---|
            | raw SQLite FTS5 loader (reads every file, one transaction) | \(Measure.format(rawTime)) s | \(Measure.format(median(raw, \.cpu))) s | \(Int(median(raw, \.peakMiB))) MiB | \(sizes.raw >> 20) MiB | 1.00 |
            | replica `sync` of a file-tree source | \(Measure.format(median(mine, \.seconds))) s | \(Measure.format(median(mine, \.cpu))) s | \(Int(median(mine, \.peakMiB))) MiB | \(sizes.replica >> 20) MiB | \(Measure.format(median(mine, \.seconds) / rawTime)) |
            """)
        if withRecoll {
            print(
                "| recoll 1.34 `recollindex -z` | \(Measure.format(median(recoll, \.seconds))) s | \(Measure.format(median(recoll, \.cpu))) s | \(Int(median(recoll, \.peakMiB))) MiB | \(sizes.recoll >> 20) MiB | \(Measure.format(median(recoll, \.seconds) / rawTime)) |"
            )
        }
        print("\n(medians of \(rounds) rounds, order rotated each round)")

        let (latencies, firstScan) = try await replicaLatency(corpus: corpus, writes: writes)
        // The watcher's first scan of the same tree, in this process (the library's `FileTreeSource`), until
        // it watches; then the lists, which the watcher's background service builds at its next pass.
        print(
            "\nreplica watch's first scan (in-process, until watching): \(Measure.format(firstScan.scan)) s, then the ranking lists \(Measure.format(firstScan.lists)) s (CPU \(Measure.format(firstScan.cpu)) s); together ÷ raw loader \(Measure.format((firstScan.scan + firstScan.lists) / rawTime))"
        )
        print(
            "\nreplica write-to-searchable while watching the corpus (\(writes) writes): p50 \(Measure.format(Measure.percentile(latencies, 50) * 1000)) ms, p99 \(Measure.format(Measure.percentile(latencies, 99) * 1000)) ms, max \(Measure.format((latencies.max() ?? 0) * 1000)) ms"
        )
        if withRecoll {
            let recollLatencies = try recollLatency(corpus: corpus, writes: writes)
            print(
                "recoll write-to-searchable (monixinterval = 1, \(writes) writes): p50 \(Measure.format(Measure.percentile(recollLatencies, 50) * 1000)) ms, p99 \(Measure.format(Measure.percentile(recollLatencies, 99) * 1000)) ms, \(recollLatencies.filter { $0 >= 30 }.count) not found within 30 s"
            )
        }
    }

    /// The raw loader: every file's text into one FTS5 table in one transaction (run as a child).
    static func rawLoad(corpus: String, database: String) throws {
        let connection = try Connection(path: database)
        try connection.execute(
            "CREATE VIRTUAL TABLE t USING fts5(path, body, tokenize = '\(IndexBenchmark.tokenizer)')")
        let files = FileManager.default.enumerator(atPath: corpus)
        let insert = try connection.prepare("INSERT INTO t(path, body) VALUES (?, ?)")
        try connection.transaction {
            while let name = files?.nextObject() as? String {
                let path = corpus + "/" + name
                var info = stat()
                guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,
                    let data = FileManager.default.contents(atPath: path)
                else { continue }
                try insert.run([.text(path), .text(String(decoding: data, as: UTF8.self))])
            }
        }
    }

    static func writeRecollConfiguration(_ directory: String, corpus: String) throws {
        try """
        topdirs = \(corpus)
        idxniceprio = 0
        monioniceclass = 2
        textunknownasplain = 1
        monixinterval = 1
        """.write(toFile: directory + "/recoll.conf", atomically: true, encoding: .utf8)
        try ".yaml = text/plain\n.yml = text/plain\n".write(
            toFile: directory + "/mimemap", atomically: true, encoding: .utf8)
    }

    /// Writes files into the watched corpus one at a time and measures when each can be found.
    /// Also times the watcher's first scan of the tree, and the ranking lists' build after it.
    static func replicaLatency(corpus: String, writes: Int) async throws -> (
        latencies: [Double], firstScan: (scan: Double, lists: Double, cpu: Double)
    ) {
        let scratch = try Measure.scratchDirectory("watch")
        defer { Measure.removeDirectory(scratch) }
        let store = try Store(directory: URL(fileURLWithPath: scratch + "/store"))
        try await store.signIn("bench")
        let definition = try await store.addSource(
            SourceDefinition(kind: .files, account: "bench", settings: .object([("root", .string(corpus))])))
        let source = try FileTreeSource(definition, storeDirectory: store.directory)
        let context = try await SourceContext(definition: definition, store: store)
        let started = DispatchTime.now().uptimeNanoseconds
        let startCPU = Measure.cpuSeconds()
        let watching = Task { try await source.watch(context) }
        defer { watching.cancel() }
        // Wait until the first reconcile is done and the watch has begun.
        while try await store.sourceStatuses().first?.state != .watching {
            try await Task.sleep(for: .milliseconds(10))
        }
        let scanned = DispatchTime.now().uptimeNanoseconds
        guard try await store.rebuildStaleRankingLists() == 1 else {
            throw BenchError("the watched index got no lists")
        }
        let listed = DispatchTime.now().uptimeNanoseconds
        let cpu = Measure.cpuSeconds() - startCPU
        let folder = corpus + "/zz-latency"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var latencies: [Double] = []
        for n in 0..<writes {
            let word = "zqlatency\(n)word"
            let start = DispatchTime.now().uptimeNanoseconds
            try "a fresh note with \(word) in it".write(
                toFile: folder + "/note-\(n).txt", atomically: false, encoding: .utf8)
            while try await store.search(SearchQuery(word)).isEmpty { try await Task.sleep(for: .microseconds(200)) }
            latencies.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        return (latencies, (Double(scanned - started) / 1e9, Double(listed - scanned) / 1e9, cpu))
    }

    /// The same with recoll's monitor (`recollindex -m`), polling `recollq`.
    static func recollLatency(corpus: String, writes: Int) throws -> [Double] {
        let scratch = try Measure.scratchDirectory("recoll-watch")
        defer { Measure.removeDirectory(scratch) }
        try writeRecollConfiguration(scratch, corpus: corpus)
        _ = try measure(["recollindex", "-c", scratch, "-z"])
        // -x: stay up without an X11 session (this is a server).
        let monitor = try spawn(["recollindex", "-c", scratch, "-m", "-D", "-x"])
        defer {
            // The monitor was seen to linger for minutes after SIGTERM; its index is scratch.
            kill(monitor, SIGKILL)
            var status: Int32 = 0
            waitpid(monitor, &status, 0)
        }
        let folder = corpus + "/zz-recoll-latency"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // recollindex -m makes an initial pass and sets up its watches before it follows changes (about a
        // minute here): wait until a probe file is found before measuring.
        var latencies: [Double] = []
        for n in -1..<writes {
            let word = "zqrecoll\(n < 0 ? "probe" : String(n))word"
            let start = DispatchTime.now().uptimeNanoseconds
            try "a fresh note with \(word) in it".write(
                toFile: folder + "/note-\(n).txt", atomically: false, encoding: .utf8)
            let limit: Double = n < 0 ? 300 : 30
            while true {
                let pid = try spawn(["recollq", "-c", scratch, "-b", word], output: scratch + "/recollq.out")
                var status: Int32 = 0
                waitpid(pid, &status, 0)
                let output = FileManager.default.contents(atPath: scratch + "/recollq.out") ?? Data()
                if String(decoding: output, as: UTF8.self).contains("note-\(n).txt") { break }
                if Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 > limit { break }
            }
            if n >= 0 { latencies.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9) }
        }
        return latencies
    }
}
