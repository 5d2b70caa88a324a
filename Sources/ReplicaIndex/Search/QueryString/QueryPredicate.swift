import Foundation
import ReplicaCore

/// A condition on an item's attributes, as Core Spotlight's query strings write them.
///
/// Parse one from a query string with ``init(queryString:)``, or build it in code; either way it is a
/// value that is checked against each item's attributes, never text pasted into SQL or full-text syntax.
/// Its `description` is the canonical query string, which parses back to the same predicate.
///
/// For example:
/// ```swift
/// let recent = try QueryPredicate(queryString: #"title == "launch*"cd && contentModificationDate > $time.today(-7)"#)
/// var query = SearchQuery()
/// query.predicate = recent
/// ```
///
/// How a comparison is decided:
/// - On text (text, lists of text, people's names and handles) only `==` and `!=` apply. `==` holds when
///   one of the attribute's strings matches the value, which may hold wildcards (`*` any run of
///   characters, `?` one character; `\*` and `\?` are themselves). The modifiers after the closing
///   quote change the comparison: `c` ignores case, `d` ignores diacritics, `w` matches the value against
///   the words of the attribute (split at spaces, punctuation and a small letter followed by a capital:
///   `"window"cw` matches "MyWindow" and "the window", not "windows"), `t` against its tokens (split at
///   spaces and punctuation only).
/// - On numbers and dates, every operator and `InRange(attribute, low, high)` (both ends included)
///   apply. Dates compare with `$time.…` values or ISO 8601 dates in quotes; a flag (`true`/`false`)
///   compares with `true`, `false`, 1 or 0.
/// - `!=` holds when the item has the attribute and `==` does not hold; an item without the attribute
///   matches no comparison on it (use `!(attribute == …)` to include such items).
/// - `*` as the attribute means any text attribute, the text content included.
public indirect enum QueryPredicate: Hashable, Sendable, CustomStringConvertible {
    /// `attribute op value`.
    case comparison(QueryAttribute, QueryOperator, QueryValue)
    /// `InRange(attribute, low, high)`: a number or date from `low` through `high`.
    case inRange(QueryAttribute, QueryValue, QueryValue)
    /// `left && right`.
    case and(QueryPredicate, QueryPredicate)
    /// `left || right`.
    case or(QueryPredicate, QueryPredicate)
    /// `!predicate`.
    case not(QueryPredicate)

    /// Parses a Core Spotlight query string.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidQuery` whose message names the column of the
    ///   mistake (counted in Unicode scalars from 1); its `cause` is a ``QueryStringSyntaxError``.
    public init(queryString: String) throws {
        do {
            var parser = QueryStringParser(queryString)
            self = try parser.parse()
        } catch let error as QueryStringSyntaxError {
            throw ReplicaError(
                .invalidQuery, "the query string has a mistake at column \(error.column): \(error.problem)",
                cause: error)
        }
    }

    /// The predicate as a query string.
    public var description: String { written(inside: .or) }

    private enum Level: Int { case or, and, unary }

    private func written(inside level: Level) -> String {
        switch self {
        case .comparison(let attribute, let op, let value):
            return "\(attribute) \(op.rawValue) \(value)"
        case .inRange(let attribute, let low, let high):
            return "InRange(\(attribute), \(low), \(high))"
        case .and(let left, let right):
            let text = left.written(inside: .and) + " && " + right.written(inside: .unary)
            return level.rawValue > Level.and.rawValue ? "(" + text + ")" : text
        case .or(let left, let right):
            let text = left.written(inside: .or) + " || " + right.written(inside: .and)
            return level.rawValue > Level.or.rawValue ? "(" + text + ")" : text
        case .not(let predicate):
            return "!" + predicate.written(inside: .unary)
        }
    }

    /// Whether deciding the predicate needs the item's text content (its longest attribute, read only
    /// when needed).
    package var readsTextContent: Bool {
        switch self {
        case .comparison(let attribute, _, _), .inRange(let attribute, _, _):
            return attribute == .anyText || attribute == .key(.textContent)
        case .and(let left, let right), .or(let left, let right):
            return left.readsTextContent || right.readsTextContent
        case .not(let predicate):
            return predicate.readsTextContent
        }
    }
}

/// The attribute a comparison looks at.
public enum QueryAttribute: Hashable, Sendable, CustomStringConvertible {
    /// One attribute by its Core Spotlight key.
    case key(AttributeKey)
    /// `*`: any text attribute.
    case anyText

    /// The attribute as a query string writes it: its key, or `*`.
    public var description: String {
        switch self {
        case .key(let key): return key.rawValue
        case .anyText: return "*"
        }
    }
}

/// A comparison operator.
public enum QueryOperator: String, Hashable, Sendable, CaseIterable {
    /// `==`: the attribute holds the value (for text, one of its strings matches the pattern).
    case equal = "=="
    /// `!=`: the attribute does not hold the value.
    case notEqual = "!="
    /// `<`: the attribute is below or before the value (numbers and dates only).
    case less = "<"
    /// `>`: the attribute is above or after the value (numbers and dates only).
    case greater = ">"
    /// `<=`: the attribute is at, below or before the value (numbers and dates only).
    case lessOrEqual = "<="
    /// `>=`: the attribute is at, above or after the value (numbers and dates only).
    case greaterOrEqual = ">="

    /// Whether the operator orders values (numbers and dates only).
    public var isOrdering: Bool { self != .equal && self != .notEqual }
}

/// A value on the right of a comparison.
public enum QueryValue: Hashable, Sendable, CustomStringConvertible {
    /// A quoted string in its escaped form (`\*`, `\?` and `\\` stand for themselves; `*` and `?` are
    /// wildcards), with the modifiers written after it.
    case string(String, QueryStringModifiers)
    /// A number, compared with number attributes (and with yes-or-no ones, as 1 or 0).
    case number(Double)
    /// `true` or `false`, compared with yes-or-no attributes (and with number ones, as 1 or 0).
    case bool(Bool)
    /// A `$time.…` date, worked out when the query runs.
    case time(TimeExpression)

    /// The value as a query string writes it: a quoted string with its modifiers, a number, `true` or `false`,
    /// or a `$time.…` expression.
    public var description: String {
        switch self {
        case .string(let pattern, let modifiers):
            // Scalar by scalar, so that a quote followed by a combining mark is still escaped.
            var view = String.UnicodeScalarView(["\""])
            for scalar in pattern.unicodeScalars {
                if scalar == "\"" { view.append("\\") }
                view.append(scalar)
            }
            view.append("\"")
            return String(view) + modifiers.description
        case .number(let number):
            return JSON.format(number)
        case .bool(let flag):
            return flag ? "true" : "false"
        case .time(let expression):
            return expression.description
        }
    }
}

/// The modifiers written after a quoted value: `c`, `d`, `w`, `t`.
public struct QueryStringModifiers: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The modifiers as bits.
    public let rawValue: UInt8
    /// Creates modifiers from their bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `c`: ignore case.
    public static let caseInsensitive = QueryStringModifiers(rawValue: 1)
    /// `d`: ignore diacritics.
    public static let diacriticInsensitive = QueryStringModifiers(rawValue: 2)
    /// `w`: match words, splitting also where a small letter meets a capital.
    public static let wordBased = QueryStringModifiers(rawValue: 4)
    /// `t`: match tokens, split at spaces and punctuation.
    public static let tokenBased = QueryStringModifiers(rawValue: 8)

    static let letters: [(Character, QueryStringModifiers)] = [
        ("c", .caseInsensitive), ("d", .diacriticInsensitive), ("w", .wordBased), ("t", .tokenBased),
    ]

    /// The modifiers' letters, in the order `c`, `d`, `w`, `t`.
    public var description: String {
        String(Self.letters.filter { contains($0.1) }.map(\.0))
    }
}

/// Where a query string goes wrong: the column (Unicode scalars from 1) and what is wrong there.
public struct QueryStringSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The column of the mistake, counted in Unicode scalars from 1.
    public var column: Int
    /// What is wrong there.
    public var problem: String

    /// Creates an error for a mistake at `column`.
    public init(column: Int, problem: String) {
        self.column = column
        self.problem = problem
    }

    /// The column and the problem, as `column N: problem`.
    public var description: String { "column \(column): \(problem)" }
}
