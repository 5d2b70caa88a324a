import Foundation
import ReplicaCore
import ReplicaTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The command line on a store kept in PostgreSQL (`--database URL`, `$REPLICA_DATABASE`): the README's
/// commands, in the same order, with the same meaning as on SQLite, and nothing of an account's content
/// written to `--store`.
@Suite(
    .enabled(
        if: PostgresTestServer.isEnabled, "PostgreSQL is not installed here or could not start (why: standard error)"))
struct PostgresCLITests {
    let directory: TemporaryDirectory
    let database: PostgresTestDatabase
    var store: String { directory.path + "/store" }

    init() throws {
        directory = try TemporaryDirectory()
        database = try PostgresTestServer.makeMigratedDatabase()
    }

    @discardableResult
    @available(*, noasync, message: "it waits for a process")
    func replica(_ arguments: String..., input: String? = nil, environment: [String: String] = [:]) throws
        -> ProcessResult
    {
        try ReplicaProcess.run(
            ["--store", store, "--database", database.url] + arguments, input: input, environment: environment)
    }

    func ids(_ output: String) throws -> [String] {
        try JSON.parse(output)["results"]?.arrayValue?.compactMap { $0["uniqueIdentifier"]?.stringValue } ?? []
    }

    static let items = [
        #"{"uniqueIdentifier": "n1", "domainIdentifier": "account.alice.notes", "expirationDate": "2099-01-01T00:00:00Z", "attributes": {"title": "Launch plan", "textContent": "The launch risk is the supplier.", "contentType": "public.plain-text"}}"#,
        #"{"uniqueIdentifier": "n2", "expirationDate": "2099-01-01T00:00:00Z", "attributes": {"title": "Budget", "textContent": "Numbers for the quarter.", "contentType": "public.plain-text"}}"#,
    ].joined(separator: "\n")

    @Test func theReadmesCommandsWorkOnADatabase() throws {
        #expect(try replica("accounts", "sign-in", "alice").status == 0)
        let imported = try replica("import", "--account", "alice", "-", input: Self.items)
        #expect(imported.status == 0, "\(imported.standardError)")
        #expect(
            imported.standardError.hasPrefix("replica: imported 2 items into account 'alice' in ")
                && imported.standardError.hasSuffix(" s\n"))

        let search = try replica("search", "--json", "launch", "risk")
        #expect(search.status == 0, "\(search.standardError)")
        #expect(try ids(search.standardOutput) == ["n1"])
        #expect(try replica("suggest", "laun").standardOutput.contains("launch"))
        let query = try replica("query", "--json", #"title == "Budget""#)
        let queried = try JSON.parse(query.standardOutput)["items"]?.arrayValue?.compactMap {
            $0["uniqueIdentifier"]?.stringValue
        }
        #expect(queried == ["n2"], "\(query.standardOutput) \(query.standardError)")
        let got = try replica("get", "--account", "alice", "--json", "n2")
        #expect(got.status == 0 && got.standardOutput.contains("Numbers for the quarter."), "\(got.standardError)")

        let records =
            #"{"account": "alice", "kind": "note", "id": "7", "version": 1, "fields": {"title": "Harbor map", "body": "tides"}}"#
        #expect(try replica("records", "import", "-", input: records).status == 0)
        #expect(try ids(replica("search", "--json", "harbor").standardOutput) == ["note:alice:7"])

        let status = try replica("status")
        #expect(status.standardOutput.contains("database: postgresql: "), "\(status.standardOutput)")
        #expect(!status.standardOutput.contains(database.parameters["password"] ?? "no password"))

        let tool = try replica("tool", "call", #"{"query": "supplier"}"#)
        #expect(tool.status == 0 && tool.standardOutput.contains("Launch plan"), "\(tool.standardError)")

        // Nothing of the account's content is in the local folder.
        #expect(directory.filesContaining("supplier").isEmpty)
        #expect(directory.filesContaining("Harbor").isEmpty)

        #expect(try replica("switch-account", "bob").status == 0)
        #expect(try ids(replica("search", "--json", "launch").standardOutput) == [])
        #expect(try replica("accounts").standardOutput.contains("bob"))
    }

    /// A search that holds the index's vectors starts a listener for their changes, which may still be
    /// signing in (SCRAM, through OpenSSL) when the command ends. OpenSSL's exit handler used to free its
    /// locks under it: about one such search in four ended with SIGSEGV after printing its results.
    @Test func searchesHoldingVectorsEndWithoutACrash() throws {
        _ = try #require(ModelCopy.installed, "the embedding model is not installed (scripts/setup-model.sh)")
        #expect(try replica("accounts", "sign-in", "alice").status == 0)
        let imported = try replica(
            "import", "--account", "alice", "-", input: Self.items, environment: ReplicaProcess.withModel)
        #expect(imported.status == 0, "\(imported.standardError)")
        for run in 0..<16 {
            let search = try replica("search", "launch", "risk", environment: ReplicaProcess.withModel)
            #expect(
                !search.wasSignaled && search.status == 0,
                "search \(run) ended with \(search.status): \(search.standardError.suffix(400))")
        }
    }

    @Test func sourcesSyncAndTheMCPServerWorkOnADatabase() throws {
        try FileManager.default.createDirectory(atPath: directory.path + "/tree", withIntermediateDirectories: true)
        try "the lighthouse keeper's log".write(
            toFile: directory.path + "/tree/log.txt", atomically: true, encoding: .utf8)
        #expect(try replica("accounts", "sign-in", "alice").status == 0)
        let added = try replica("sources", "add", "files", "--account", "alice", directory.path + "/tree")
        #expect(added.status == 0, "\(added.standardError)")
        #expect(try replica("sources", "list").standardOutput.contains("files-1"))
        let synced = try replica("sync")
        #expect(synced.status == 0, "\(synced.standardError)")
        #expect(try replica("search", "lighthouse").standardOutput.contains("log.txt"))

        let messages = [
            #"{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}"#,
            #"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#,
            #"{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "lighthouse keeper"}}}"#,
        ]
        let served = try replica("mcp", "--format", "compact", input: messages.joined(separator: "\n") + "\n")
        #expect(served.status == 0, "\(served.standardError)")
        let responses = try served.standardOutput.split(separator: "\n").map { try JSON.parse(String($0)) }
        #expect(responses.count == 2)
        #expect(responses.last?["result"]?.serialized().contains("log.txt") == true, "\(served.standardOutput)")
    }

    @Test func watchFollowsFilesAndRecordsOnADatabase() async throws {
        let tree = directory.path + "/tree"
        try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
        let arguments = ["--store", store, "--database", database.url]
        try await ReplicaProcess.running(arguments + ["accounts", "sign-in", "alice"])
        try await ReplicaProcess.running(arguments + ["sources", "add", "files", "--account", "alice", tree])
        let watcher = try RunningProcess(replica: arguments + ["watch"])
        func found(_ word: String, _ identifier: String) async throws -> Bool {
            try await ReplicaProcess.running(arguments + ["search", "--json", word]).standardOutput.contains(identifier)
        }
        #expect(
            try await eventually {
                try await ReplicaProcess.running(arguments + ["status"]).standardOutput.contains(
                    "files-1 (files, account alice): watching")
            })
        try "meadow quartz words".write(toFile: tree + "/new.txt", atomically: false, encoding: .utf8)
        #expect(try await eventually { try await found("meadow", "files-1:new.txt") })
        // Records written by another process are applied by the watcher, which learns of them from the database.
        try await ReplicaProcess.running(
            arguments + ["records", "import", "--no-embed", "-"],
            input:
                #"{"account": "alice", "kind": "note", "id": "1", "version": 1, "fields": {"title": "recorded words"}}"#
        )
        #expect(try await eventually { try await found("recorded", "note:alice:1") })
        watcher.signal(SIGTERM)
        #expect(await watcher.exit(within: 120) == 0, "the watcher did not exit cleanly: \(watcher.standardError)")
    }

    @Test func theDatabaseCanComeFromTheEnvironment() throws {
        let signIn = try ReplicaProcess.run(
            ["--store", store, "accounts", "sign-in", "carol"], environment: ["REPLICA_DATABASE": database.url])
        #expect(signIn.status == 0, "\(signIn.standardError)")
        // The same database through --database sees the account; the store's own files do not have it.
        #expect(try replica("accounts").standardOutput.contains("carol"))
        let local = try ReplicaProcess.run(["--store", store, "accounts"])
        #expect(!local.standardOutput.contains("carol"))
    }

    @Test func aDatabaseThatCannotBeReachedIsSaidInWordsWithoutThePassword() throws {
        let result = try ReplicaProcess.run([
            "--store", store, "--database", database.url(changing: ["password": "wrong-secret"]), "status",
        ])
        #expect(result.status == 1)
        #expect(
            result.standardError.contains("password") || result.standardError.contains("authentication"),
            "\(result.standardError)")
        #expect(!result.standardError.contains("wrong-secret"))
    }
}
