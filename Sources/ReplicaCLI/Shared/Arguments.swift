/// A command line taken apart against the command's declared options (``Option``).
///
/// Accepts `--name value`, `--name=value`, repeated options where declared, `--id a b c` for list
/// options, and `--` to end options. Refused with a usage error, before the command does anything: an
/// option the command does not declare; a flag given a value; an option that needs a value followed by
/// another option or by nothing (`--author --json`: a value that starts with `-` is written
/// `--author=-x`); and, when the command reads its positionals, an option it was given but did not use
/// for the action asked (`accounts sign-in --json`).
struct Arguments {
    private struct Given {
        var option: Option
        var value: String?
        var used = false
    }

    private let declared: [Option]
    private var given: [Given] = []
    private var positional: [String] = []

    /// Parses `arguments` against `options`.
    ///
    /// - Throws: a usage error naming the option at fault.
    init(_ arguments: [String], options: [Option]) throws {
        declared = options
        var index = arguments.startIndex
        var literal = false
        while index < arguments.endIndex {
            let token = arguments[index]
            index += 1
            if literal || !Self.looksLikeOption(token) {
                positional.append(token)
                continue
            }
            if token == "--" {
                literal = true
                continue
            }
            let (name, inline) = Self.split(token)
            guard let option = options.first(where: { $0.name == name }) else {
                throw CLIError.usage("unknown option \(name)")
            }
            guard option.takesValue else {
                guard inline == nil else { throw CLIError.usage("option \(name) takes no value") }
                given.append(Given(option: option))
                continue
            }
            if let inline {
                given.append(Given(option: option, value: inline))
                continue
            }
            guard index < arguments.endIndex else { throw CLIError.usage("option \(name) needs a value") }
            let value = arguments[index]
            guard !Self.looksLikeOption(value) else {
                throw CLIError.usage("option \(name) needs a value, but '\(value)' follows it; for a value that starts with '-', "
                    + "write \(name)=\(value)")
            }
            index += 1
            given.append(Given(option: option, value: value))
            if option.arity == .list {
                while index < arguments.endIndex, !Self.looksLikeOption(arguments[index]) {
                    given.append(Given(option: option, value: arguments[index]))
                    index += 1
                }
            }
        }
    }

    /// Whether `arguments` ask for help (`--help` or `-h` before any `--`).
    static func asksForHelp(_ arguments: [String]) -> Bool {
        arguments.prefix { $0 != "--" }.contains { $0 == "--help" || $0 == "-h" }
    }

    /// Whether a flag was given.
    mutating func flag(_ name: String) -> Bool {
        !take(name, arity: [.flag]).isEmpty
    }

    /// Every value of an option, in order.
    mutating func values(_ name: String) throws -> [String] {
        take(name, arity: [.repeatable, .list]).compactMap(\.value)
    }

    /// The value of an option that may be given once.
    mutating func value(_ name: String) throws -> String? {
        let all = take(name, arity: [.single]).compactMap(\.value)
        guard all.count <= 1 else { throw CLIError.usage("option \(name) was given \(all.count) times; give it once") }
        return all.first
    }

    /// The value of an option that is a whole number in `range`.
    mutating func integer(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = try value(name) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw CLIError.usage("option \(name) needs a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return number
    }

    /// The first positional argument, removed; or `nil`.
    mutating func next() -> String? {
        positional.isEmpty ? nil : positional.removeFirst()
    }

    /// Every remaining positional argument, once every option given was used by the command.
    ///
    /// - Throws: a usage error naming an option the command did not use for what was asked.
    mutating func positionals() throws -> [String] {
        if let unused = given.first(where: { !$0.used }) {
            throw CLIError.usage("option \(unused.option.name) does not go with this action")
        }
        defer { positional = [] }
        return positional
    }

    /// Fails when anything is left over.
    mutating func finish() throws {
        let rest = try positionals()
        if let first = rest.first { throw CLIError.usage("unexpected argument '\(first)'") }
    }

    /// Marks the occurrences of `name` used and returns them. Asking for an option the command did not
    /// declare with that arity is a mistake in replica, not in the command line.
    private mutating func take(_ name: String, arity: [Option.Arity]) -> [Given] {
        precondition(declared.contains { $0.name == name && arity.contains($0.arity) }, "option \(name) is read but not declared so")
        var taken: [Given] = []
        for index in given.indices where given[index].option.name == name {
            given[index].used = true
            taken.append(given[index])
        }
        return taken
    }

    private static func split(_ token: String) -> (name: String, value: String?) {
        guard token.hasPrefix("--"), let equals = token.firstIndex(of: "=") else { return (token, nil) }
        return (String(token[..<equals]), String(token[token.index(after: equals)...]))
    }

    /// `-x` and `--name`, but not `-` (standard input) or a negative number.
    static func looksLikeOption(_ token: String) -> Bool {
        token.count > 1 && token.hasPrefix("-") && Double(token) == nil
    }
}
