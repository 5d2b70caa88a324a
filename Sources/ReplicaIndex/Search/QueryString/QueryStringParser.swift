import Foundation
import ReplicaCore

/// Reads a Core Spotlight query string into a ``QueryPredicate``.
///
///     predicate  := or
///     or         := and ( "||" and )*
///     and        := unary ( "&&" unary )*
///     unary      := "!" unary | "(" or ")" | comparison | range
///     comparison := attribute operator ( "[" modifiers "]" )? value
///     range      := "InRange" "(" attribute "," value "," value ")"
///     attribute  := name | "*" | "**"
///     value      := '"' text '"' modifiers? | number | "true" | "false" | "$time." name ( "(" argument ")" )?
///
/// Names are Core Spotlight's attribute keys (`title`, `contentModificationDate`) or custom keys
/// (`com.example.chef`); `kMDItemTitle` and the like are read as `title`. The legacy form `==[cd] "x"`
/// is read like `== "x"cd`. The text is read scalar by scalar, so a quote stays a quote whatever follows
/// it, and columns count Unicode scalars.
struct QueryStringParser {
    private let scalars: [Unicode.Scalar]
    private var position = 0
    private var depth = 0
    private var comparisons = 0

    /// How deeply parentheses and `!` may nest: enough for any query a person writes, and a bound on the
    /// parser's recursion.
    static let maximumDepth = 100
    /// The longest query string read.
    static let maximumLength = 100_000
    /// The most comparisons one query string may hold: `&&` and `||` chains build trees as deep as they
    /// are long, which every later step walks recursively (on threads with small stacks).
    static let maximumComparisons = 256

    init(_ text: String) {
        scalars = Array(text.unicodeScalars)
    }

    mutating func parse() throws -> QueryPredicate {
        guard scalars.count <= Self.maximumLength else {
            throw QueryStringSyntaxError(
                column: Self.maximumLength + 1,
                problem: "the query string is longer than \(Self.maximumLength) characters")
        }
        skipSpace()
        guard position < scalars.count else {
            throw failure("the query string is empty; write a comparison such as title == \"draft*\"c")
        }
        let predicate = try parseOr()
        skipSpace()
        guard position == scalars.count else {
            throw failure(
                peek == ")" ? "a closing parenthesis has no opening one" : "expected && or || between comparisons")
        }
        return predicate
    }

    // MARK: Grammar

    private mutating func parseOr() throws -> QueryPredicate {
        var predicate = try parseAnd()
        while take("||") { predicate = .or(predicate, try parseAnd()) }
        return predicate
    }

    private mutating func parseAnd() throws -> QueryPredicate {
        var predicate = try parseUnary()
        while take("&&") { predicate = .and(predicate, try parseUnary()) }
        return predicate
    }

    private mutating func parseUnary() throws -> QueryPredicate {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else {
            throw failure("parentheses and ! nest more than \(Self.maximumDepth) deep")
        }
        skipSpace()
        if take("!") {
            skipSpace()
            // `!=` here would be an operator with no attribute before it.
            guard peek != "=" else { throw failure("expected a comparison after !") }
            return .not(try parseUnary())
        }
        if take("(") {
            let predicate = try parseOr()
            guard take(")") else { throw failure("expected ) to close the parenthesis") }
            return predicate
        }
        comparisons += 1
        guard comparisons <= Self.maximumComparisons else {
            throw failure("the query string holds more than \(Self.maximumComparisons) comparisons; split it")
        }
        let start = position
        let name = try parseAttributeName()
        skipSpace()
        if name.lowercased() == "inrange", peek == "(" {
            return try parseRange()
        }
        position = start
        let attribute = try parseAttribute()
        skipSpace()
        let operatorColumn = position
        guard let op = parseOperator() else {
            throw failure(
                peek == "="
                    ? "write == to compare (a single = is not an operator)"
                    : "expected an operator (==, !=, <, >, <=, >=) after the attribute name")
        }
        var modifiers = try parseBracketModifiers()
        skipSpace()
        let valueColumn = position
        var value = try parseValue()
        if case .string(let pattern, let written) = value, !modifiers.isEmpty {
            modifiers.formUnion(written)
            value = .string(pattern, modifiers)
        }
        try check(attribute, op, value, operatorAt: operatorColumn, valueAt: valueColumn)
        return .comparison(attribute, op, value)
    }

    private mutating func parseRange() throws -> QueryPredicate {
        guard take("(") else { throw failure("expected ( after InRange") }
        skipSpace()
        let attribute = try parseAttribute()
        guard take(",") else { throw failure("expected , after InRange's attribute") }
        skipSpace()
        let lowColumn = position
        let low = try parseValue()
        guard take(",") else { throw failure("expected , between InRange's two bounds") }
        skipSpace()
        let highColumn = position
        let high = try parseValue()
        guard take(")") else { throw failure("expected ) to close InRange") }
        try check(attribute, .greaterOrEqual, low, operatorAt: lowColumn, valueAt: lowColumn)
        try check(attribute, .lessOrEqual, high, operatorAt: highColumn, valueAt: highColumn)
        return .inRange(attribute, low, high)
    }

    // MARK: Attributes and operators

    private mutating func parseAttributeName() throws -> String {
        let start = position
        if take("**") || take("*") { return String(String.UnicodeScalarView(scalars[start..<position])) }
        while let scalar = peek, Self.isNameScalar(scalar) { position += 1 }
        guard position > start else {
            throw failure(
                position == scalars.count
                    ? "expected a comparison at the end of the query string"
                    : "expected an attribute name such as title, or ( or !")
        }
        guard Self.isNameStart(scalars[start]) else {
            position = start
            throw failure("an attribute name starts with a letter")
        }
        return String(String.UnicodeScalarView(scalars[start..<position]))
    }

    private mutating func parseAttribute() throws -> QueryAttribute {
        let name = try parseAttributeName()
        if name == "*" || name == "**" { return .anyText }
        // Spotlight's kMDItem names: kMDItemTitle is title.
        // (Only when a letter follows, so that the name it becomes is a name too: the fuzzer found
        // `kMDItem1`, which became `1` and did not parse back.)
        if name.hasPrefix("kMDItem"), let first = name.dropFirst(7).unicodeScalars.first, Self.isNameStart(first) {
            let rest = name.dropFirst(7)
            return .key(AttributeKey(rest.prefix(1).lowercased() + rest.dropFirst()))
        }
        return .key(AttributeKey(name))
    }

    private mutating func parseOperator() -> QueryOperator? {
        for op in [QueryOperator.equal, .notEqual, .lessOrEqual, .greaterOrEqual, .less, .greater]
        where take(op.rawValue) {
            return op
        }
        return nil
    }

    /// The legacy `==[cd]` form.
    private mutating func parseBracketModifiers() throws -> QueryStringModifiers {
        guard take("[") else { return [] }
        var modifiers: QueryStringModifiers = []
        while let scalar = peek, scalar != "]" {
            guard let modifier = QueryStringModifiers.letters.first(where: { $0.0 == Character(scalar) })?.1 else {
                throw failure("expected the modifiers c, d, w or t between [ and ]")
            }
            modifiers.insert(modifier)
            position += 1
        }
        guard take("]") else { throw failure("expected ] to close the modifiers") }
        return modifiers
    }

    // MARK: Values

    private mutating func parseValue() throws -> QueryValue {
        skipSpace()
        guard let scalar = peek else {
            throw failure("expected a value: a string in double quotes, a number, true, false or $time.…")
        }
        let value: QueryValue
        if scalar == "\"" {
            value = try parseString()
        } else if scalar == "$" {
            value = .time(try parseTime())
        } else if scalar == "-" || scalar == "+" || scalar == "." || ("0"..."9").contains(scalar) {
            value = .number(try parseNumber())
        } else if takeWord("true") {
            value = .bool(true)
        } else if takeWord("false") {
            value = .bool(false)
        } else {
            throw failure(
                scalar == "'"
                    ? "strings are written in double quotes"
                    : "expected a value: a string in double quotes, a number, true, false or $time.…")
        }
        skipSpace()
        return value
    }

    private mutating func parseString() throws -> QueryValue {
        let open = position
        position += 1
        var pattern = String.UnicodeScalarView()
        while true {
            guard let scalar = peek else {
                position = open
                throw failure("this string has no closing double quote")
            }
            position += 1
            if scalar == "\"" { break }
            if scalar == "\\" {
                guard let escaped = peek else { continue }
                position += 1
                // Wildcards and the backslash stay escaped in the stored pattern; anything else is itself.
                if escaped == "*" || escaped == "?" || escaped == "\\" { pattern.append("\\") }
                pattern.append(escaped)
            } else {
                pattern.append(scalar)
            }
        }
        var modifiers: QueryStringModifiers = []
        while let scalar = peek,
            let modifier = QueryStringModifiers.letters.first(where: { $0.0 == Character(scalar) })?.1
        {
            modifiers.insert(modifier)
            position += 1
        }
        if let scalar = peek, Self.isNameScalar(scalar) {
            throw failure("expected the modifiers c, d, w or t right after the closing quote")
        }
        return .string(String(pattern), modifiers)
    }

    private mutating func parseNumber() throws -> Double {
        let start = position
        if peek == "-" || peek == "+" { position += 1 }
        while let scalar = peek,
            ("0"..."9").contains(scalar) || scalar == "." || scalar == "e" || scalar == "E"
                || ((scalar == "-" || scalar == "+") && (scalars[position - 1] == "e" || scalars[position - 1] == "E"))
        {
            position += 1
        }
        let text = String(String.UnicodeScalarView(scalars[start..<position]))
        guard let number = Double(text), number.isFinite else {
            position = start
            throw failure("this is not a number a query can compare with")
        }
        return number
    }

    private mutating func parseTime() throws -> TimeExpression {
        guard take("$time.") else { throw failure("expected $time. and a name such as today or now") }
        let nameStart = position
        while let scalar = peek, scalar == "_" || scalar.properties.isAlphabetic { position += 1 }
        let name = String(String.UnicodeScalarView(scalars[nameStart..<position]))
        if name == "iso" {
            guard take("(") else { throw failure("expected ( after $time.iso") }
            skipSpace()
            let quoted = take("\"")
            let textStart = position
            while let scalar = peek, scalar != ")", scalar != "\"" { position += 1 }
            let text = String(String.UnicodeScalarView(scalars[textStart..<position])).trimmingCharacters(
                in: .whitespaces)
            guard let date = ISO8601.date(from: text) else {
                position = textStart
                throw failure("$time.iso needs an ISO 8601 date such as 2026-11-20 or 2026-11-20T10:00:00Z")
            }
            if quoted { guard take("\"") else { throw failure("expected \" to close the date") } }
            skipSpace()
            guard take(")") else { throw failure("expected ) to close $time.iso") }
            return TimeExpression(instant: Self.millisecond(date))
        }
        guard let (anchor, implied) = TimeExpression.names[name] else {
            position = nameStart
            throw failure(
                "unknown $time name; use now, today, yesterday, tomorrow, this_week, next_week, this_month, next_month, this_year, next_year or iso"
            )
        }
        var offset = implied
        if take("(") {
            skipSpace()
            let numberStart = position
            let number = try parseNumber()
            let bound = anchor == .now ? 10_000_000_000.0 : 100_000.0
            guard number == number.rounded(), abs(number) <= bound, implied == 0 else {
                position = numberStart
                throw failure(
                    implied != 0
                        ? "$time.\(name) takes no number; use $time.\(anchor.rawValue)(N)"
                        : "$time.\(name) takes a whole number of \(anchor == .now ? "seconds" : "units") up to \(Int(bound))"
                )
            }
            offset = Int(number)
            skipSpace()
            guard take(")") else { throw failure("expected ) after the number") }
        }
        return TimeExpression(anchor, offset: offset)
    }

    /// An instant to the millisecond, the precision a query string writes it back with.
    static func millisecond(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded() / 1000)
    }

    // MARK: Checks on system keys

    /// Refuses comparisons that can never hold because of the kind of value a system key takes, pointing
    /// at the operator or the value, whichever is wrong.
    private func check(
        _ attribute: QueryAttribute, _ op: QueryOperator, _ value: QueryValue, operatorAt operatorColumn: Int,
        valueAt column: Int
    ) throws {
        let kind: AttributeValue.Kind?
        switch attribute {
        case .anyText: kind = .text
        case .key(let key): kind = key.kind
        }
        guard let kind else { return }
        func fail(_ problem: String) -> QueryStringSyntaxError {
            QueryStringSyntaxError(column: column + 1, problem: problem)
        }
        switch kind {
        case .text, .texts, .people:
            guard !op.isOrdering else {
                throw QueryStringSyntaxError(
                    column: operatorColumn + 1,
                    problem:
                        "\(attribute) holds text; compare it with == or != and a string (< and > order numbers and dates)"
                )
            }
            guard case .string = value else {
                throw fail("\(attribute) holds text; compare it with a string in double quotes")
            }
        case .number:
            switch value {
            case .number: break
            case .string(let text, _) where Double(text) != nil: break
            default: throw fail("\(attribute) holds a number; compare it with a number")
            }
        case .date:
            switch value {
            case .time: break
            case .string(let text, _) where ISO8601.date(from: text) != nil: break
            default:
                throw fail(
                    "\(attribute) holds a date; compare it with $time.… or an ISO 8601 date in quotes such as \"2026-11-20\""
                )
            }
        case .bool:
            switch value {
            case .bool, .number:
                guard !op.isOrdering else {
                    throw QueryStringSyntaxError(
                        column: operatorColumn + 1, problem: "\(attribute) is true or false; compare it with == or !=")
                }
            default: throw fail("\(attribute) is true or false; compare it with true or false")
            }
        case .data:
            throw fail("\(attribute) holds data, which a query cannot compare")
        }
    }

    // MARK: Scanning

    private var peek: Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

    private mutating func skipSpace() {
        while let scalar = peek, scalar.properties.isWhitespace { position += 1 }
    }

    /// Consumes `text` if it comes next, after any spaces.
    private mutating func take(_ text: String) -> Bool {
        skipSpace()
        let wanted = Array(text.unicodeScalars)
        guard position + wanted.count <= scalars.count, Array(scalars[position..<position + wanted.count]) == wanted
        else { return false }
        position += wanted.count
        return true
    }

    /// Consumes `word` if it comes next and is not the start of a longer name.
    private mutating func takeWord(_ word: String) -> Bool {
        let start = position
        guard take(word) else { return false }
        if let scalar = peek, Self.isNameScalar(scalar) {
            position = start
            return false
        }
        return true
    }

    private func failure(_ problem: String) -> QueryStringSyntaxError {
        QueryStringSyntaxError(column: position + 1, problem: problem)
    }

    static func isNameStart(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || scalar == "_"
    }

    static func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || scalar.properties.numericType != nil || scalar == "_" || scalar == "."
            || scalar == "-" || scalar == ":"
    }
}
