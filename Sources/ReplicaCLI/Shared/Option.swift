/// One option a command accepts: its name, whether and how it takes a value, which of the command's
/// actions it goes with, and its lines in the help.
///
/// A command's list of options is the one declaration of them: ``Arguments`` accepts nothing else, and
/// the command's `--help` lists exactly these (``Option/helpText(for:)``), so the two cannot drift apart.
/// Each is declared once as an ``OptionKey`` of the type it is read as, and read with that key, so a
/// misspelt option fails to compile: `static let limit = Option.integer("--limit", "N", in: 1...100, "at
/// most N results")` in the command, then `let limit = try arguments[Self.limit] ?? 20` in its `run`.
struct Option: Sendable {
    /// How an option takes its value.
    enum Arity: Sendable {
        /// No value: present or not.
        case flag
        /// One value, given once.
        case single
        /// One value each time; may be repeated.
        case repeatable
        /// One or more values after one option (`--id a b c`), and repeatable.
        case list
    }

    /// The option's name, with its dashes: `--account`.
    var name: String
    /// What its value is called in the help (`ID`), or `nil` for a flag.
    var placeholder: String?
    var arity: Arity
    /// The actions of the command it goes with (`list`, `add`), or empty for all of them.
    var actions: [String]
    /// What it does; a line break starts a new line of the help.
    var help: String
    /// Whether the command cannot do without it, for the usage line (``OptionKey/required()``).
    var isRequired = false
    /// The group of options of which at most one is given, for the usage line (``OptionKey/oneOf(_:)``).
    var group: String?

    var takesValue: Bool { arity != .flag }

    /// The left column of the help: `--account ID`, `--id ID…`.
    var synopsis: String {
        guard let placeholder else { return name }
        return name + " " + placeholder + (arity == .list ? "…" : "")
    }

    /// The "Options:" part of a help text: one entry per option, its help in a column beside it.
    static func helpText(for declarations: [any OptionDeclaration]) -> String {
        let options = declarations.map(\.option)
        let column = min(options.map { $0.synopsis.count }.max() ?? 0, 24) + 4
        return options.map { option in
            var lines = option.help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if !option.actions.isEmpty { lines[0] = "(" + option.actions.joined(separator: ", ") + ") " + lines[0] }
            if option.arity == .repeatable || option.arity == .list, let last = lines.indices.last {
                lines[last] += " (repeatable)"
            }
            let left = "  " + option.synopsis
            let indent = String(repeating: " ", count: column)
            var text =
                left.count + 2 <= column
                ? left.padding(toLength: column, withPad: " ", startingAt: 0) + lines[0]
                : left + "\n" + indent + lines[0]
            for line in lines.dropFirst() { text += "\n" + indent + line }
            return text
        }.joined(separator: "\n")
    }
}

/// A declared option, as a command's list holds it.
protocol OptionDeclaration: Sendable {
    /// What parsing and the help need.
    var option: Option { get }
}

/// An option declared once, with the type its value is read as (`Bool` for a flag, `Int?`, `Date?`,
/// `[String]` for a repeatable option): `arguments[key]` reads it.
struct OptionKey<Value>: OptionDeclaration {
    var option: Option
    let read: @Sendable (inout Arguments, String) throws -> Value

    init(_ option: Option, read: @escaping @Sendable (inout Arguments, String) throws -> Value) {
        self.option = option
        self.read = read
    }

    /// The option by another help text: for an option shared by commands that say different things of it.
    func help(_ help: String) -> OptionKey {
        var copy = self
        copy.option.help = help
        return copy
    }

    /// The option for these actions only.
    func only(_ actions: [String]) -> OptionKey {
        var copy = self
        copy.option.actions = actions
        return copy
    }
}
