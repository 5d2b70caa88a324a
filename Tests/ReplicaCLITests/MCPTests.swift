import Foundation
import Replica
import ReplicaTestSupport
import Testing

/// `replica mcp`: the search tool over the Model Context Protocol, checked with the official client and
/// with malformed messages no client would send, on both backends.
@Suite struct MCPTests {
    let place: CLIPlace

    init() throws {
        place = CLIPlace(directory: try TemporaryDirectory())
    }

    /// The store on `backend`, with account `a`'s two messages from the record store.
    @available(*, noasync, message: "it waits for a process")
    func start(on backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        let records = """
            {"account": "a", "kind": "message", "id": "m1", "version": 1, "fields": {"title": "Launch party", "text": "launch party", "authors": "Ada Lovelace"}}
            {"account": "a", "kind": "message", "id": "m2", "version": 1, "fields": {"title": "Re: launch", "text": "launch is late", "authors": "Grace Hopper"}}
            """
        #expect(try ReplicaProcess.run(place.arguments + ["records", "import", "-"], input: records).status == 0)
    }

    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// The Python with the official MCP client: `REPLICA_MCP_PYTHON`, else the one
    /// `scripts/setup-mcp-client.sh` installs.
    static var python: URL {
        if let path = ProcessInfo.processInfo.environment["REPLICA_MCP_PYTHON"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        return packageRoot.appendingPathComponent(".tools/mcp-venv/bin/python3")
    }

    @Test(arguments: TestBackend.available)
    func theOfficialPythonClientConnectsListsAndCalls(_ backend: TestBackend) throws {
        // This test must run: without the client it fails, saying how to install it.
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.python.path),
            "the official MCP client is not installed at \(Self.python.path): run scripts/setup-mcp-client.sh")
        try start(on: backend)
        let script = Self.packageRoot.appendingPathComponent("Tests/MCPClient/drive_replica_mcp.py").path
        let result = try ReplicaProcess.run(
            executable: Self.python, [script, ReplicaProcess.executable.path] + place.arguments, timeout: 120)
        try #require(result.status == 0, "the client failed: \(result.standardError)")
        let seen = try JSON.parse(result.standardOutput)
        #expect(seen["server"]?.stringValue == "replica")
        #expect(seen["protocolVersion"]?.stringValue == "2025-11-25")
        let tools = seen["tools"]?.arrayValue ?? []
        #expect(tools.compactMap { $0["name"]?.stringValue } == ["search"])
        #expect(
            tools.first?["properties"]?.arrayValue?.compactMap(\.stringValue) == [
                "allWords", "filters", "label", "limit", "queries", "query", "stages",
            ])
        #expect(tools.first?["description"]?.stringValue?.contains("Ada Lovelace") == true)

        #expect(seen["found"]?["isError"]?.boolValue == false)
        let found = try JSON.parse(seen["found"]?["text"]?.stringValue ?? "")
        #expect(
            found["queries"]?.arrayValue?.first?["results"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [
                "message:a:m1"
            ])
        #expect(seen["refused"]?["isError"]?.boolValue == true)
        #expect(
            seen["refused"]?["text"]?.stringValue
                == "The search was not run: stage 2 (sort) cannot follow stage 1 (count), which makes count; sort takes items or scoredItems."
        )
        #expect(seen["unknownTool"]?.intValue == -32602)
    }

    @Test(arguments: TestBackend.available)
    func malformedMessagesGetJSONRPCErrorsAndTheServerGoesOn(_ backend: TestBackend) throws {
        try start(on: backend)
        let messages = [
            #"{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}"#,
            #"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#,
            #"{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "argu"#,
            #"[{"jsonrpc": "2.0", "id": 3, "method": "ping"}]"#,
            #"{"jsonrpc": "1.0", "id": 4, "method": "ping"}"#,
            #"{"jsonrpc": "2.0", "id": {"no": 1}, "method": "ping"}"#,
            #"{"jsonrpc": "2.0", "id": 5, "method": "resources/list"}"#,
            #"{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "delete_everything"}}"#,
            #"{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": ["search"]}"#,
            #"{"jsonrpc": "2.0", "id": "eight", "method": "tools/call", "params": {"name": "search", "arguments": {"query": "party"}}}"#,
            #"{"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {"protocolVersion": "1999-01-01"}}"#,
        ]
        let result = try ReplicaProcess.run(
            place.arguments + ["mcp", "--format", "compact"], input: messages.joined(separator: "\n") + "\n")
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError == "replica: mcp: serving the tool 'search' on standard input and output\n")
        let responses = try result.standardOutput.split(separator: "\n").map { try JSON.parse(String($0)) }
        #expect(responses.count == 10, "one response a request; none for the notification")
        func error(_ index: Int) -> (JSON?, Int?) {
            (responses[index]["id"], responses[index]["error"]?["code"]?.intValue)
        }
        #expect(
            responses[0]["result"]?["protocolVersion"]?.stringValue == "2024-11-05",
            "the client's revision, when spoken here")
        #expect(error(1) == (.null, -32700))
        #expect(error(2) == (.null, -32600))
        #expect(error(3) == (4, -32600))
        #expect(error(4) == (.null, -32600))
        #expect(error(5) == (5, -32601))
        #expect(error(6) == (6, -32602))
        #expect(error(7) == (7, -32602))
        #expect(responses[8]["id"]?.stringValue == "eight")
        #expect(responses[8]["result"]?["isError"]?.boolValue == false)
        #expect(
            responses[8]["result"]?["content"]?.arrayValue?.first?["text"]?.stringValue?.contains(
                "1 message:a:m1 records@1") == true)
        #expect(responses[9]["result"]?["protocolVersion"]?.stringValue == "2025-11-25", "else the newest")
    }

    /// A line that is not UTF-8, a message over 1 MiB (a 10 MB query: its error names its id, read from
    /// its first bytes) and a query over 64 KiB each get their error at once, in order, and the lines after them are served: no bad byte is repaired into
    /// a message the client did not send, and no long word stalls the server.
    @Test(arguments: TestBackend.available)
    func badBytesAndOversizedRequestsAreAnsweredAtOnce(_ backend: TestBackend) throws {
        try start(on: backend)
        func call(_ id: Int, _ query: String) -> String {
            #"{"jsonrpc": "2.0", "id": \#(id), "method": "tools/call", "params": {"name": "search", "arguments": {"query": "\#(query)"}}}"#
        }
        var input = Data((#"{"jsonrpc": "2.0", "id": 1, "method": "ping"}"# + "\n").utf8)
        input.append(
            Data(
                #"{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "pa"#
                    .utf8))
        input.append(contentsOf: [0xFF, 0xFE])
        input.append(Data((#"rty"}}}"# + "\n").utf8))
        input.append(Data((call(3, String(repeating: "x", count: 10_000_000)) + "\n").utf8))
        // The TypeScript SDK writes the id after the parameters: its error still names it.
        input.append(
            Data(
                (#"{"method": "tools/call", "params": {"name": "search", "arguments": {"query": ""#
                    + String(repeating: "y", count: 2_000_000) + #""}}, "jsonrpc": "2.0", "id": "late-id"}"# + "\n")
                    .utf8))
        input.append(Data((call(4, String(repeating: "x", count: 100_000)) + "\n").utf8))
        input.append(Data((call(5, "party") + "\n").utf8))
        let result = try ReplicaProcess.run(
            executable: ReplicaProcess.executable, place.arguments + ["mcp", "--format", "compact"], input: input,
            environment: ["REPLICA_MODEL_DIR": "off"], timeout: 60)
        #expect(result.status == 0, "\(result.standardError)")
        let responses = try result.standardOutput.split(separator: "\n").map { try JSON.parse(String($0)) }
        try #require(responses.count == 6, "\(result.standardOutput.prefix(2_000))")
        #expect(responses[0]["id"]?.intValue == 1 && responses[0]["result"] != nil)
        #expect(
            responses[1]["id"] == .null && responses[1]["error"]?["code"]?.intValue == -32700
                && responses[1]["error"]?["message"]?.stringValue?.contains("UTF-8") == true, "\(responses[1])")
        #expect(
            responses[2]["id"]?.intValue == 3 && responses[2]["error"]?["code"]?.intValue == -32600
                && responses[2]["error"]?["message"]?.stringValue?.contains("1 MiB") == true, "\(responses[2])")
        #expect(
            responses[3]["id"]?.stringValue == "late-id" && responses[3]["error"]?["code"]?.intValue == -32600,
            "\(responses[3])")
        #expect(
            responses[4]["id"]?.intValue == 4 && responses[4]["result"]?["isError"]?.boolValue == true
                && responses[4]["result"]?["content"]?.arrayValue?.first?["text"]?.stringValue?.contains("64 KiB")
                    == true,
            "\(responses[4])")
        #expect(
            responses[5]["id"]?.intValue == 5
                && responses[5]["result"]?["content"]?.arrayValue?.first?["text"]?.stringValue?.contains("message:a:m1")
                    == true
        )
    }
}
