import Foundation
import Replica
import ReplicaTestSupport
import Testing

/// `replica tool schema`, `replica tool call`, and `replica search` going through the same hydration.
@Suite struct ToolCLITests {
    let directory: TemporaryDirectory
    let place: CLIPlace
    var store: String { place.store }
    var tree: String { directory.path + "/tree" }

    init() throws {
        directory = try TemporaryDirectory()
        place = CLIPlace(directory: directory)
    }

    @discardableResult
    @available(*, noasync, message: "it waits for a process")
    func replica(_ arguments: String..., input: String? = nil) throws -> ProcessResult {
        try ReplicaProcess.run(place.arguments + arguments, input: input)
    }

    static let records = """
        {"account": "a", "kind": "note", "id": "1", "version": 1, "modified": "2026-11-20T10:00:00Z", "fields": {"title": "Launch plan", "body": "supplier risk"}}
        {"account": "a", "kind": "message", "id": "m1", "version": 1, "modified": "2026-11-21T10:00:00Z", "fields": {"title": "Launch party", "text": "launch party", "authors": "Ada Lovelace"}}
        {"account": "a", "kind": "message", "id": "m2", "version": 1, "modified": "2026-11-22T10:00:00Z", "fields": {"title": "Re: launch", "text": "launch is late", "authors": "Grace Hopper"}}
        """

    // MARK: Schema

    @Test(arguments: TestBackend.available)
    func theSchemaIsOneLineAndShrinksWithTheGuidance(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a", "alice")
        var sizes: [String: Int] = [:]
        for guidance in ["complete", "dynamic:textMatch,dates", "dynamic:textMatch", "focused:communications"] {
            let result = try replica("tool", "schema", "--guidance", guidance)
            #expect(result.status == 0, "\(result.standardError)")
            let lines = result.standardOutput.split(separator: "\n")
            #expect(lines.count == 1)
            let json = try JSON.parse(String(lines[0]))
            #expect(json.objectValue?.map(\.0) == ["name", "description", "inputSchema"])
            #expect(json["name"]?.stringValue == "search")
            sizes[guidance] = lines[0].utf8.count
        }
        #expect(sizes["focused:communications"]! < sizes["dynamic:textMatch"]!)
        #expect(sizes["dynamic:textMatch"]! < sizes["dynamic:textMatch,dates"]!)
        #expect(sizes["dynamic:textMatch,dates"]! < sizes["complete"]!)
        let whitelisted = try replica(
            "tool", "schema", "--guidance", "dynamic:numericMatch", "--attributes", "amount,title")
        #expect(whitelisted.standardOutput.contains(#""attribute":{"type":"string","enum":["amount","title"]}"#))
        let me = try replica("tool", "schema", "--me", "Ada Lovelace,ada@example.com,+44 20 7946 0000")
        #expect(
            me.standardOutput.contains(
                #"\"me\" in people fields is the user: Ada Lovelace, ada@example.com, +44 20 7946 0000."#))
    }

    @Test(arguments: [
        (
            ["--guidance", "focused:email"],
            "unknown content domain 'email'; the domains are items, documents, communications, calendar, visualMedia, audio"
        ),
        (
            ["--guidance", "dynamic:telepathy"],
            "unknown technique 'telepathy'; the techniques are textMatch, numericMatch, dates, people, contentType"
        ),
        (
            ["--guidance", "everything"],
            "--guidance is complete, focused:DOMAIN or dynamic:TECHNIQUE,…, not 'everything'"
        ),
        (["--format", "tiny"], "--format is structured or compact, not 'tiny'"),
    ])
    func badOptionsAreUsageErrors(options: [String], message: String) throws {
        let result = try ReplicaProcess.run(place.arguments + ["tool", "schema"] + options)
        #expect(result.status == 2)
        #expect(result.standardError.hasPrefix("replica: error: \(message)\n"))
        #expect(result.standardOutput.isEmpty)
    }

    // MARK: Calls

    @Test(arguments: TestBackend.available)
    func aCallPrintsWhatTheModelReadsAndLogsTheReplies(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a", "alice")
        try replica("records", "import", "-", input: Self.records)
        let log = directory.path + "/replies.jsonl"
        let result = try replica(
            "tool", "call", "--me", "Ada Lovelace,ada@example.com", "--replies", log,
            #"""
            {"queries": [{"query": "launch", "filters": {"authors": ["me"]}},
                         {"query": "launch", "stages": [{"stage": "group", "by": "contentType"}, {"stage": "count"}]}]}
            """#)
        #expect(result.status == 0, "\(result.standardError)")
        let json = try JSON.parse(result.standardOutput)
        let queries = json["queries"]?.arrayValue ?? []
        #expect(queries.first?["results"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["message:a:m1"])
        #expect(queries.last?["count"]?.intValue == 3)

        let replies = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map {
            try JSON.parse(String($0))
        }
        #expect(replies.count == 4)
        let tokens = replies.compactMap { $0["queryToken"]?.stringValue }
        #expect(Set(tokens).count == 2)
        let second = replies.filter { $0["queryToken"]?.stringValue == tokens.last }
        #expect(second.compactMap { $0["status"]?.stringValue } == ["partial", "partial", "complete"])
        #expect(second.compactMap { $0["content"]?["type"]?.stringValue } == ["items", "groupedItems", "count"])
        #expect(replies.first?["content"]?["items"]?.arrayValue?.first?["id"]?.stringValue == "message:a:m1")

        let compact = try replica("tool", "call", "--format", "compact", #"{"query": "supplier"}"#)
        let lines = compact.standardOutput.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.dropFirst().first == #""supplier" found 1"#)
        #expect(lines.last?.hasPrefix("1 note:a:1 records@1 i") == true)
        #expect(lines.last?.hasSuffix(#" m2026-11-20 "Launch plan" "[supplier] risk""#) == true)
    }

    @Test(arguments: TestBackend.available)
    func badArgumentsAreToldToTheModelAndLogged(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a", "alice")
        try replica("records", "import", "-", input: Self.records)
        let log = directory.path + "/replies.jsonl"
        let result = try replica("tool", "call", "--replies", log, #"{"query": "launch", "limit": 1000000}"#)
        #expect(result.status == 1)
        #expect(result.standardOutput == "The search was not run: 'limit' must be a whole number from 1 to 100.\n")
        #expect(result.standardError.isEmpty)
        let reply = try JSON.parse(try String(contentsOfFile: log, encoding: .utf8).trimmingCharacters(in: .newlines))
        #expect(reply["content"]?["message"]?.stringValue == "'limit' must be a whole number from 1 to 100")
        #expect(try replica("tool", "call").status == 2, "the arguments are required")
    }

    /// Issue 19, 4.8: over twenty titled items, `count title` said 0; `sum title` said 0 and
    /// `sum contentModificationDate` a date in 2482.
    @Test(arguments: TestBackend.available)
    func statisticsCountTitledItemsAndRefuseSumsTheyCannotMake(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a", "alice")
        let records = (1...20).map { number in
            #"{"account": "a", "kind": "note", "id": "\#(number)", "version": 1, "modified": "2026-11-20T10:00:00Z", "fields": {"title": "Gazette \#(number)", "body": "gazette"}}"#
        }.joined(separator: "\n")
        #expect(try replica("records", "import", "-", input: records).status == 0)
        func call(_ function: String, _ attribute: String) throws -> ProcessResult {
            try replica(
                "tool", "call",
                #"{"query": "gazette", "stages": [{"stage": "statistic", "function": "\#(function)", "attribute": "\#(attribute)"}]}"#
            )
        }
        let count = try call("count", "title")
        #expect(count.status == 0, "\(count.standardOutput)")
        #expect(
            count.standardOutput.contains(#""statistic":{"name":"count title","value":20}"#), "\(count.standardOutput)")
        for attribute in ["title", "contentModificationDate"] {
            let sum = try call("sum", attribute)
            #expect(sum.status == 1, "\(attribute): \(sum.standardOutput)")
            #expect(
                sum.standardOutput.hasPrefix(
                    "The search was not run: stage 1: 'sum' cannot use '\(attribute)', which holds "),
                "\(sum.standardOutput)")
            #expect(sum.standardOutput.contains("sum takes numbers"), "says which attributes can be summed")
            #expect(!sum.standardOutput.contains(#""value""#), "no sum is given")
        }
        let latest = try call("max", "contentModificationDate")
        #expect(latest.standardOutput.contains(#""value":"2026-11-20T10:00:00Z""#), "\(latest.standardOutput)")
    }

    // MARK: Hydration of files

    func writeTree() throws {
        try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
        for name in ["kept", "deleted", "locked", "edited"] {
            try "\(name) harbor notes".write(toFile: "\(tree)/\(name).txt", atomically: true, encoding: .utf8)
        }
        #expect(try replica("sources", "add", "files", "--account", "alice", tree).status == 0)
        #expect(try replica("sync").status == 0)
    }

    /// Runs `replica` as a process that cannot read what its file modes forbid, even as root.
    @available(*, noasync, message: "it waits for a process")
    func replicaWithoutOverride(_ arguments: String...) throws -> ProcessResult {
        try ReplicaProcess.runWithoutOverride(place.arguments + arguments)
    }

    // On SQLite only: the test runs replica without root's override of file modes, and the test server's
    // socket is in a folder only its OS user (and root with that override) may open.
    @Test func filesThatAreGoneUnreadableOrChangedAreNeverShown() throws {
        try place.use(.sqlite, signingIn: "a", "alice")
        try writeTree()
        try FileManager.default.removeItem(atPath: tree + "/deleted.txt")
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: tree + "/locked.txt")
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: tree + "/locked.txt") }
        try "edited harbor notes, now longer".write(toFile: tree + "/edited.txt", atomically: true, encoding: .utf8)

        let result = try replicaWithoutOverride("tool", "call", #"{"query": "harbor"}"#)
        #expect(result.status == 0, "\(result.standardError)")
        let json = try JSON.parse(result.standardOutput)
        #expect(
            json["queries"]?.arrayValue?.first?["results"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [
                "files-1:kept.txt"
            ])
        #expect(json["queries"]?.arrayValue?.first?["found"]?.intValue == 1)
        #expect(!result.standardOutput.contains("withheld"), "the model is not told that unreadable items exist")
        #expect(
            result.standardError.contains("left out 3 result(s) of account 'alice'"),
            "the host's log is: \(result.standardError)")
        for name in ["deleted", "locked", "edited"] {
            #expect(!result.standardOutput.contains(name))
        }
        // Gone and unreadable files were removed from the index; the edited one waits for the next pass.
        let indexed = try replica("search", "--json", "--limit", "10", "harbor")
        #expect(indexed.standardOutput.contains("files-1:kept.txt"))
        #expect(
            !indexed.standardOutput.contains("files-1:deleted.txt")
                && !indexed.standardOutput.contains("files-1:locked.txt"))
        #expect(
            !indexed.standardOutput.contains("files-1:edited.txt"), "replica search shows only what a model could see")
        #expect(
            indexed.standardError
                == "replica: 1 match was left out: gone, no longer readable, changed since indexed, or their owner did not answer\n"
        )
        #expect(try replica("sync").status == 0)
        #expect(try replica("search", "--json", "longer").standardOutput.contains("files-1:edited.txt"))
    }
}
