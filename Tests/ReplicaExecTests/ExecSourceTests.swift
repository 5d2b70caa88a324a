import Foundation
import ReplicaSQLite
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaExec
@testable import ReplicaIndex

@Suite struct ExecSourceTests {
    let directory: TemporaryDirectory
    let store: Store
    let notes: URL

    static let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Plugins/Exec/examples/notes-plugin.py").path

    init() throws {
        directory = try TemporaryDirectory()
        store = try Store(directory: directory.appending("store"))
        for account: AccountID in ["alice"] { try store.signIn(account) }
        notes = directory.appending("notes")
        try FileManager.default.createDirectory(at: notes, withIntermediateDirectories: true)
    }

    func note(_ name: String, title: String, body: String) throws {
        let json = JSON.object([("title", .string(title)), ("body", .string(body)), ("tags", ["plugin"])])
        try json.serialized().write(to: notes.appendingPathComponent(name + ".json"), atomically: true, encoding: .utf8)
    }

    func source(
        _ command: [String], name: String = "", silenceSeconds: Int = 5, catchUpLimit: Duration = .seconds(600)
    ) throws -> (ExecSource, SourceContext) {
        let definition = try store.addSource(
            SourceDefinition(
                name: name, kind: .exec, account: "alice",
                settings: .object([
                    ("command", .array(command.map(JSON.string))), ("silenceSeconds", .number(Double(silenceSeconds))),
                ])))
        return (
            try ExecSource(definition, backoff: Backoff(initial: 0.05, maximum: 0.2), catchUpLimit: catchUpLimit),
            try SourceContext(definition: definition, store: store)
        )
    }

    func found(_ words: String) async throws -> [String] {
        try await store.search(SearchQuery(words)).map(\.item.uniqueIdentifier.rawValue).sorted()
    }

    /// Hydration that stops waiting (its timeout cancels it, in `mcp` and `watch`, which go on running) ends
    /// a plugin that says nothing, and what the plugin started, at once: not after `silenceSeconds`.
    @Test func aCancelledHydrationEndsASilentPluginAndWhatItStarted() async throws {
        let plugin = directory.path + "/plugin.py"
        try HostilePlugin.script(
            """
            sys.stdin.readline()
            started("hydrate")
            hang()
            """
        ).write(toFile: plugin, atomically: true, encoding: .utf8)
        let definition = try await store.addSource(
            SourceDefinition(
                name: "", kind: .exec, account: "alice",
                settings: .object([
                    ("command", .array(["python3", plugin, directory.path].map(JSON.string))), ("silenceSeconds", 300),
                ])))
        let source = try ExecSource(definition)
        let context = try await SourceContext(definition: definition, store: store)
        let asking = Task { try await source.answer(["exec-1:n1"], includingContent: true, context) }
        var pids: [pid_t]?
        #expect(
            await eventually {
                pids = HostilePlugin.processes("hydrate", in: directory.path)
                return pids != nil
            })
        defer { HostilePlugin.cleanUp(pids) }
        asking.cancel()
        #expect(
            await eventually { (pids ?? []).allSatisfy(processIsGone) },
            "the plugin and its grandchild outlived the cancelled hydration")
        #expect(try await asking.value.isEmpty)
    }

    @Test func theExamplePluginIsIndexedAndResumesFromItsCheckpoint() async throws {
        try note("launch", title: "Launch plan", body: "the supplier risk")
        try note("budget", title: "Budget", body: "numbers")
        let (source, context) = try source(["python3", Self.example, notes.path])
        try await source.sync(context)
        #expect(try await found("supplier") == ["exec-1:launch"])
        #expect(try await found("plugin") == ["exec-1:budget", "exec-1:launch"])
        let result = try #require(try await store.search(SearchQuery("supplier")).first)
        #expect(result.item.domainIdentifier == "account.alice.source.exec-1")
        #expect(result.origin.owner == .source("exec-1"))

        try FileManager.default.removeItem(at: notes.appendingPathComponent("budget.json"))
        try note("launch", title: "Launch plan", body: "a vendor delay")
        try await source.sync(context)
        #expect(try await found("numbers").isEmpty)
        #expect(try await found("supplier").isEmpty)
        #expect(try await found("vendor") == ["exec-1:launch"])

        let answers = try await source.answer(["exec-1:launch", "exec-1:budget"], includingContent: true, context)
        guard case .current(let item?, _)? = answers["exec-1:launch"] else {
            Issue.record("no current item for launch")
            return
        }
        #expect(item.attributeSet.textContent == "a vendor delay")
        guard case .gone? = answers["exec-1:budget"] else {
            Issue.record("budget should be gone")
            return
        }
    }

    /// How a watched plugin's catch-up ends: it says `idle`; it falls silent and is pinged; or it is
    /// still busy (never `idle`, a log line every tenth of a second) when the catch-up's limit passes.
    enum CatchUpEnd: String, CaseIterable, Sendable { case idle, silent, busy }

    /// A watched plugin's catch-up, up to its first `idle`, is written as a load, as `sync` writes it:
    /// FTS5's segments are left for the ranking lists' build to merge once, and the load ends (its
    /// vocabulary added up) once the plugin is caught up. One that never says `idle` ends its catch-up
    /// when its silence is first pinged, or, never silent, when the catch-up's limit passes.
    @Test(arguments: CatchUpEnd.allCases)
    func aWatchedPluginsCatchUpIsWrittenAsALoad(ending: CatchUpEnd) async throws {
        let script = directory.appending("catching-up.py")
        // Every line is written before the first flush: no silence falls inside the catch-up.
        try """
        import json, select, sys
        sys.stdin.readline()
        for n in range(40):
            item = {"uniqueIdentifier": f"note-{n}", "attributes": {"textContent": f"harbour inspection number{n}"}}
            sys.stdout.write(json.dumps({"type": "upsert", "item": item}) + "\\n")
            if n % 2 == 1: sys.stdout.write(json.dumps({"type": "commit", "checkpoint": str(n)}) + "\\n")
        if sys.argv[1] == "idle": sys.stdout.write(json.dumps({"type": "idle"}) + "\\n")
        sys.stdout.flush()
        while True:
            if sys.argv[1] == "busy" and not select.select([sys.stdin], [], [], 0.1)[0]:
                print(json.dumps({"type": "log", "level": "info", "message": "busy"}), flush=True)
                continue
            line = sys.stdin.readline()
            if not line: break
            message = json.loads(line)
            if message["type"] == "ping": print(json.dumps({"type": "pong", "id": message["id"]}), flush=True)
            if message["type"] == "stop": break
        """.write(to: script, atomically: true, encoding: .utf8)
        let (source, context) = try source(
            ["python3", script.path, ending.rawValue], silenceSeconds: ending == .silent ? 5 : 3600,
            catchUpLimit: ending == .busy ? .seconds(1) : .seconds(3600))
        let watching = Task { try await source.watch(context) }
        defer { watching.cancel() }
        #expect(try await eventually { try await store.search(SearchQuery("harbour", limit: 100)).count == 40 })
        let path = store.directory.path + "/accounts/alice/indexes/\(Store.defaultIndexName).sqlite"
        // Outside a load FTS5 merges a level once it holds 16 segments: 20 transactions would leave a few.
        // (A busy plugin's second's limit may pass before its commits are written.)
        if ending != .busy { #expect(try fullTextSegments(ofIndexFile: path) == 20) }
        #expect(await eventually { store.loadsEnded >= 1 })
        #expect(try Connection(path: path).scalarInt("SELECT count(*) FROM vocabulary_held_back") == 0)
        #expect(try await store.search(SearchQuery("inspektion", limit: 100)).count == 40)
    }

    /// A plugin that sends a committed batch, then half a batch, then crashes.
    static let crashing = """
        import json, os, sys
        def send(m): sys.stdout.write(json.dumps(m) + "\\n"); sys.stdout.flush()
        start = json.loads(sys.stdin.readline())
        marker = sys.argv[1]
        item = lambda key, text: {"uniqueIdentifier": key, "attributes": {"title": key, "textContent": text}}
        if not os.path.exists(marker):
            open(marker, "w").close()
            send({"type": "upsert", "item": item("one", "committed words")})
            send({"type": "commit", "checkpoint": "1"})
            send({"type": "upsert", "item": item("two", "halfwritten words")})
            sys.stderr.write("simulated failure\\n"); sys.stderr.flush()
            os._exit(3)
        assert start["checkpoint"] == "1", start
        send({"type": "upsert", "item": item("two", "second run words")})
        send({"type": "commit", "checkpoint": "2"})
        send({"type": "idle"})
        for line in sys.stdin:
            if json.loads(line)["type"] == "stop": break
        """

    @Test func aCrashingPluginLosesOnlyItsUncommittedBatchAndIsReported() async throws {
        let script = directory.appending("crashing.py")
        try Self.crashing.write(to: script, atomically: true, encoding: .utf8)
        let (source, context) = try source(["python3", script.path, directory.path + "/marker"])
        await #expect(
            performing: { try await source.sync(context) },
            throws: { error in
                (error as? ReplicaError)?.message.contains("exited with status 3") == true
            })
        #expect(try await found("committed") == ["exec-1:one"])
        #expect(try await found("halfwritten").isEmpty, "the half-written batch is not committed")
        let status = try #require(try await store.sourceStatuses().first)
        #expect(status.state == .failed)
        #expect(status.lastError?.contains("simulated failure") == true)
        // Started again, it resumes from its last committed checkpoint.
        try await source.sync(context)
        #expect(try await found("second") == ["exec-1:two"])
        #expect(try await context.checkpoint() == "2")
    }

    @Test func aWatchedPluginThatCrashesIsRestartedWithBackoff() async throws {
        let script = directory.appending("crashing.py")
        try Self.crashing.write(to: script, atomically: true, encoding: .utf8)
        let (source, context) = try source(["python3", script.path, directory.path + "/marker"])
        let watching = Task { try await source.watch(context) }
        #expect(try await eventually { try await !found("second").isEmpty })
        watching.cancel()
        _ = await watching.result
        #expect(try await found("second") == ["exec-1:two"], "restarted after the crash and caught up")
        #expect(try await found("halfwritten").isEmpty)
    }

    /// The garbage cases allow a minute of silence: a loaded machine once took more than a second to start
    /// Python and print (load average 7.5), and the silence was reported instead of the garbage.
    @Test(arguments: [
        ("print('not json at all', flush=True)", 60, "line 1 of its output is not a protocol message"),
        ("import json; print(json.dumps({'type': 'gossip'}), flush=True)", 60, "unknown message type 'gossip'"),
        ("import time; time.sleep(30)", 1, "said nothing for 1 s"),
    ])
    func garbageAndSilenceEndThePluginWithAClearReport(program: String, silenceSeconds: Int, message: String)
        async throws
    {
        let script = directory.appending("bad.py")
        try ("import sys\nsys.stdin.readline()\n" + program + "\n").write(to: script, atomically: true, encoding: .utf8)
        let definition = try await store.addSource(
            SourceDefinition(
                kind: .exec, account: "alice",
                settings: .object([
                    ("command", ["python3", .string(script.path)]),
                    ("silenceSeconds", .integer(Int64(silenceSeconds))),
                ])))
        let source = try ExecSource(definition)
        let context = try await SourceContext(definition: definition, store: store)
        await #expect(
            performing: { try await source.sync(context) },
            throws: { error in
                (error as? ReplicaError)?.message.contains(message) == true
            })
    }

    @Test func aMalformedItemIsSkippedAndTheRestOfTheBatchCommits() async throws {
        let script = directory.appending("partly.py")
        try """
        import json, sys
        sys.stdin.readline()
        def send(m): print(json.dumps(m), flush=True)
        send({"type": "upsert", "item": {"attributes": {"title": "no identifier"}}})
        send({"type": "upsert", "item": {"uniqueIdentifier": "ok", "attributes": {"title": "kept words"}}})
        send({"type": "commit", "checkpoint": "c"})
        send({"type": "idle"})
        sys.stdin.readline()
        """.write(to: script, atomically: true, encoding: .utf8)
        let (source, context) = try source(["python3", script.path])
        try await source.sync(context)
        #expect(try await found("kept") == ["exec-1:ok"])
        #expect(
            try await store.sourceStatuses().first?.lastError?.contains("line 1: the item has no uniqueIdentifier")
                == true)
    }

    /// A plugin that writes one upsert line with `size` bytes of text, in small pieces from its first
    /// moment (the line is never held whole), pausing after each MiB when `pausing`.
    static func longLine(size: Int, pausing: Bool = true) -> String {
        """
        import json, sys, time
        sys.stdin.readline()
        piece = "word " * 819
        sys.stdout.write('{"type": "upsert", "item": {"uniqueIdentifier": "long", "attributes": {"title": "long one", "textContent": "')
        written = 0
        while written < \(size):
            sys.stdout.write(piece); sys.stdout.flush()
            written += len(piece)
            if \(pausing ? "True" : "False") and written % (1 << 20) < len(piece): time.sleep(0.05)
        sys.stdout.write('"}}}\\n'); sys.stdout.flush()
        for message in [{"type": "commit", "checkpoint": "c"}, {"type": "idle"}]:
            print(json.dumps(message), flush=True)
        sys.stdin.readline()
        """
    }

    @Test func aTenMegabyteLineIsReadInTimeAndIndexed() async throws {
        let script = directory.appending("long.py")
        try Self.longLine(size: 10 << 20).write(to: script, atomically: true, encoding: .utf8)
        // Silence means no bytes at all: a long line still arriving is not silence, and reading it is linear.
        let (source, context) = try source(["python3", script.path])
        try await source.sync(context)
        #expect(try await found("long") == ["exec-1:long"])
    }

    @Test func aLineOverTheCapEndsThePluginWithTheReason() async throws {
        let script = directory.appending("huge.py")
        try Self.longLine(size: PluginProcess.maximumLineLength + (1 << 20), pausing: false).write(
            to: script, atomically: true, encoding: .utf8)
        // Not a test of silence: a loaded machine may hold the plugin back for seconds between its writes.
        let (source, context) = try source(["python3", script.path], silenceSeconds: 120)
        await #expect(
            performing: { try await source.sync(context) },
            throws: { error in
                (error as? ReplicaError)?.message.contains("line 1 of its output is longer than 64 MiB") == true
            })
        #expect(try await found("long").isEmpty)
    }
}
