import Foundation
import ReplicaCore
import ReplicaTestSupport
import Testing

/// The command line cannot misread what it is told: an option's value is never another option, and each
/// command accepts exactly the options its help lists.
@Suite struct OptionsTests {
    let directory: TemporaryDirectory
    var store: String { directory.path + "/store" }
    /// An empty file to import from.
    var empty: String { directory.path + "/empty.jsonl" }

    init() throws {
        directory = try TemporaryDirectory()
        try Fixtures.signIn(store: directory.path + "/store", "a")
        try Data().write(to: URL(fileURLWithPath: directory.path + "/empty.jsonl"))
    }

    @available(*, noasync, message: "it waits for a process")
    func replica(_ arguments: [String], input: String? = nil) throws -> ProcessResult {
        try ReplicaProcess.run(["--store", store] + arguments, input: input)
    }

    /// `--author --json foo` used to search for the author "--json"; `--client-state --json FILE` stored
    /// "--json" as the client state.
    @Test func anOptionIsNeverTakenAsAnotherOptionsValue() throws {
        let cases: [([String], String)] = [
            (["search", "--author", "--json", "foo"], "option --author needs a value, but '--json' follows it"),
            (["search", "--author", "--all", "foo", "bar"], "option --author needs a value, but '--all' follows it"),
            (
                ["import", "--account", "a", "--client-state", "--json", empty],
                "option --client-state needs a value, but '--json' follows it"
            ),
            (["delete", "--account", "a", "--id", "--all"], "option --id needs a value, but '--all' follows it"),
            (["search", "--limit"], "option --limit needs a value"),
            (["search", "--json=yes", "foo"], "option --json takes no value"),
            (["accounts", "sign-in", "--json", "b"], "option --json does not go with this action"),
            (
                ["sources", "add", "files", "--account", "a", "--branch", "main", directory.path],
                "option --branch does not go with this action"
            ),
        ]
        for (arguments, message) in cases {
            let result = try replica(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.standardError.contains(message), "\(arguments): \(result.standardError)")
            #expect(result.standardError.contains("--help"), "the usage hint follows")
            #expect(result.standardOutput.isEmpty)
        }
        let global = try ReplicaProcess.run(["--store", "--json", "status"])
        #expect(global.status == 2)
        #expect(
            global.standardError.contains("option --store needs a value, but '--json' follows it"),
            "\(global.standardError)")

        // Nothing was written in the account's name: no client state "--json".
        #expect(!(try replica(["status", "--json"]).standardOutput.contains(#""lastClientState":"--json""#)))

        // A value that starts with '-' is given with '=': here, an author "-x" that nothing matches.
        let imported = try replica(
            ["import", "--account", "a", "-"],
            input: #"{"uniqueIdentifier": "n1", "attributes": {"title": "harbor", "authorNames": ["-x dash"]}}"#)
        #expect(imported.status == 0, "\(imported.standardError)")
        let dashed = try replica(["search", "--json", "--author=-x", "harbor"])
        #expect(dashed.status == 0, "\(dashed.standardError)")
        #expect(dashed.standardOutput.contains(#""uniqueIdentifier":"n1""#))
        let state = try replica(["import", "--account", "a", "--client-state=--json", empty])
        #expect(state.status == 0, "\(state.standardError)")
        #expect(try replica(["status", "--json"]).standardOutput.contains(#""lastClientState":"--json""#))
    }

    /// One option as its help lists it.
    struct ListedOption: CustomStringConvertible {
        var name: String
        var placeholder: String?
        /// The action it goes with, as the help says in parentheses (`add git`), or `nil` for all.
        var action: String?
        var description: String { name + (placeholder.map { " " + $0 } ?? "") + (action.map { " (\($0))" } ?? "") }
    }

    /// The commands `replica --help` lists.
    @available(*, noasync, message: "it waits for a process")
    static func commands() throws -> [String] {
        let help = try ReplicaProcess.run(["--help"]).standardOutput
        let lines = help.components(separatedBy: "\n")
        guard let start = lines.firstIndex(of: "Commands:") else { return [] }
        return lines[(start + 1)...].prefix { !$0.isEmpty }.compactMap {
            $0.split(separator: " ").first.map(String.init)
        }
    }

    /// The options a command's help lists under "Options:", and every `--word` its help mentions anywhere.
    static func options(in help: String) -> (listed: [ListedOption], mentioned: Set<String>) {
        let lines = help.components(separatedBy: "\n")
        var listed: [ListedOption] = []
        if let start = lines.firstIndex(of: "Options:") {
            for line in lines[(start + 1)...].prefix(while: { !$0.isEmpty }) where line.hasPrefix("  --") {
                let words = line.dropFirst(2).split(separator: " ", omittingEmptySubsequences: false).map(String.init)
                var option = ListedOption(name: words[0])
                if words.count > 1, let first = words[1].first, first.isUppercase { option.placeholder = words[1] }
                if let open = line.range(of: "  ("),
                    let close = line.range(of: ") ", range: open.upperBound..<line.endIndex)
                {
                    option.action = String(line[open.upperBound..<close.lowerBound])
                }
                listed.append(option)
            }
        }
        var mentioned: Set<String> = []
        let scalars = Array(help.unicodeScalars)
        var index = 0
        while index + 2 < scalars.count {
            if scalars[index] == "-", scalars[index + 1] == "-",
                CharacterSet.lowercaseLetters.contains(scalars[index + 2]),
                index == 0 || !CharacterSet.alphanumerics.contains(scalars[index - 1]) && scalars[index - 1] != "-"
            {
                var end = index + 2
                while end < scalars.count, CharacterSet.lowercaseLetters.contains(scalars[end]) || scalars[end] == "-" {
                    end += 1
                }
                mentioned.insert(String(String.UnicodeScalarView(scalars[index..<end])))
                index = end
            } else {
                index += 1
            }
        }
        return (listed, mentioned)
    }

    /// A command line of `command` (and `action`) that gets past its option checks on this store.
    func base(_ command: String, action: String?) -> [String] {
        switch (command, action) {
        case ("import", _): return ["import", "--account", "a", empty]
        case ("search", _): return ["search", "harbor"]
        case ("suggest", _): return ["suggest", "harb"]
        case ("query", _): return ["query", #"title == "x""#]
        case ("get", _): return ["get", "--account", "a", "nothing"]
        case ("entities", _): return ["entities", "import", "--account", "a", empty]
        case ("activities", "delete"): return ["activities", "delete", "--account", "a", "--all"]
        case ("activities", _): return ["activities", "donate", "--account", "a", empty]
        case ("delete", _): return ["delete", "--account", "a", "--all"]
        case ("accounts", _): return ["accounts", "list"]
        case ("records", _): return ["records", "import", empty]
        case ("sources", "add git"):
            return ["sources", "add", "git", "--account", "a", directory.path + "/no-repository"]
        case ("sources", "add"): return ["sources", "add", "files", "--account", "a", directory.path + "/tree"]
        case ("sources", _): return ["sources", "list"]
        case ("tool", "call"): return ["tool", "call", #"{"query": "harbor"}"#]
        case ("tool", _): return ["tool", "schema"]
        // Long-running commands: an argument they do not take stops them once their options are read.
        case ("watch", _), ("mcp", _): return [command, "unexpected-argument"]
        default: return [command]
        }
    }

    func value(for placeholder: String) -> String {
        switch placeholder {
        case "N": return "5"
        case "DATE": return "2026-01-01"
        case "FILE": return directory.path + "/replies.jsonl"
        case "UTI": return "public.text"
        case "LEVEL": return "complete"
        case "FORMAT": return "compact"
        case "ATTR,…", "NAME,…": return "title"
        case "NAME,EMAIL,…": return "Ada,ada@example.com"
        case "ID", "ID…": return "a"
        default: return "x"
        }
    }

    static let optionErrors = ["unknown option", "does not go with this action", "needs a value", "takes no value"]

    /// Each command's options are one declaration that drives both its parsing and its help: every option
    /// its help lists is accepted (for the action the help names), every option any other command knows
    /// and its help does not list is refused, and its help mentions no option it does not list.
    @Test func everyCommandAcceptsExactlyTheOptionsItsHelpLists() async throws {
        let commands = try await Blocking.run { try Self.commands() }
        #expect(commands.count >= 18, "\(commands)")
        let global: Set<String> = ["--store", "--config", "--help", "--version"]
        var helps: [String: (listed: [ListedOption], mentioned: Set<String>)] = [:]
        for command in commands {
            let help = try await ReplicaProcess.running([command, "--help"])
            #expect(help.status == 0, "\(command)")
            helps[command] = Self.options(in: help.standardOutput)
        }
        let everyOption = Set(helps.values.flatMap { $0.listed.map(\.name) })
        #expect(everyOption.count >= 25, "\(everyOption)")
        for command in commands {
            let (listed, mentioned) = helps[command]!
            let names = Set(listed.map(\.name))
            #expect(
                mentioned.subtracting(names).subtracting(global).isEmpty,
                "\(command)'s help mentions options it does not list: \(mentioned.subtracting(names).subtracting(global).sorted())"
            )
            for option in listed {
                var arguments = base(command, action: option.action)
                if !arguments.contains(option.name) {
                    arguments.append(option.name)
                    if let placeholder = option.placeholder { arguments.append(value(for: placeholder)) }
                }
                let result = try await ReplicaProcess.running(["--store", store] + arguments)
                #expect(
                    !Self.optionErrors.contains { result.standardError.contains($0) },
                    "\(command) lists \(option) but refused it: \(arguments) → \(result.standardError)")
            }
            for name in everyOption.subtracting(names) {
                let result = try await ReplicaProcess.running(["--store", store] + base(command, action: nil) + [name])
                #expect(
                    result.status == 2 && result.standardError.contains("unknown option \(name)"),
                    "\(command) does not list \(name) but did not refuse it: \(result.standardError)")
            }
        }
    }

    /// Bytes that are not UTF-8 used to become U+FFFD, so `sign-out $'bad\xc0'` signed out `bad\xff`.
    @Test func anArgumentThatIsNotUTF8IsRefused() throws {
        try Fixtures.signIn(store: store, "bad\u{FFFD}")
        let script = #"exec "$0" --store "$1" accounts sign-out "$(printf 'bad\300')""#
        let result = try ReplicaProcess.run(
            executable: URL(fileURLWithPath: "/bin/sh"), ["-c", script, ReplicaProcess.executable.path, store])
        #expect(result.status == 2)
        #expect(result.standardError.contains("argument 5 is not valid UTF-8 text"), "\(result.standardError)")
        #expect(
            try replica(["accounts"]).standardOutput.contains("bad\u{FFFD}"), "the other account is still signed in")
    }
}
