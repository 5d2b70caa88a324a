import Foundation
import Replica

/// `replica tool`: the search tool a language model is given, from the command line.
enum ToolCommand: Command {
    static let name = "tool"
    static let summary = "show the search tool's schema, or run one tool call"
    static let about = """
        'schema' prints the tool as a model is shown it: {"name", "description", "inputSchema"} on one
        line. 'call' runs one call with the JSON arguments a model would send, such as
        '{"query": "launch plan"}', and prints what the model would read. Each result is first checked
        with its owner (the record store, its source, a plugin): what is gone, unreadable or stale is
        left out and queued for removal.

        """
    static let replies = Option.string(
        "--replies", "FILE", only: ["call"],
        "also write the stream of replies to FILE, one JSON object a line:\n{\"queryToken\", \"stageToken\", \"label\", \"status\", \"content\"}"
    )
    static let options: [any OptionDeclaration] = ToolOptions.options + [replies]
    static let notes = """
        Arguments the model got wrong are answered with a sentence saying what to fix; 'call' prints it
        and exits with status 1.
        """

    enum Action: String, CaseIterable { case schema, call }
    static let toolArguments = Operand.one(
        "ARGUMENTS_JSON",
        missing: "give the arguments as one JSON object, such as '{\"query\": \"some words\"}'",
        tooMany: "give the arguments as one JSON object, such as '{\"query\": \"some words\"}'")
    static let synopses = [Synopsis("schema"), Synopsis("call", toolArguments)]

    static func run(_ arguments: inout Arguments, context: Context) async throws {
        let action: Action = try arguments.action(of: name)
        let options = try ToolOptions.read(&arguments)
        switch action {
        case .schema:
            try arguments.finish()
            let tool = try options.makeTool(store: try context.openStore(), context: context)
            Output.printJSON(tool.definitionJSON)
        case .call:
            let repliesPath = try arguments[Self.replies]
            let toolArguments = try arguments[operand: Self.toolArguments]
            let replies = try repliesPath.map(ReplyLog.init(path:))
            var tool: SearchTool? = try options.makeTool(store: try context.openStore(), context: context)
            let writer = replies.map { log in
                Task { [stream = tool!.replies] in
                    for await reply in stream { log.write(reply) }
                }
            }
            let result = await tool!.call(arguments: toolArguments)
            // The reply stream ends when its tool goes; then the log has every reply.
            tool = nil
            await writer?.value
            try replies?.close()
            Output.print(result.text)
            if result.isError { throw CLIError.quiet(status: 1) }
        }
    }
}

/// The `--replies` file: one JSON object a line.
final class ReplyLog: Sendable {
    private let handle: FileHandle
    let path: String

    init(path: String) throws {
        self.path = path
        guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]),
            let handle = FileHandle(forWritingAtPath: path)
        else {
            throw CLIError.failure("cannot write the replies to \(path)")
        }
        self.handle = handle
    }

    func write(_ reply: SearchReply) {
        handle.write(Data((reply.json.serialized() + "\n").utf8))
    }

    func close() throws {
        try handle.close()
    }
}
