import Foundation
import ReplicaTestSupport
import Testing

@testable import ReplicaCore

#if canImport(Glibc)
import Glibc
#endif

/// A plugin and everything it started end with the command that started it, however that command ends:
/// a search whose hydration timed out, `sync` stopped by SIGTERM, `import` killed with SIGKILL while an
/// enricher hangs, `import` ending while its enricher ignores `stop`. Each plugin here ignores SIGTERM and
/// its standard input and leaves a grandchild (``HostilePlugin``); both must be gone, not orphaned.
@Suite struct ChildProcessCLITests {
    let directory: TemporaryDirectory
    var store: String { directory.path + "/store" }
    var plugin: String { directory.path + "/plugin.py" }

    init() throws {
        directory = try TemporaryDirectory()
        try Fixtures.signIn(store: directory.path + "/store", "a")
    }

    @discardableResult
    func replica(_ arguments: String...) async throws -> ProcessResult {
        try await ReplicaProcess.running(["--store", store] + arguments)
    }

    /// The plugin's process and its grandchild, once it started them.
    func processes(_ name: String) async -> [pid_t]? {
        var found: [pid_t]?
        _ = await eventually {
            found = HostilePlugin.processes(name, in: directory.path)
            return found != nil
        }
        return found
    }

    func expectGone(_ pids: [pid_t]?, _ comment: Comment) async throws {
        defer { HostilePlugin.cleanUp(pids) }
        let pids = try #require(pids, "the plugin never started")
        #expect(await eventually(timeout: 120) { pids.allSatisfy(processIsGone) }, comment)
    }

    /// An enrichment program in the configuration file, with a 30 s timeout.
    func configureEnricher(_ body: String) throws {
        try HostilePlugin.script(body).write(toFile: plugin, atomically: true, encoding: .utf8)
        try
            #"{"enrichment": {"summarizer": ["python3", "\#(plugin)", "\#(directory.path)"], "priority": "off", "timeout": "30s"}}"#
            .write(toFile: store + "/config.json", atomically: true, encoding: .utf8)
        let text = String(repeating: "The launch moves to Friday because the supplier is late. ", count: 5)
        try
            #"{"uniqueIdentifier": "m1", "domainIdentifier": "thread.m1", "updateListenerOptions": ["summarization"], "attributes": {"contentType": "public.email-message", "title": "Launch", "textContent": "\#(text)", "contentCreationDate": "\#(ISO8601.string(from: Date()))", "authorNames": ["Bob"]}}"#
            .write(toFile: directory.path + "/mail.jsonl", atomically: true, encoding: .utf8)
    }

    @Test func aPluginSilentInHydrationEndsWithTheSearch() async throws {
        try HostilePlugin.script(
            """
            start = json.loads(sys.stdin.readline())
            if start["mode"] == "sync":
                send({"type": "upsert", "item": {"uniqueIdentifier": "n1", "attributes": {"title": "lagoon heron"}}, "version": "1"})
                send({"type": "commit", "checkpoint": "1"})
                send({"type": "idle"})
                sys.exit(0)
            started("hydrate")
            hang()
            """
        ).write(toFile: plugin, atomically: true, encoding: .utf8)
        try await replica("sources", "add", "exec", "--account", "a", "--", "python3", plugin, directory.path)
        #expect(try await replica("sync").status == 0)
        let search = try await replica("search", "--json", "heron")
        #expect(search.standardOutput == "{\"results\":[]}\n", "the hydration timed out")
        try await expectGone(
            HostilePlugin.processes("hydrate", in: directory.path), "the plugin outlived the search's hydration timeout"
        )
    }

    @Test func aSilentPluginEndsWithSyncStoppedBySIGTERM() async throws {
        try HostilePlugin.script(
            """
            sys.stdin.readline()
            started("sync")
            hang()
            """
        ).write(toFile: plugin, atomically: true, encoding: .utf8)
        try await replica("sources", "add", "exec", "--account", "a", "--", "python3", plugin, directory.path)
        let sync = try RunningProcess(replica: ["--store", store, "sync"], environment: ["REPLICA_MODEL_DIR": "off"])
        let pids = await processes("sync")
        sync.signal(SIGTERM)
        #expect(await sync.exit(within: 60) != nil)
        try await expectGone(pids, "the plugin outlived sync stopped by SIGTERM")
    }

    @Test func aHungEnricherEndsWithImportKilledBySIGKILL() async throws {
        try configureEnricher(
            """
            sys.stdin.readline()
            started("enrich")
            hang()
            """)
        let importing = try RunningProcess(
            replica: ["--store", store, "import", "--account", "a", directory.path + "/mail.jsonl"],
            environment: ["REPLICA_MODEL_DIR": "off"])
        let pids = await processes("enrich")
        importing.signal(SIGKILL)
        #expect(await importing.exit(within: 60) != nil)
        try await expectGone(pids, "the enricher outlived import killed by SIGKILL")
    }

    @Test func anEnricherThatIgnoresStopEndsWithImport() async throws {
        try configureEnricher(
            """
            sys.stdin.readline()
            started("enrich")
            for line in sys.stdin:
                request = json.loads(line)
                if request["type"] == "summarize":
                    send({"type": "summarized", "request": request["request"], "summary": "a summary"})
                # stop is ignored, and so is the end of standard input
            hang()
            """)
        let imported = try await replica("import", "--account", "a", directory.path + "/mail.jsonl")
        #expect(imported.status == 0, "\(imported.standardError)")
        try await expectGone(HostilePlugin.processes("enrich", in: directory.path), "the enricher outlived import")
    }
}
