import Foundation
import Replica
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Issue 12's figures: enrichment throughput beside plain indexing of the same messages, the delay from
/// indexing to the update notification, predictions for the quality evaluation, and engagement in
/// ranking. The messages are Debian changelog entries as mail (`Benchmarks/quality/build_enrichment_set.py`),
/// their creation dates moved to the last hours so that Core Spotlight's 24-hour rule lets them in.
enum EnrichmentBenchmark {
    /// Indexes `items` one at a time, 50 ms apart, into a store a `replica watch --json` process follows,
    /// and returns each item's delay to its `itemsUpdated` line.
    static func watcherDelays(replica: String, directory: String, items: [SearchableItem]) async throws -> [Double] {
        let path = directory + "/watched"
        let store = try Store(directory: URL(fileURLWithPath: path))
        try await store.signIn("bench")
        let index = try await store.index(named: "mail", account: "bench")
        let watcher = try ChildProcess(
            [replica, "--store", path, "watch", "--json"], environment: ProcessInfo.processInfo.environment,
            standardOutput: .pipe)
        defer {
            watcher.signal(SIGTERM)
            _ = watcher.wait(timeout: 20)
        }
        let seen = Mutex<[ItemIdentifier: UInt64]>([:])
        let output = watcher.standardOutput!
        Thread.detachNewThread {
            var lines = LineBuffer(maximumLineLength: 1 << 20)
            while case let chunk = output.availableData, !chunk.isEmpty {
                lines.append(chunk)
                while case .line(let bytes)? = lines.next() {
                    let now = DispatchTime.now().uptimeNanoseconds
                    guard let event = try? JSON.parse(String(decoding: bytes, as: UTF8.self)),
                        event["event"]?.stringValue == "itemsUpdated"
                    else { continue }
                    for item in event["items"]?.arrayValue ?? [] {
                        if let id = item["uniqueIdentifier"]?.stringValue {
                            seen.withLock { $0[ItemIdentifier(id)] = $0[ItemIdentifier(id)] ?? now }
                        }
                    }
                }
            }
        }
        func waitFor(_ identifiers: [ItemIdentifier], seconds: Double) async throws {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline, !seen.withLock({ seen in identifiers.allSatisfy { seen[$0] != nil } }) {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        // The first item waits for the watcher to start; it is not counted.
        guard let first = items.first else { return [] }
        try await index.indexItems([first])
        try await waitFor([first.uniqueIdentifier], seconds: 30)
        var written: [ItemIdentifier: UInt64] = [:]
        for item in items.dropFirst() {
            written[item.uniqueIdentifier] = DispatchTime.now().uptimeNanoseconds
            try await index.indexItems([item])
            try await Task.sleep(for: .milliseconds(50))
        }
        try await waitFor(Array(written.keys), seconds: 30)
        let arrivals = seen.withLock { $0 }
        return written.compactMap { identifier, time in arrivals[identifier].map { Double($0 - time) / 1e9 } }
    }

    static func loadMessages(_ path: String) throws -> [SearchableItem] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var items = try text.split(separator: "\n").map { try SearchableItem(json: JSON.parse(String($0))) }
        // Newest last within each thread, all within the last 20 hours, order kept.
        let now = Date()
        for position in items.indices {
            items[position].attributeSet.contentCreationDate = now.addingTimeInterval(
                -72_000 + Double(position) * 72_000 / Double(items.count))
            items[position].expirationDate = .distantFuture
        }
        return items
    }

    static func run(messages path: String, predictions: String?, sample: String?, replica: String? = nil) async throws {
        let items = try loadMessages(path)
        let directory = try Measure.scratchDirectory("enrichment")
        defer { Measure.removeDirectory(directory) }
        let store = try Store(directory: URL(fileURLWithPath: directory))
        try await store.signIn("bench")
        let asking = items.map { item -> SearchableItem in
            var item = item
            item.updateListenerOptions = [.summarization, .priority]
            return item
        }

        // 1. Throughput, the baseline first: the same messages indexed without asking for anything.
        let plain = try await store.index(named: "plain", account: "bench")
        let indexSeconds = try await Measure.seconds { try await plain.indexItems(items) }
        let enriched = try await store.index(named: "enriched", account: "bench")
        let askingSeconds = try await Measure.seconds { try await enriched.indexItems(asking) }
        var report = EnrichmentReport()
        let enrichSeconds = try await Measure.seconds { report = try await store.enrichPendingItems() }
        let plainRate = Double(items.count) / indexSeconds
        print("\(items.count) messages (\(Set(items.compactMap(\.domainIdentifier)).count) threads) from \(path)")
        print("| measure | items/s | vs plain indexing |\n|---|---|---|")
        print(String(format: "| plain indexing (baseline) | %.0f | 1.00× |", plainRate))
        print(
            String(
                format: "| indexing, asking for enrichment | %.0f | %.2f× |", Double(items.count) / askingSeconds,
                indexSeconds / askingSeconds))
        print(
            String(
                format: "| enrichment pass (summarizer + classifier) | %.0f | %.3f× |",
                Double(items.count) / enrichSeconds, indexSeconds / enrichSeconds))
        print(
            "enriched \(report.enriched), skipped \(report.skipped.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))"
        )
        // Each enricher alone: the same messages in a store of their own whose other enricher is off.
        for (label, summaries) in [("summarizer alone", true), ("classifier alone", false)] {
            var configuration = Store.Configuration()
            if summaries {
                configuration.enrichment.priorityClassifier = nil
            } else {
                configuration.enrichment.summarizer = nil
            }
            let alone = try Store(
                directory: URL(fileURLWithPath: directory + "/" + label.replacingOccurrences(of: " ", with: "-")),
                configuration: configuration)
            try await alone.signIn("bench")
            try await alone.index(named: "enriched", account: "bench").indexItems(asking)
            var done = EnrichmentReport()
            let seconds = try await Measure.seconds { done = try await alone.enrichPendingItems() }
            print(
                String(
                    format: "| enrichment pass, %@ (%d enriched) | %.0f | %.3f× |", label, done.enriched,
                    Double(items.count) / seconds, indexSeconds / seconds))
        }

        // 2. The delay from indexing to the notification, with a pass every 50 ms (what a watcher polling
        // at that rate gives; replica watch polls every 250 ms, which adds up to 250 ms to this; 2b times it).
        let notified = NotificationClock()
        let timed = try await store.index(named: "timed", account: "bench")
        try await timed.setDelegate(notified)
        let loop = Task {
            while !Task.isCancelled {
                _ = try? await store.enrichPendingItems(accounts: ["bench"])
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        var written: [ItemIdentifier: UInt64] = [:]
        let eligible = asking.filter { ($0.attributeSet.textContent ?? "").count >= 200 }.prefix(200)
        for item in eligible {
            written[item.uniqueIdentifier] = DispatchTime.now().uptimeNanoseconds
            try await timed.indexItems([item])
            try await Task.sleep(for: .milliseconds(20))
        }
        let deadline = Date().addingTimeInterval(30)
        while notified.count < eligible.count, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        loop.cancel()
        let delays = notified.times.compactMap { identifier, time in written[identifier].map { Double(time - $0) / 1e9 }
        }
        print(
            String(
                format: "notification delay over %d messages: p50 %.0f ms, p99 %.0f ms (a pass every 50 ms)",
                delays.count, Measure.median(delays) * 1000, Measure.percentile(delays, 99) * 1000))

        // 2b. The same through `replica watch --json` in its own process: from the app's indexItems
        // returning to the watcher's itemsUpdated line.
        if let replica {
            let delays = try await watcherDelays(
                replica: replica, directory: directory, items: Array(eligible.prefix(100)))
            print(
                String(
                    format:
                        "replica watch: itemsUpdated line after indexing, over %d messages: p50 %.0f ms, p99 %.0f ms",
                    delays.count, Measure.median(delays) * 1000, Measure.percentile(delays, 99) * 1000))
        }

        // 3. Predictions for evaluate_enrichment.py: the sample's entries as the pass left them.
        if let predictions, let sample {
            let wanted = try String(contentsOfFile: sample, encoding: .utf8).split(separator: "\n")
                .compactMap { try? JSON.parse(String($0))["uniqueIdentifier"]?.stringValue }
            let stored = try await enriched.fetchItems(withIdentifiers: wanted.map(ItemIdentifier.init(rawValue:)))
            let lines = stored.map { item in
                JSON.object(omittingNil: [
                    ("uniqueIdentifier", .string(item.item.uniqueIdentifier.rawValue)),
                    ("isPriority", item.item.attributeSet.isPriority.map(JSON.bool)),
                    ("summary", item.item.attributeSet.textContentSummary.map(JSON.string)),
                ]).serialized()
            }
            try (lines.joined(separator: "\n") + "\n").write(toFile: predictions, atomically: true, encoding: .utf8)
            print("wrote \(lines.count) predictions to \(predictions)")
        }

        // 4. Engagement in ranking: for queries of two words from titles, the fifth result is viewed 15
        // times within the hour; where does it land, and does it ever pass a result that scored more than
        // 0.05 above it?
        let words = Array(Set(items.compactMap { $0.attributeSet.title?.split(separator: " ").first.map(String.init) }))
            .sorted()
        var before: [Int] = []
        var after: [Int] = []
        var passedClearlyBetter = 0
        var measured = 0
        for word in words.prefix(300) {
            let query = SearchQuery(word + " fix", limit: 20)
            let results = try await plain.search(query)
            guard results.count >= 8 else { continue }
            let target = results[4]
            let clearlyBetter = Set(
                results.prefix(4).filter { $0.score - target.score > Engagement.weight }.map(\.item.uniqueIdentifier))
            let views = (0..<15).map { _ in
                UserActivity(
                    activityType: "bench.view", persistentIdentifier: "view:" + target.item.uniqueIdentifier.rawValue,
                    relatedUniqueIdentifier: target.item.uniqueIdentifier, date: Date().addingTimeInterval(-600))
            }
            for view in views { try await plain.donateUserActivities([view]) }
            let again = try await plain.search(query)
            guard let rank = again.firstIndex(where: { $0.item.uniqueIdentifier == target.item.uniqueIdentifier })
            else { continue }
            let above = Set(again.prefix(rank).map(\.item.uniqueIdentifier))
            passedClearlyBetter += clearlyBetter.subtracting(above).count
            before.append(5)
            after.append(rank + 1)
            measured += 1
            _ = try await plain.deleteAllSavedUserActivities()
            if measured == 100 { break }
        }
        let mean = { (values: [Int]) in Double(values.reduce(0, +)) / Double(max(values.count, 1)) }
        print(
            String(
                format: "engagement over %d queries: a fifth result viewed 15 times ranks %.2f on average (from 5); "
                    + "it passed a result scoring more than 0.05 above it %d times; it rose in %d queries",
                measured, mean(after), passedClearlyBetter, zip(before, after).filter { $1 < $0 }.count))
    }

    /// Records when each item's update notification came.
    final class NotificationClock: IndexDelegate, Sendable {
        private let state = Mutex<[ItemIdentifier: UInt64]>([:])
        var count: Int { state.withLock { $0.count } }
        var times: [ItemIdentifier: UInt64] { state.withLock { $0 } }
        func reindexAllItems(in index: SearchableIndex) async throws {}
        func reindexItems(withIdentifiers identifiers: [ItemIdentifier], in index: SearchableIndex) async throws {}
        func searchableItemsDidUpdate(_ updates: [ItemUpdate], in index: SearchableIndex) async {
            let now = DispatchTime.now().uptimeNanoseconds
            state.withLock { times in
                for update in updates where times[update.item.uniqueIdentifier] == nil {
                    times[update.item.uniqueIdentifier] = now
                }
            }
        }
    }
}
