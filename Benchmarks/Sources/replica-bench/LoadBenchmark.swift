import Foundation
import Replica
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Issue 11's load test: 8 writers and 8 searchers on one store for a while, with `replica watch`
/// following a file tree, a plugin and the record store in a process of its own.
///
/// Writers, two of each kind: the API (`indexItems`, then an immediate search from the same task, which
/// must find the item: no stale read after a commit), the record store (`records.write`; the watcher
/// projects), files written into the watched tree, and note files read by the example exec plugin. Each
/// write carries a word of its own. Searchers run random searches. At the end every write must be
/// searchable (waiting at most a minute for the watcher); errors are counted by kind, and the watcher's
/// resident memory is sampled every 10 seconds.
enum LoadBenchmark {
    struct Tally: Sendable {
        var writes: [String: Int] = [:]
        var staleReads = 0
        var errors: [String: Int] = [:]
        var searches: [Double] = []
        var words: [(kind: String, word: String)] = []
        /// With `rewrite`, the word each file or note holds now (earlier ones were overwritten).
        var latest: [String: (kind: String, word: String)] = [:]
    }

    /// What the tasks share.
    final class Shared: Sendable {
        let tally = Mutex(Tally())
        let memory = Mutex<[(seconds: Int, kilobytes: Int)]>([])

        func note(_ error: any Error, _ kind: String) {
            // The error's kind and its first words (SQLite's code and message: no indexed text here).
            let reason =
                (error as? ReplicaError)?.code.rawValue
                ?? (String(describing: type(of: error)) + " (" + String(String(describing: error).prefix(120)) + ")")
            tally.withLock { $0.errors[kind + " " + reason, default: 0] += 1 }
        }
    }

    static func word(_ kind: String, _ writer: Int, _ number: Int) -> String { "zq\(kind)w\(writer)n\(number)" }

    /// - Parameter rewrite: file and note writers cycle over 50 names each instead of writing new files,
    ///   so the watcher follows a fixed set of files: its memory then tells growth from a leak.
    static func run(replica: String, plugin: String, seconds: Double, rewrite: Bool = false) async throws {
        let root = try Measure.scratchDirectory("load")
        defer { Measure.removeDirectory(root) }
        let storePath = root + "/store"
        let tree = root + "/tree"
        let notes = root + "/notes"
        for folder in [tree, notes] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        let store = try Store(directory: URL(fileURLWithPath: storePath))
        try await store.signIn("load")
        _ = try await store.addSource(
            SourceDefinition(kind: .files, account: "load", settings: .object([("root", .string(tree))])))
        _ = try await store.addSource(
            SourceDefinition(
                kind: .exec, account: "load",
                settings: .object([
                    ("command", .array(["python3", .string(plugin), .string(notes)].map { $0 }))
                ])))
        let watcher = try ChildProcess(
            [replica, "--store", storePath, "watch"],
            environment: ProcessInfo.processInfo.environment
                .merging(["REPLICA_MODEL_DIR": "off"]) { $1 }, standardError: .null)
        defer {
            watcher.signal(SIGTERM)
            _ = watcher.wait(timeout: 20)
        }

        let shared = Shared()
        let deadline = Date().addingTimeInterval(seconds)
        let api = try await store.index(named: "api", account: "load")
        let started = Date()
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<2 {
                group.addTask {  // the API, with a read right after each commit
                    var number = 0
                    while Date() < deadline {
                        let text = word("api", writer, number)
                        do {
                            try await api.indexItems([
                                SearchableItem(
                                    uniqueIdentifier: ItemIdentifier(text),
                                    attributeSet: {
                                        var attributes = AttributeSet(contentType: .plainText)
                                        attributes.textContent = "load test \(text)"
                                        return attributes
                                    }(), expirationDate: .distantFuture)
                            ])
                            let found = try await api.search(SearchQuery(text, limit: 1)).count
                            shared.tally.withLock {
                                $0.writes["api", default: 0] += 1
                                $0.words.append(("api", text))
                                if found == 0 { $0.staleReads += 1 }
                            }
                        } catch { shared.note(error, "api") }
                        number += 1
                        try? await Task.sleep(for: .milliseconds(20))
                    }
                }
                group.addTask {  // the record store
                    var number = 0
                    while Date() < deadline {
                        let text = word("rec", writer, number)
                        do {
                            _ = try await store.records.write([
                                Record(
                                    account: "load", kind: "note", id: text, version: 1,
                                    fields: ["title": .string(text), "body": "a record"])
                            ])
                            shared.tally.withLock {
                                $0.writes["records", default: 0] += 1
                                $0.words.append(("records", text))
                            }
                        } catch { shared.note(error, "records") }
                        number += 1
                        try? await Task.sleep(for: .milliseconds(50))
                    }
                }
                group.addTask {  // files in the watched tree
                    await writeFiles(
                        kind: "files", prefix: "f", writer: writer, every: .milliseconds(100), until: deadline,
                        rewrite: rewrite, shared: shared
                    ) { name, text in
                        try "a file with \(text)".write(
                            toFile: tree + "/\(name).txt", atomically: true, encoding: .utf8)
                    }
                }
                group.addTask {  // notes the exec plugin reads
                    await writeFiles(
                        kind: "exec", prefix: "n", writer: writer, every: .milliseconds(200), until: deadline,
                        rewrite: rewrite, shared: shared
                    ) { name, text in
                        let json = JSON.object([("title", .string(text)), ("body", "a plugin note")])
                        try json.serialized().write(toFile: notes + "/\(name).json", atomically: true, encoding: .utf8)
                    }
                }
            }
            for searcher in 0..<8 {
                group.addTask {
                    let words = ["load", "test", "record", "file", "plugin", "note", "zqapi", "missing"]
                    var number = searcher
                    while Date() < deadline {
                        let query = SearchQuery(
                            words[number % words.count] + " " + words[(number * 7 + 3) % words.count], limit: 20)
                        do {
                            let seconds = try await Measure.seconds { _ = try await store.search(query) }
                            shared.tally.withLock { $0.searches.append(seconds) }
                        } catch { shared.note(error, "search") }
                        number += 1
                    }
                }
            }
            group.addTask {  // the watcher's memory
                while Date() < deadline {
                    let kilobytes = residentKilobytes(of: watcher.processIdentifier)
                    shared.memory.withLock { $0.append((Int(Date().timeIntervalSince(started)), kilobytes)) }
                    try? await Task.sleep(for: .seconds(10))
                }
            }
        }
        shared.memory.withLock {
            $0.append((Int(Date().timeIntervalSince(started)), residentKilobytes(of: watcher.processIdentifier)))
        }

        // Every write must end up searchable.
        let final = shared.tally.withLock { $0 }
        var missing = final.words + final.latest.values
        let settle = Date().addingTimeInterval(60)
        while !missing.isEmpty, Date() < settle {
            var still: [(kind: String, word: String)] = []
            for entry in missing where (try? await store.search(SearchQuery(entry.word, limit: 1)).isEmpty) != false {
                still.append(entry)
            }
            missing = still
            if !missing.isEmpty { try? await Task.sleep(for: .seconds(1)) }
        }
        print(
            "load: \(Int(seconds)) s\(rewrite ? " (files and notes rewritten, 50 names a writer)" : ""), 8 writers (2 each: API, records, files, exec plugin) and 8 searchers; replica watch in its own process"
        )
        print("| writer | writes | not searchable within 60 s after the end |\n|---|---|---|")
        for kind in ["api", "records", "files", "exec"] {
            print("| \(kind) | \(final.writes[kind] ?? 0) | \(missing.filter { $0.kind == kind }.count) |")
        }
        print("stale reads (an API write not found by a search right after it returned): \(final.staleReads)")
        print(
            "errors: "
                + (final.errors.isEmpty
                    ? "none"
                    : final.errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")))
        print(
            String(
                format: "searches: %d, p50 %.1f ms, p99 %.1f ms", final.searches.count,
                Measure.median(final.searches) * 1000, Measure.percentile(final.searches, 99) * 1000))
        print(
            "replica watch resident memory (s: MiB): "
                + shared.memory.withLock { $0 }.map { "\($0.seconds): \($0.kilobytes / 1024)" }.joined(separator: ", "))
    }

    /// One writer of files a watcher picks up: each write holds a word of its own, in a new file (or,
    /// with `rewrite`, in one of 50 files named after the writer).
    static func writeFiles(
        kind: String, prefix: String, writer: Int, every interval: Duration, until deadline: Date,
        rewrite: Bool, shared: Shared, write: (_ name: String, _ text: String) throws -> Void
    ) async {
        var number = 0
        while Date() < deadline {
            let text = word(kind, writer, number)
            let name = rewrite ? "\(prefix)\(writer)-\(number % 50)" : text
            do {
                try write(name, text)
                shared.tally.withLock {
                    $0.writes[kind, default: 0] += 1
                    if rewrite { $0.latest[kind + "/" + name] = (kind, text) } else { $0.words.append((kind, text)) }
                }
            } catch { shared.note(error, kind) }
            number += 1
            try? await Task.sleep(for: interval)
        }
    }

    static func residentKilobytes(of pid: pid_t) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}
