import Foundation
import ReplicaSQLite
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaFileTree
@testable import ReplicaIndex

@Suite struct FileTreeSourceTests {
    let directory: TemporaryDirectory
    let store: Store
    let root: String

    init() throws {
        directory = try TemporaryDirectory()
        store = try Store(directory: directory.appending("store"))
        for account: AccountID in ["alice", "a"] { try store.signIn(account) }
        root = directory.path + "/tree"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    func write(_ path: String, _ text: String) throws {
        let url = URL(fileURLWithPath: root + "/" + path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: false, encoding: .utf8)
    }

    func makeSource(_ extra: [(String, JSON)] = []) throws -> (FileTreeSource, SourceContext) {
        let definition = try store.addSource(
            SourceDefinition(
                kind: .files, account: "alice",
                settings: .object([("root", .string(root))] + extra)))
        return (
            try FileTreeSource(definition, storeDirectory: store.directory),
            try SourceContext(definition: definition, store: store)
        )
    }

    func found(_ words: String) async throws -> [String] {
        try await store.search(SearchQuery(words)).map(\.item.uniqueIdentifier.rawValue).sorted()
    }

    /// Starts watching and waits until the first reconcile is done.
    func startWatching(_ source: FileTreeSource, _ context: SourceContext) async throws -> Task<Void, any Error> {
        let task = Task { try await source.watch(context) }
        let ready = try await eventually {
            let state = try await store.sourceStatuses().first?.state
            return state == .watching || state == .degraded
        }
        #expect(ready, "the watcher did not start")
        return task
    }

    // MARK: Sync

    @Test func syncIndexesTextAndRecordsWhatItSkipsWithTheReason() async throws {
        try write("notes.txt", "plain orchid words")
        try write(
            "docs/page.html",
            "<html><head><title>Harbor page</title><script>var hiddenscript = 1;</script></head><body><p>quartz &amp; meadow</p></body></html>"
        )
        try write("docs/readme.md", "# Markdown title\n\nlaunch plan")
        try write("code/main.swift", "let zebracode = 42")
        try write(
            "mail/letter.eml",
            "From: Ada Lovelace <ada@example.com>\nTo: bob@example.com\nSubject: Engine notes\nDate: Tue, 3 Nov 2026 10:00:00 +0100\n\nthe analytical engine\n"
        )
        try write(
            "mail/inbox.mbox",
            "From ada@example.com Mon Nov  2 10:00:00 2026\nSubject: First\n\nfirstmessage body\n\nFrom bob@example.com Mon Nov  2 11:00:00 2026\nSubject: Second\n\nsecondmessage body\n"
        )
        try Data([0x7F, 0x45, 0x4C, 0x46, 0, 0, 1, 2]).write(to: URL(fileURLWithPath: root + "/program.bin"))
        try write("big.txt", String(repeating: "toolarge ", count: 500))
        try FileManager.default.createSymbolicLink(
            atPath: root + "/alias.txt", withDestinationPath: root + "/notes.txt")
        try FileManager.default.createSymbolicLink(
            atPath: root + "/outside.txt", withDestinationPath: directory.path + "/secret.txt")
        try "outside words".write(toFile: directory.path + "/secret.txt", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: root + "/docs/loop", withDestinationPath: root + "/docs")

        let (source, context) = try makeSource([("maximumFileBytes", 1000)])
        try await source.sync(context)

        #expect(try await found("orchid") == ["files-1:alias.txt", "files-1:notes.txt"])
        #expect(try await found("quartz") == ["files-1:docs/page.html"])
        #expect(try await found("hiddenscript").isEmpty, "script content is never indexed")
        #expect(try await found("zebracode") == ["files-1:code/main.swift"])
        #expect(try await found("analytical") == ["files-1:mail/letter.eml"])
        #expect(try await found("secondmessage") == ["files-1:mail/inbox.mbox#2"])
        #expect(try await found("outside").isEmpty, "a link never leads outside the root")
        #expect(try await found("toolarge").isEmpty)

        let page = try #require(try await store.search(SearchQuery("quartz")).first)
        #expect(page.title == "Harbor page")
        #expect(page.item.attributeSet.contentType == .html)
        #expect(page.item.attributeSet.path == root + "/docs/page.html")
        let mail = try #require(try await store.search(SearchQuery("analytical")).first)
        #expect(mail.item.attributeSet.authors == [Person(displayName: "Ada Lovelace", handles: ["ada@example.com"])])
        #expect(
            try await store.search(
                {
                    var q = SearchQuery("engine")
                    q.authors = ["ada@example.com"]
                    return q
                }()
            ).count == 1)

        let skipped = try #require(try await store.sourceStatuses().first).skipped
        let reasons = skipped.map(\.reason)
        #expect(reasons.contains("binary content"))
        #expect(reasons.contains { $0.hasPrefix("larger than the") })
        #expect(reasons.contains("a symbolic link leading outside the root"))
        #expect(reasons.contains("a symbolic link to a folder (indexed where it lives)"))
    }

    /// A first pass commits files in chunks of at most 1,024 files or 16 MiB, every file once and in
    /// order; a file bigger than the budget is a chunk of its own.
    @Test func filesAreCommittedInChunksOfBoundedCountAndSize() {
        let megabyte: Int64 = 1 << 20
        let sizes: [Int64] =
            Array(repeating: 1_000, count: 2_500) + [40 * megabyte] + Array(repeating: 3 * megabyte, count: 12)
        let files = sizes.enumerated().map {
            FileInfo(path: "f\($0.offset)", size: $0.element, modified: 0, inode: UInt64($0.offset))
        }
        let chunks = FileTreeSource.chunks(files)
        #expect(chunks.flatMap { $0 } == files)
        #expect(chunks.map(\.count) == [1_024, 1_024, 452, 1, 5, 5, 2])
        for chunk in chunks where chunk.count > 1 {
            #expect(
                chunk.count <= FileTreeSource.chunkFiles
                    && chunk.reduce(0) { $0 + $1.size } <= FileTreeSource.chunkBytes)
        }
        #expect(FileTreeSource.chunks([]).isEmpty)
    }

    @Test func changesMadeWhileNothingWatchedAreFoundByTheNextPass() async throws {
        try write("keep.txt", "steady words")
        try write("edit.txt", "before words")
        try write("drop.txt", "doomed words")
        let (source, context) = try makeSource()
        try await source.sync(context)
        try write("edit.txt", "after words, longer now")
        try FileManager.default.removeItem(atPath: root + "/drop.txt")
        try write("new/added.txt", "fresh words")
        try await source.sync(context)
        #expect(try await found("steady") == ["files-1:keep.txt"])
        #expect(try await found("before").isEmpty)
        #expect(try await found("after") == ["files-1:edit.txt"])
        #expect(try await found("doomed").isEmpty)
        #expect(try await found("fresh") == ["files-1:new/added.txt"])
    }

    @Test func identifiersRestOnThePathNotTheInode() async throws {
        try write("a.txt", "first version")
        let (source, context) = try makeSource()
        try await source.sync(context)
        try FileManager.default.removeItem(atPath: root + "/a.txt")
        try write("a.txt", "second version")
        try await source.sync(context)
        #expect(try await found("version") == ["files-1:a.txt"])
        #expect(try await found("second") == ["files-1:a.txt"])
    }

    @Test func theStoreMayNotBeInsideAWatchedTree() throws {
        let inside = try Store(directory: URL(fileURLWithPath: root + "/.replica"))
        let definition = SourceDefinition(
            name: "x", kind: .files, account: "a", settings: .object([("root", .string(root))]))
        #expect(
            performing: { try FileTreeSource(definition, storeDirectory: inside.directory) },
            throws: { error in
                (error as? ReplicaError)?.message.contains("would watch its own writes") == true
            })
    }

    // MARK: Watch

    @Test func watchingFollowsCreatesEditsDeletesAndRenamesOfFilesAndFolders() async throws {
        try write("start.txt", "initial words")
        let outside = directory.path + "/elsewhere"
        try FileManager.default.createDirectory(atPath: outside + "/incoming", withIntermediateDirectories: true)
        try "arrivingfolder words".write(toFile: outside + "/incoming/inside.txt", atomically: true, encoding: .utf8)
        let (source, context) = try makeSource()
        let watching = try await startWatching(source, context)
        defer { watching.cancel() }

        try write("created.txt", "newborn words")
        #expect(try await eventually { try await found("newborn") == ["files-1:created.txt"] })
        try write("created.txt", "grownup words")
        #expect(
            try await eventually {
                let (new, old) = (try await found("grownup"), try await found("newborn"))
                return new == ["files-1:created.txt"] && old.isEmpty
            })
        try FileManager.default.moveItem(atPath: root + "/created.txt", toPath: root + "/renamed.txt")
        #expect(try await eventually { try await found("grownup") == ["files-1:renamed.txt"] })
        try FileManager.default.removeItem(atPath: root + "/renamed.txt")
        #expect(try await eventually { try await found("grownup").isEmpty })

        try FileManager.default.createDirectory(atPath: root + "/project/deep", withIntermediateDirectories: true)
        try write("project/deep/plan.md", "# Plan\n\nfolderplan words")
        #expect(try await eventually { try await found("folderplan") == ["files-1:project/deep/plan.md"] })
        try FileManager.default.moveItem(atPath: root + "/project", toPath: root + "/archive")
        #expect(try await eventually { try await found("folderplan") == ["files-1:archive/deep/plan.md"] })
        // Still watched under its new name.
        try write("archive/deep/later.txt", "afterrename words")
        #expect(try await eventually { try await found("afterrename") == ["files-1:archive/deep/later.txt"] })

        try FileManager.default.moveItem(atPath: root + "/archive", toPath: outside + "/archive")
        #expect(
            try await eventually {
                let (plan, later) = (try await found("folderplan"), try await found("afterrename"))
                return plan.isEmpty && later.isEmpty
            })
        try FileManager.default.moveItem(atPath: outside + "/incoming", toPath: root + "/incoming")
        #expect(try await eventually { try await found("arrivingfolder") == ["files-1:incoming/inside.txt"] })
        try write("incoming/second.txt", "watchedafterarrival words")
        #expect(try await eventually { try await found("watchedafterarrival") == ["files-1:incoming/second.txt"] })
        try FileManager.default.removeItem(atPath: root + "/incoming")
        #expect(try await eventually { try await found("arrivingfolder").isEmpty })
    }

    /// The first scan of a watched tree is its first index, written as `sync` writes one (a load): FTS5's
    /// segments are left for the ranking lists' build to merge once, not merged as each transaction
    /// writes one, and the vocabulary typos are corrected towards is added up before the source says
    /// it watches.
    @Test func theFirstScanOfAWatchedTreeIsWrittenAsALoad() async throws {
        for n in 0..<40 { try write("notes/note-\(n).txt", "harbour inspection number\(n)") }
        let (source, context) = try makeSource()
        source.commitInChunks(of: 2)
        let watching = try await startWatching(source, context)
        defer { watching.cancel() }
        let path = store.directory.path + "/accounts/alice/indexes/\(Store.defaultIndexName).sqlite"
        // Outside a load FTS5 merges a level of 16 segments at once: 20 transactions would leave a few.
        #expect(try fullTextSegments(ofIndexFile: path) == 20)
        #expect(try Connection(path: path).scalarInt("SELECT count(*) FROM vocabulary_held_back") == 0)
        let misspelled = try await store.search(SearchQuery("inspektion", limit: 100))
        #expect(misspelled.count == 40)
        // After the first scan, changes are written as any write is: the level of 20 is merged at the next one.
        try write("later.txt", "harbour pilots")
        #expect(try await eventually { try await found("pilots") == ["files-1:later.txt"] })
        #expect(try fullTextSegments(ofIndexFile: path) <= 2)
    }

    @Test func aFileWrittenInManyChunksIsIndexedOnce() async throws {
        let (source, context) = try makeSource()
        source.startCountingIndexing()
        let watching = try await startWatching(source, context)
        defer { watching.cancel() }
        let path = root + "/chunks.log"
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        for chunk in 0..<300 { try handle.write(contentsOf: Data("chunk \(chunk) burstword\n".utf8)) }
        try handle.close()
        #expect(try await eventually { try await found("burstword") == ["files-1:chunks.log"] })
        #expect(await eventually { source.timesIndexed("chunks.log") >= 1 })
        #expect(source.timesIndexed("chunks.log") == 1)
    }

    @Test func aQueueOverflowIsRecoveredByAReconcile() async throws {
        try write("a.txt", "alpha words")
        try write("b.txt", "beta words")
        let (source, context) = try makeSource()
        let watching = try await startWatching(source, context)
        defer { watching.cancel() }
        source.pauseEventReading()
        #expect(await eventually { source.isEventReadingPaused })
        try write("a.txt", "changedwhilelost words")
        try FileManager.default.removeItem(atPath: root + "/b.txt")
        try write("c.txt", "createdwhilelost words")
        source.simulateQueueOverflow()
        #expect(
            try await eventually {
                let (changed, deleted, created) = (
                    try await found("changedwhilelost"), try await found("beta"), try await found("createdwhilelost")
                )
                return changed == ["files-1:a.txt"] && deleted.isEmpty && created == ["files-1:c.txt"]
            })
    }

    @Test func theWatchLimitIsReportedAndUnwatchedFoldersAreScannedInstead() async throws {
        for folder in ["one", "two", "three"] { try write("\(folder)/file.txt", "\(folder) words") }
        let (source, context) = try makeSource([("watchLimit", 2), ("fallbackScanSeconds", 0.2)])
        let watching = try await startWatching(source, context)
        defer { watching.cancel() }
        let status = try #require(try await store.sourceStatuses().first)
        #expect(status.state == .degraded)
        #expect(status.detail?.contains("watch limit of 2 is reached") == true)
        #expect(status.detail?.contains("scanned every") == true)
        try write("three/file.txt", "scannedinstead words")
        try write("one/file.txt", "alsoscanned words")
        #expect(
            try await eventually {
                let (unwatched, watched) = (try await found("scannedinstead"), try await found("alsoscanned"))
                return unwatched == ["files-1:three/file.txt"] && watched == ["files-1:one/file.txt"]
            })
    }

    @Test func stoppingCommitsWhatIsInFlight() async throws {
        let (source, context) = try makeSource()
        let watching = try await startWatching(source, context)
        // A file still being written when the watcher stops is indexed before it returns.
        let handle = try FileHandle(
            forWritingTo: { () -> URL in
                _ = FileManager.default.createFile(atPath: root + "/open.log", contents: nil)
                return URL(fileURLWithPath: root + "/open.log")
            }())
        try handle.write(contentsOf: Data("inflight words".utf8))
        // The write was seen and waits (the file is still open, its quiet period is a second).
        #expect(await eventually { source.pendingChanges > 0 })
        #expect(source.timesIndexed("open.log") == 0)
        watching.cancel()
        try await watching.value
        try handle.close()
        let status = try await store.sourceStatuses().first
        // Seen failing once in about twenty full runs under load; what the source said then is kept.
        #expect(
            try await found("inflight") == ["files-1:open.log"],
            "indexed \(source.timesIndexed("open.log")) times; last error: \(status?.lastError ?? "none"); skipped: \(status?.skipped.map { "\($0.count) \($0.reason)" } ?? [])"
        )
        #expect(status?.state == .stopped)
    }

    /// Two writers of one index (`watch`, and a `sync` beside it) read a file being rewritten
    /// (truncated, then written) at different moments. The one that read it truncated commits last: its
    /// older reading (empty text, an older stamp) must not overwrite the newer one, which no later event
    /// would bring back while the watcher runs.
    @Test func anOlderReadingCommittedAfterANewerOneDoesNotReplaceIt() async throws {
        try write("notes.txt", "first draft words")
        let (source, context) = try makeSource()
        try await source.sync(context)
        let path = root + "/notes.txt"
        let items = source.items
        let scanner = source.scanner
        let now = context.now
        // The `sync` reads the file between the truncate and the write of a rewrite.
        #expect(truncate(path, 0) == 0)
        let early = try #require(FileTreeSource.reading(ofPath: "notes.txt", scanner: scanner, items: items, now: now))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.write(contentsOf: Data("second draft quokka words".utf8))
        try handle.close()
        // The watcher reads the rewritten file and commits first; the `sync` commits its reading after.
        let late = try #require(FileTreeSource.reading(ofPath: "notes.txt", scanner: scanner, items: items, now: now))
        #expect(early.stamp != late.stamp)
        try await source.commit([late], context)
        try await source.commit([early], context)

        #expect(try await found("quokka") == ["files-1:notes.txt"], "the file's text as it is now stays indexed")
        let entry = try await context.entries()["notes.txt"]
        #expect(entry?.stamp == late.stamp, "the entry keeps the stamp of the file as it is now")
    }

    // MARK: Hydration

    struct Resolver: SourceResolver {
        let store: Store
        func source(for definition: SourceDefinition) throws -> any Source {
            try FileTreeSource(definition, storeDirectory: store.directory)
        }
    }

    @Test func hydrationKeepsOnlyFilesStillThereUnderTheRootAndUnchanged() async throws {
        let body = "harbor " + String(repeating: "long text goes on. ", count: 40) + "and ends here"
        for name in ["kept", "deleted", "escaped", "edited"] { try write("\(name).txt", name + " " + body) }
        try "outside harbor words".write(toFile: directory.path + "/outside.txt", atomically: true, encoding: .utf8)
        let (source, context) = try makeSource()
        try await source.sync(context)
        try FileManager.default.removeItem(atPath: root + "/deleted.txt")
        // Swapped for a link out of the tree: the file is no longer under the root.
        try FileManager.default.removeItem(atPath: root + "/escaped.txt")
        try FileManager.default.createSymbolicLink(
            atPath: root + "/escaped.txt", withDestinationPath: directory.path + "/outside.txt")
        try write("edited.txt", "edited harbor, changed")

        // The default five seconds for an owner's answer is no test of it: in a full parallel run the
        // blocking threads this source answers on were once all busy for longer (the suite failed).
        let hydration = Hydration(sourceResolver: Resolver(store: store), timeout: .seconds(120))
        let found = try await store.search(SearchQuery("harbor"), hydration: hydration, includingContent: true)
        #expect(found.results.map(\.item.uniqueIdentifier.rawValue) == ["files-1:kept.txt"])
        #expect(
            found.results.first?.item.attributeSet.textContent == "kept " + body, "the full text comes from the file")
        let reasons = Dictionary(uniqueKeysWithValues: found.dropped.map { ($0.identifier.rawValue, $0.reason) })
        #expect(reasons["files-1:deleted.txt"] == "the file is no longer there")
        #expect(reasons["files-1:escaped.txt"]?.contains("outside") == true, "\(reasons)")
        #expect(reasons["files-1:edited.txt"] == "the index holds an older version")
        // Gone and escaped are removed from the index; edited waits for the next pass to be indexed anew.
        #expect(try await self.found("harbor") == ["files-1:edited.txt", "files-1:kept.txt"])
    }
}
