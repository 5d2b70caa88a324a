/// A command's operands: the arguments that are not options (`PATH`, `WORDS…`), declared once as an
/// ``OperandKey`` of the type they are read as, and read with it (`arguments[Self.words]`). The same
/// declaration writes the usage line (``Synopsis``).
struct Operand: Sendable {
    /// How many arguments an operand takes.
    enum Arity: Sendable {
        /// Exactly one.
        case one
        /// One or more.
        case oneOrMore
        /// Any number, none included.
        case any
    }

    /// Its name in the usage line: `PATH`, `FILE|-`.
    var name: String
    var arity: Arity
    /// Written after `--`, because the arguments may start with `-` (a plugin's command line).
    var afterDashes = false
    /// The usage error when it is missing.
    var missing: String
    /// The usage error when more arguments were given than it takes, or `nil` to name the first extra.
    var tooMany: String?

    /// The operand as the usage line writes it: `PATH`, `WORDS…`, `[FILE…]`, `-- COMMAND…`.
    var synopsis: String {
        let text: String
        switch arity {
        case .one: text = name
        case .oneOrMore: text = name + "…"
        case .any: text = "[" + name + "…]"
        }
        return afterDashes ? "-- " + text : text
    }

    /// One argument: `missing` says what to give when there is none.
    static func one(_ name: String, missing: String? = nil, tooMany: String? = nil) -> OperandKey<String> {
        OperandKey(Operand(name: name, arity: .one, missing: missing ?? "give \(name)", tooMany: tooMany)) { $0[0] }
    }

    /// One argument or more.
    static func oneOrMore(_ name: String, afterDashes: Bool = false, missing: String? = nil) -> OperandKey<[String]> {
        OperandKey(Operand(name: name, arity: .oneOrMore, afterDashes: afterDashes, missing: missing ?? "give \(name)"))
        { $0 }
    }

    /// Any number of arguments, none included.
    static func any(_ name: String) -> OperandKey<[String]> {
        OperandKey(Operand(name: name, arity: .any, missing: "")) { $0 }
    }
}

/// An operand declared once with the type it is read as: `String` for one, `[String]` for several.
struct OperandKey<Value>: Sendable {
    let operand: Operand
    let convert: @Sendable ([String]) -> Value

    init(_ operand: Operand, convert: @escaping @Sendable ([String]) -> Value) {
        self.operand = operand
        self.convert = convert
    }
}

/// One way to call a command, for its usage line: the action words that select it (`add files`), and its
/// operand. The options on the line are the command's own declarations for that action: those it
/// requires as they are, the others in brackets, and `[OPTIONS]` for them when there are many.
struct Synopsis: Sendable {
    /// The action's words, or empty for a command without actions.
    var action: String
    /// What follows the options, if anything.
    var operand: Operand?
    /// Whether the action may be left out (the command's default action).
    var actionIsOptional = false

    init(_ action: String = "", _ operand: OperandKey<some Any>? = nil as OperandKey<String>?, default: Bool = false) {
        self.action = action
        self.operand = operand?.operand
        actionIsOptional = `default`
    }

    /// The most optional options a line lists one by one before it says `[OPTIONS]`.
    static let optionsWritten = 5

    /// The widest a usage line is before it goes on under the command's name.
    static let width = 100

    /// The line after `Usage: `, broken where it would pass ``width``: `replica [--store DIR] COMMAND`, the
    /// action, the options, the operand.
    func line(command: String, options declarations: [any OptionDeclaration]) -> String {
        let options = declarations.map(\.option).filter { $0.applies(to: action) }
        var head = "replica [--store DIR] " + command
        if !action.isEmpty { head += " " + (actionIsOptional ? "[" + action + "]" : action) }
        var parts: [String] = []
        var groupsWritten: Set<String> = []
        let optional = options.filter { !$0.isRequired && $0.group == nil }
        // Past a handful, the options every action takes are summed up as [OPTIONS]; those of this
        // action alone are still written.
        let summed = optional.count > Self.optionsWritten
        for option in options {
            if let group = option.group {
                guard groupsWritten.insert(group).inserted else { continue }
                let members = options.filter { $0.group == group }
                let choices = members.map(\.usage).joined(separator: " | ")
                parts.append(members.contains(where: \.isRequired) ? "(" + choices + ")" : "[" + choices + "]")
            } else if option.isRequired {
                parts.append(option.usage)
            } else if !summed || !option.actions.isEmpty {
                parts.append("[" + option.usage + "]" + (option.arity == .repeatable ? "…" : ""))
            }
        }
        if summed { parts.insert("[OPTIONS]", at: parts.firstIndex { $0.hasPrefix("[") } ?? parts.endIndex) }
        if let operand { parts.append(operand.synopsis) }
        // Lines after the first start under the first option; each keeps at least one part.
        let indent = String(repeating: " ", count: "Usage: ".count + head.count + 1)
        var lines = ["Usage: " + head]
        var partsOnLine = 0
        for part in parts {
            if partsOnLine > 0, lines[lines.count - 1].count + 1 + part.count > Self.width {
                lines.append(indent + part)
                partsOnLine = 1
            } else {
                lines[lines.count - 1] += " " + part
                partsOnLine += 1
            }
        }
        return String(lines.joined(separator: "\n").dropFirst("Usage: ".count))
    }

    /// A command's usage lines, the first after "Usage: ", the others aligned under it.
    static func usage(command: String, synopses: [Synopsis], options: [any OptionDeclaration]) -> String {
        "Usage: "
            + synopses.map { $0.line(command: command, options: options) }.joined(separator: "\n       ")
    }
}

extension Option {
    /// Whether the option goes with `action` (`add git` takes the options of `add` and of `add git`).
    func applies(to action: String) -> Bool {
        actions.isEmpty || actions.contains { action == $0 || action.hasPrefix($0 + " ") }
    }

    /// The option as a usage line writes it, without brackets: `--account ID`, `--id ID…`.
    var usage: String { synopsis }
}

extension OptionKey {
    /// The option as one the command cannot do without (for the actions it goes with): the usage line
    /// writes it without brackets. Reading it does not check it; the command says what is missing.
    func required() -> OptionKey {
        var copy = self
        copy.option.isRequired = true
        return copy
    }

    /// The option as one of a group of which at most one is given (a required group: exactly one); the
    /// usage line writes the group as `[a | b]` or `(a | b)`.
    func oneOf(_ group: String) -> OptionKey {
        var copy = self
        copy.option.group = group
        return copy
    }
}
