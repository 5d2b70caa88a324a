package import Foundation
import ReplicaCore

/// A ``QueryPredicate`` made ready to check items: its `$time` values worked out for one moment and
/// time zone, its string patterns folded and split once.
package struct PredicateMatcher: Sendable {
    private indirect enum Node: Sendable {
        case compare(QueryAttribute, QueryOperator, Operand)
        case range(QueryAttribute, Operand, Operand)
        case and(Node, Node)
        case or(Node, Node)
        case not(Node)
    }

    /// A value ready to compare: a string pattern (with what its text reads as, for numbers, dates and
    /// flags), or a number, flag or date.
    private enum Operand: Sendable {
        case pattern(Glob, number: Double?, date: Date?, flag: Bool?)
        case number(Double)
        case flag(Bool)
        case date(Date)
    }

    private let root: Node
    /// Whether checking needs the item's text content.
    package let readsTextContent: Bool

    package init(_ predicate: QueryPredicate, now: Date, timeZone: TimeZone) {
        func operand(_ value: QueryValue) -> Operand {
            switch value {
            case .string(let pattern, let modifiers):
                let glob = Glob(pattern, modifiers: modifiers)
                let literal = glob.literalText
                let flag: Bool? =
                    switch literal.lowercased() {
                    case "true": true
                    case "false": false
                    default: nil
                    }
                return .pattern(
                    glob, number: Double(literal).flatMap { $0.isFinite ? $0 : nil }, date: ISO8601.date(from: literal),
                    flag: flag)
            case .number(let number): return .number(number)
            case .bool(let flag): return .flag(flag)
            case .time(let expression): return .date(expression.date(now: now, timeZone: timeZone))
            }
        }
        func node(_ predicate: QueryPredicate) -> Node {
            switch predicate {
            case .comparison(let attribute, let op, let value): return .compare(attribute, op, operand(value))
            case .inRange(let attribute, let low, let high): return .range(attribute, operand(low), operand(high))
            case .and(let left, let right): return .and(node(left), node(right))
            case .or(let left, let right): return .or(node(left), node(right))
            case .not(let inner): return .not(node(inner))
            }
        }
        root = node(predicate)
        readsTextContent = predicate.readsTextContent
    }

    /// Whether an item with these attributes (its text content included when ``readsTextContent``)
    /// satisfies the predicate.
    package func matches(_ attributes: AttributeSet) -> Bool {
        Self.evaluate(root, attributes)
    }

    private static func evaluate(_ node: Node, _ attributes: AttributeSet) -> Bool {
        switch node {
        case .and(let left, let right): return evaluate(left, attributes) && evaluate(right, attributes)
        case .or(let left, let right): return evaluate(left, attributes) || evaluate(right, attributes)
        case .not(let inner): return !evaluate(inner, attributes)
        case .compare(.anyText, let op, let operand):
            let texts = attributes.keys.compactMap { key -> AttributeValue? in
                guard let value = attributes[key] else { return nil }
                switch value {
                case .text, .texts, .people: return value
                default: return nil
                }
            }
            guard !texts.isEmpty else { return false }
            let any = texts.contains { holds($0, .equal, operand) }
            switch op {
            case .equal: return any
            case .notEqual: return !any
            default: return false
            }
        case .compare(.key(let key), let op, let operand):
            guard let value = attributes[key] else { return false }
            return holds(value, op, operand)
        case .range(let attribute, let low, let high):
            guard case .key(let key) = attribute, let value = attributes[key] else { return false }
            return holds(value, .greaterOrEqual, low) && holds(value, .lessOrEqual, high)
        }
    }

    /// Whether `value op operand` holds for one stored value.
    private static func holds(_ value: AttributeValue, _ op: QueryOperator, _ operand: Operand) -> Bool {
        switch value {
        case .text, .texts, .people:
            guard case .pattern(let glob, _, _, _) = operand else { return false }
            let any = value.strings.contains(where: glob.matches)
            switch op {
            case .equal: return any
            case .notEqual: return !any
            default: return false
            }
        case .number(let number):
            let target: Double? =
                switch operand {
                case .number(let x): x
                case .flag(let flag): flag ? 1 : 0
                case .pattern(_, let x, _, _): x
                case .date: nil
                }
            return target.map { compare(number, op, $0) } ?? false
        case .date(let date):
            let target: Date? =
                switch operand {
                case .date(let x): x
                case .pattern(_, _, let x, _): x
                case .number, .flag: nil
                }
            return target.map { compare(date.timeIntervalSince1970, op, $0.timeIntervalSince1970) } ?? false
        case .bool(let flag):
            let target: Bool? =
                switch operand {
                case .flag(let x): x
                case .number(let x): x != 0
                case .pattern(_, _, _, let x): x
                case .date: nil
                }
            guard let target, !op.isOrdering else { return false }
            return op == .equal ? flag == target : flag != target
        case .data:
            return false
        }
    }

    private static func compare(_ a: Double, _ op: QueryOperator, _ b: Double) -> Bool {
        switch op {
        case .equal: return a == b
        case .notEqual: return a != b
        case .less: return a < b
        case .greater: return a > b
        case .lessOrEqual: return a <= b
        case .greaterOrEqual: return a >= b
        }
    }
}

/// A string pattern with `*` and `?` wildcards and the `c`, `d`, `w`, `t` modifiers.
struct Glob: Sendable {
    enum Element: Sendable, Equatable {
        case literal(Character)
        case anyRun
        case anyOne
    }

    let modifiers: QueryStringModifiers
    /// The pattern as one run (whole-value matching) or as words (`w`, `t`).
    let words: [[Element]]
    let whole: [Element]
    /// The pattern's text without its escapes and wildcards' meaning, for reading it as a number or date.
    let literalText: String

    init(_ pattern: String, modifiers: QueryStringModifiers) {
        self.modifiers = modifiers
        var elements: [Element] = []
        var literal = ""
        var escaped = false
        for character in pattern {
            if escaped {
                elements.append(.literal(character))
                literal.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "*" {
                elements.append(.anyRun)
                literal.append(character)
            } else if character == "?" {
                elements.append(.anyOne)
                literal.append(character)
            } else {
                elements.append(.literal(character))
                literal.append(character)
            }
        }
        literalText = literal
        let folded = Self.fold(elements, modifiers)
        whole = folded
        if modifiers.contains(.wordBased) || modifiers.contains(.tokenBased) {
            words = Self.split(elements, camelCase: modifiers.contains(.wordBased)).map { Self.fold($0, modifiers) }
        } else {
            words = []
        }
    }

    /// Whether `text` matches: as a whole, or (with `w` or `t`) as a run of its words.
    func matches(_ text: String) -> Bool {
        guard !words.isEmpty else { return Self.match(whole, Array(fold(text))) }
        let elements = text.map(Element.literal)
        let valueWords = Self.split(elements, camelCase: modifiers.contains(.wordBased)).map { word in
            Array(fold(String(word.compactMap { if case .literal(let c) = $0 { c } else { nil } })))
        }
        guard valueWords.count >= words.count else { return false }
        for start in 0...(valueWords.count - words.count)
        where words.indices.allSatisfy({ Self.match(words[$0], valueWords[start + $0]) }) {
            return true
        }
        return false
    }

    private func fold(_ text: String) -> String {
        Self.fold(text, modifiers)
    }

    private static func fold(_ text: String, _ modifiers: QueryStringModifiers) -> String {
        var text = text
        if modifiers.contains(.diacriticInsensitive) {
            text = text.folding(options: .diacriticInsensitive, locale: nil)
        }
        if modifiers.contains(.caseInsensitive) { text = text.lowercased() }
        return text
    }

    private static func fold(_ elements: [Element], _ modifiers: QueryStringModifiers) -> [Element] {
        guard !modifiers.intersection([.caseInsensitive, .diacriticInsensitive]).isEmpty else { return elements }
        return elements.flatMap { element -> [Element] in
            guard case .literal(let character) = element else { return [element] }
            return fold(String(character), modifiers).map(Element.literal)
        }
    }

    /// Splits at every character that is not a letter, digit or wildcard and, for words, where a small
    /// letter meets a capital.
    private static func split(_ elements: [Element], camelCase: Bool) -> [[Element]] {
        var words: [[Element]] = []
        var current: [Element] = []
        for element in elements {
            if case .literal(let character) = element, !(character.isLetter || character.isNumber) {
                if !current.isEmpty { words.append(current) }
                current = []
                continue
            }
            if camelCase, case .literal(let character) = element, character.isUppercase,
                case .literal(let previous)? = current.last, previous.isLowercase
            {
                words.append(current)
                current = []
            }
            current.append(element)
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    /// Wildcard matching with one backtrack point for the last `*` seen: linear for patterns with at
    /// most one `*`, and at worst the pattern's length times the text's.
    private static func match(_ pattern: [Element], _ text: [Character]) -> Bool {
        var p = 0
        var t = 0
        var star: Int? = nil
        var resume = 0
        while t < text.count {
            if p < pattern.count {
                switch pattern[p] {
                case .anyRun:
                    star = p
                    resume = t
                    p += 1
                    continue
                case .anyOne:
                    p += 1
                    t += 1
                    continue
                case .literal(let character) where character == text[t]:
                    p += 1
                    t += 1
                    continue
                default:
                    break
                }
            }
            guard let starAt = star else { return false }
            p = starAt + 1
            resume += 1
            t = resume
        }
        while p < pattern.count, pattern[p] == .anyRun { p += 1 }
        return p == pattern.count
    }
}
