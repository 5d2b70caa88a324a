/// A command line being taken apart: options are pulled out by name, and what is left is positional.
///
/// Accepts `--name value`, `--name=value`, repeated options, and `--` to end options. Anything that
/// still looks like an option when the positionals are read is reported as unknown.
struct Arguments {
    private var tokens: [String]
    /// Tokens after `--`: always positional.
    private var literal: [String]

    init(_ arguments: [String]) {
        if let separator = arguments.firstIndex(of: "--") {
            tokens = Array(arguments[..<separator])
            literal = Array(arguments[(separator + 1)...])
        } else {
            tokens = arguments
            literal = []
        }
    }

    var isEmpty: Bool { tokens.isEmpty && literal.isEmpty }

    /// Removes a flag; returns whether it was there.
    mutating func flag(_ names: String...) -> Bool {
        var found = false
        tokens.removeAll { token in
            let matches = names.contains(token)
            found = found || matches
            return matches
        }
        return found
    }

    /// Removes every occurrence of an option and returns their values.
    ///
    /// - Parameter greedy: also take the tokens after each value up to the next option
    ///   (`--id a b c`).
    mutating func values(_ name: String, greedy: Bool = false) throws -> [String] {
        var values: [String] = []
        var index = 0
        while index < tokens.count {
            let token = tokens[index]
            if token.hasPrefix(name + "=") {
                values.append(String(token.dropFirst(name.count + 1)))
                tokens.remove(at: index)
            } else if token == name {
                guard index + 1 < tokens.count else {
                    throw CLIError.usage("option \(name) needs a value")
                }
                values.append(tokens[index + 1])
                tokens.removeSubrange(index...(index + 1))
                if greedy {
                    while index < tokens.count, !tokens[index].hasPrefix("--") {
                        values.append(tokens.remove(at: index))
                    }
                }
            } else {
                index += 1
            }
        }
        return values
    }

    /// Removes an option that may be given once; returns its value.
    mutating func value(_ name: String) throws -> String? {
        let all = try values(name)
        guard all.count <= 1 else { throw CLIError.usage("option \(name) was given \(all.count) times; give it once") }
        return all.first
    }

    /// Removes an option whose value is a whole number in `range`.
    mutating func integer(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = try value(name) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw CLIError.usage("option \(name) needs a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return number
    }

    /// The first positional token, removed; or `nil`.
    mutating func next() -> String? {
        if let index = tokens.firstIndex(where: { !looksLikeOption($0) }) {
            return tokens.remove(at: index)
        }
        return literal.isEmpty ? nil : literal.removeFirst()
    }

    /// Every remaining token, which must all be positional.
    ///
    /// - Throws: a usage error naming the first unknown option.
    mutating func positionals() throws -> [String] {
        if let unknown = tokens.first(where: looksLikeOption) {
            throw CLIError.usage("unknown option \(unknown)")
        }
        defer { tokens = []; literal = [] }
        return tokens + literal
    }

    /// Fails when anything is left over.
    mutating func finish() throws {
        let rest = try positionals()
        if let first = rest.first { throw CLIError.usage("unexpected argument '\(first)'") }
    }

    private func looksLikeOption(_ token: String) -> Bool {
        token.count > 1 && token.hasPrefix("-") && Double(token) == nil
    }
}
