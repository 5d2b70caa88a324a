import Foundation
import Replica

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
    init(_ arguments: [String], options declarations: [any OptionDeclaration]) throws {
        let options = declarations.map(\.option)
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
                throw CLIError.usage(
                    "option \(name) needs a value, but '\(value)' follows it; for a value that starts with '-', "
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
    fileprivate mutating func flag(_ name: String) -> Bool {
        !take(name, arity: [.flag]).isEmpty
    }

    /// Every value of an option, in order.
    fileprivate mutating func values(_ name: String) throws -> [String] {
        take(name, arity: [.repeatable, .list]).compactMap(\.value)
    }

    /// The value of an option that may be given once.
    fileprivate mutating func value(_ name: String) throws -> String? {
        let all = take(name, arity: [.single]).compactMap(\.value)
        guard all.count <= 1 else { throw CLIError.usage("option \(name) was given \(all.count) times; give it once") }
        return all.first
    }

    /// The value of an option that is a whole number in `range`.
    fileprivate mutating func integer(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = try value(name) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw CLIError.usage(
                "option \(name) needs a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return number
    }

    /// The first positional argument, removed; or `nil`.
    mutating func next() -> String? {
        positional.isEmpty ? nil : positional.removeFirst()
    }

    /// Every remaining positional argument, once every option given was used by the command. Commands
    /// read them as their declared operand (`arguments[operand: Self.words]`).
    ///
    /// - Throws: a usage error naming an option the command did not use for what was asked.
    fileprivate mutating func positionals() throws -> [String] {
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
        precondition(
            declared.contains { $0.name == name && arity.contains($0.arity) },
            "option \(name) is read but not declared so")
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

/// The kinds of option a command declares, each read by name only here: a command reads its options with
/// the keys these make (`arguments[Self.limit]`), so a name is written once.
extension Option {
    static func flag(_ name: String, only actions: [String] = [], _ help: String) -> OptionKey<Bool> {
        OptionKey(Option(name: name, placeholder: nil, arity: .flag, actions: actions, help: help)) { arguments, name in
            arguments.flag(name)
        }
    }

    static func string(_ name: String, _ placeholder: String, only actions: [String] = [], _ help: String) -> OptionKey<
        String?
    > {
        OptionKey(Option(name: name, placeholder: placeholder, arity: .single, actions: actions, help: help)) {
            arguments, name in
            try arguments.value(name)
        }
    }

    /// A whole number in `range`; anything else is a usage error that gives the range.
    static func integer(
        _ name: String, _ placeholder: String, in range: ClosedRange<Int>, only actions: [String] = [],
        _ help: String
    ) -> OptionKey<Int?> {
        OptionKey(Option(name: name, placeholder: placeholder, arity: .single, actions: actions, help: help)) {
            arguments, name in
            try arguments.integer(name, in: range)
        }
    }

    /// An ISO 8601 date (`2026-11-20`, `2026-11-20T10:00:00Z`); anything else is a usage error.
    static func date(_ name: String, only actions: [String] = [], _ help: String) -> OptionKey<Date?> {
        OptionKey(Option(name: name, placeholder: "DATE", arity: .single, actions: actions, help: help)) {
            arguments, name in
            guard let text = try arguments.value(name) else { return nil }
            guard let date = ISO8601.date(from: text) else {
                throw CLIError.usage(
                    "\(name) needs an ISO 8601 date such as 2026-11-20 or 2026-11-20T10:00:00Z, not '\(text)'")
            }
            return date
        }
    }

    static func repeatable(_ name: String, _ placeholder: String, only actions: [String] = [], _ help: String)
        -> OptionKey<[String]>
    {
        OptionKey(Option(name: name, placeholder: placeholder, arity: .repeatable, actions: actions, help: help)) {
            arguments, name in
            try arguments.values(name)
        }
    }

    static func list(_ name: String, _ placeholder: String, only actions: [String] = [], _ help: String) -> OptionKey<
        [String]
    > {
        OptionKey(Option(name: name, placeholder: placeholder, arity: .list, actions: actions, help: help)) {
            arguments, name in
            try arguments.values(name)
        }
    }
}

extension Arguments {
    /// The value of a declared option, read as its key says; marks it used.
    ///
    /// - Throws: a usage error for a value the key cannot read (a number out of range, a date that is not
    ///   ISO 8601, an option given twice that may be given once).
    subscript<Value>(key: OptionKey<Value>) -> Value {
        mutating get throws { try key.read(&self, key.option.name) }
    }
}

extension Arguments {
    /// The next positional argument as one of a command's actions (`sources add`), or `default` when
    /// there is none.
    ///
    /// - Throws: a usage error that lists the actions, for an action missing or unknown.
    mutating func action<Action: RawRepresentable & CaseIterable>(of command: String, default: Action? = nil) throws
        -> Action
    where Action.RawValue == String {
        let names = Action.allCases.map(\.rawValue)
        let choices = names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " or " + names.last!
        guard let word = next() else {
            if let `default` { return `default` }
            throw CLIError.usage("say what to do: \(command) \(choices)")
        }
        guard let action = Action(rawValue: word) else {
            throw CLIError.usage("unknown \(command) action '\(word)'; use \(choices)")
        }
        return action
    }
}

extension Arguments {
    /// Every remaining positional argument as the operand the key declares, once every option given was
    /// used by the command.
    ///
    /// - Throws: a usage error when an option given does not go with the action, when the operand is
    ///   missing, or when more arguments were given than it takes.
    subscript<Value>(operand key: OperandKey<Value>) -> Value {
        mutating get throws {
            let values = try positionals()
            switch key.operand.arity {
            case .one, .oneOrMore:
                guard !values.isEmpty else { throw CLIError.usage(key.operand.missing) }
                if key.operand.arity == .one, values.count > 1 {
                    throw CLIError.usage(key.operand.tooMany ?? "unexpected argument '\(values[1])'")
                }
            case .any: break
            }
            return key.convert(values)
        }
    }
}
