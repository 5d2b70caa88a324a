import Foundation
import Replica
import ReplicaSQLite

/// Issue 5's benchmark: search-tool call latency (two words, top 20 with snippets, all 20 hydrated) over
/// records, beside raw FTS5 on the same paragraphs; the MCP round trip; schema and result-page sizes.
enum ToolBenchmark {
    static func run(corpus: String, replica: String, itemCount: Int, queryCount: Int) async throws {
        let paragraphs = try Corpus.paragraphs(in: corpus, count: itemCount)
        let directory = try Measure.scratchDirectory("tool")
        defer { Measure.removeDirectory(directory) }
        let raw = try RawFTS5(path: directory + "/raw.sqlite")
        try raw.insert(paragraphs)
        // Two-word queries with at least 20 matches: the page is full, and all 20 are hydrated.
        let queries = Array(
            try Corpus.queries(from: paragraphs, count: queryCount * 20, seed: 11).filter {
                try raw.count($0, upTo: 20) == 20
            }
            .prefix(queryCount))
        print(
            "corpus: \(paragraphs.count) paragraphs as records of kind 'doc'; \(queries.count) two-word queries with 20 or more matches"
        )

        let store = try Store(directory: URL(fileURLWithPath: directory + "/store"))
        try await store.signIn("bench")
        let records = paragraphs.map(ReplicationBenchmark.record)
        for start in stride(from: 0, to: records.count, by: 5000) {
            try await store.records.write(Array(records[start..<min(start + 5000, records.count)]))
        }
        _ = try await ProjectionEngine(store: store, projections: ProjectionSet(indexName: Store.defaultIndexName))
            .catchUp(account: "bench")

        // As replica mcp sets it up: the record store's projections, so each call catches up first and
        // hydration refreshes records' results from their records.
        func tool(_ guide: Guide, fetch: [AttributeKey] = []) -> SearchTool {
            var configuration = SearchTool.Configuration(
                sources: [.index(IndexSource(fetchAttributes: fetch))], guide: guide)
            configuration.hydration = Hydration(projections: ProjectionSet(indexName: Store.defaultIndexName))
            return SearchTool(store: store, configuration: configuration)
        }
        let structured = tool(.complete)
        let compact = tool(Guide(level: .complete, format: .compact))
        let fullText = tool(.complete, fetch: [.textContent])
        func arguments(_ query: String) -> String { JSON.object([("query", .string(query))]).serialized() }

        // Warm both up (page cache, statement caches).
        for query in queries.prefix(20) {
            _ = try raw.timedSearch(query)
            _ = await structured.call(arguments: arguments(query))
        }
        var rawTimes: [Double] = []
        var searchTimes: [Double] = []
        var toolTimes: [Double] = []
        var fullTimes: [Double] = []
        var catchUpTimes: [Double] = []
        let engine = ProjectionEngine(store: store, projections: ProjectionSet(indexName: Store.defaultIndexName))
        var structuredBytes: [Double] = []
        var compactBytes: [Double] = []
        var shown: [Double] = []
        for (n, query) in queries.enumerated() {
            // Alternate the order so neither side always runs on a warmer cache.
            if n % 2 == 0 { rawTimes.append(try raw.timedSearch(query)) }
            searchTimes.append(try await Measure.seconds { _ = try await store.search(SearchQuery(query, limit: 20)) })
            catchUpTimes.append(try await Measure.seconds { _ = try await engine.catchUp(account: "bench") })
            var page = ""
            toolTimes.append(await Measure.seconds { page = await structured.call(arguments: arguments(query)).text })
            if n % 2 == 1 { rawTimes.append(try raw.timedSearch(query)) }
            fullTimes.append(await Measure.seconds { _ = await fullText.call(arguments: arguments(query)) })
            let json = try JSON.parse(page)
            let results = json["queries"]?.arrayValue?.first?["results"]?.arrayValue?.count ?? 0
            shown.append(Double(results))
            guard results > 0 else { continue }
            structuredBytes.append(Double(page.utf8.count))
            compactBytes.append(Double(await compact.call(arguments: arguments(query)).text.utf8.count))
        }

        let mcp = try await mcpRoundTrips(replica: replica, store: directory + "/store", queries: queries)
        let schemas = try schemaSizes(replica: replica, store: directory + "/store")

        func ms(_ values: [Double], _ p: Double) -> String { Measure.format(Measure.percentile(values, p) * 1000) }
        let mean = { (values: [Double]) in values.reduce(0, +) / Double(max(values.count, 1)) }
        print(
            """

            | measure | baseline | replica | ratio | target |
            |---|---|---|---|---|
            | tool call, two words, top 20 with snippets, hydrated: p50 / p99 (ms) vs raw FTS5 top 20 with snippets | \(ms(rawTimes, 50)) / \(ms(rawTimes, 99)) | \(ms(toolTimes, 50)) / \(ms(toolTimes, 99)) | \(Measure.format(Measure.percentile(toolTimes, 50) / Measure.percentile(rawTimes, 50))) at p50 | p50 < 10 ms |
            | of which the unhydrated `store.search` (ms, p50 / p99) | | \(ms(searchTimes, 50)) / \(ms(searchTimes, 99)) | | |
            | of which the catch-up with the record store, nothing to apply (ms, p50 / p99) | | \(ms(catchUpTimes, 50)) / \(ms(catchUpTimes, 99)) | | |
            | tool call with the full text hydrated (`textContent` fetched), p50 / p99 (ms) | | \(ms(fullTimes, 50)) / \(ms(fullTimes, 99)) | \(Measure.format(Measure.percentile(fullTimes, 50) / Measure.percentile(rawTimes, 50))) at p50 | |
            | `replica mcp` round trip (tools/call over stdio), p50 / p99 (ms) vs the in-process call | \(ms(toolTimes, 50)) / \(ms(toolTimes, 99)) | \(ms(mcp, 50)) / \(ms(mcp, 99)) | +\(Measure.format((Measure.percentile(mcp, 50) - Measure.percentile(toolTimes, 50)) * 1000)) ms at p50 | |
            | result page (mean bytes; \(Measure.format(mean(shown), 1)) results a page), structured vs compact | \(Int(mean(structuredBytes))) (≈\(Int(mean(structuredBytes) / 4)) tokens) | \(Int(mean(compactBytes))) (≈\(Int(mean(compactBytes) / 4)) tokens) | \(Measure.format(mean(compactBytes) / mean(structuredBytes), 3)) | ≤ 0.5 |

            | `replica tool schema` | bytes | tokens (bytes ÷ 4) | target |
            |---|---|---|---|
            """)
        for (guidance, bytes) in schemas {
            let target = guidance == "complete" ? "< 1,500" : guidance.hasPrefix("focused") ? "< 400" : ""
            print("| `--guidance \(guidance)` | \(bytes) | \(bytes / 4) | \(target) |")
        }
    }

    /// Starts `replica mcp`, initializes, and times one tools/call per query.
    static func mcpRoundTrips(replica: String, store: String, queries: [String]) async throws -> [Double] {
        let process = try ChildProcess([replica, "--store", store, "mcp"], standardInput: .pipe, standardOutput: .pipe)
        let input = process.standardInput!
        defer {
            try? input.close()
            process.waitUntilExit()
        }
        var reader = PipeLines(process.standardOutput!)
        func send(_ message: JSON) {
            input.write(Data((message.serialized() + "\n").utf8))
        }
        send(
            .object([
                ("jsonrpc", "2.0"), ("id", 0), ("method", "initialize"),
                (
                    "params",
                    .object([
                        ("protocolVersion", "2025-11-25"), ("capabilities", .object([])),
                        ("clientInfo", .object([("name", "replica-bench"), ("version", "1")])),
                    ])
                ),
            ]))
        _ = try reader.next()
        send(.object([("jsonrpc", "2.0"), ("method", "notifications/initialized")]))
        var times: [Double] = []
        for (n, query) in queries.enumerated() {
            let call = JSON.object([
                ("jsonrpc", "2.0"), ("id", .number(Double(n + 1))), ("method", "tools/call"),
                ("params", .object([("name", "search"), ("arguments", .object([("query", .string(query))]))])),
            ])
            var response = ""
            let seconds = try Measure.secondsNow {
                send(call)
                response = try reader.next()
            }
            guard response.contains("\"isError\":false") else {
                throw BenchError("the MCP call failed: \(response.prefix(200))")
            }
            if n >= 20 { times.append(seconds) }  // the first calls warm the server up
        }
        return times
    }

    /// The bytes of `replica tool schema` at each guidance level.
    static func schemaSizes(replica: String, store: String) throws -> [(String, Int)] {
        let levels =
            [
                "complete", "dynamic:textMatch,numericMatch,dates,people,contentType", "dynamic:textMatch,dates",
                "dynamic:textMatch",
            ]
            + ["items", "documents", "communications", "calendar", "visualMedia", "audio"].map { "focused:" + $0 }
        return try levels.map { level in
            let process = try ChildProcess(
                [replica, "--store", store, "tool", "schema", "--guidance", level], standardOutput: .pipe)
            let data = process.standardOutput!.readDataToEndOfFile()
            guard process.waitUntilExit().status == 0 else {
                throw BenchError("tool schema --guidance \(level) failed")
            }
            return (level, data.count - 1)  // without the final newline
        }
    }
}

/// Lines read from a pipe, blocking.
struct PipeLines {
    let handle: FileHandle
    var buffer = Data()

    init(_ handle: FileHandle) { self.handle = handle }

    mutating func next() throws -> String {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            let chunk = handle.availableData
            guard !chunk.isEmpty else { throw BenchError("the server closed its output") }
            buffer.append(chunk)
        }
    }
}
