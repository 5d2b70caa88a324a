import Foundation

/// A JSON value that keeps the order of object keys.
///
/// replica reads and writes JSON in many places — import lines, command output, the search tool's
/// arguments, the Model Context Protocol, plugin messages — and scripts rely on a stable key order, so
/// objects are ordered lists of members rather than dictionaries.
///
/// For example:
/// ```swift
/// let value = try JSON.parse(#"{"query": "launch risk"}"#)
/// value["query"]?.stringValue   // "launch risk"
/// JSON.object([("results", .array([]))]).serialized()  // {"results":[]}
/// ```
public enum JSON: Sendable, Equatable {
    /// JSON's `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number; whole numbers within ±2^53 are held here exactly.
    case number(Double)
    /// A whole number too large for a `Double` to hold exactly (beyond ±2^53), kept exactly: versions and
    /// counters from sync layers can be any 64-bit integer. Smaller integers are `.number`.
    case integer(Int64)
    /// A string.
    case string(String)
    /// An array of values, in order.
    case array([JSON])
    /// An object: its members as key and value pairs, in the order they were written.
    case object([(String, JSON)])

    /// Whether two values are the same: objects compare member by member in order, and an `.integer` equals a
    /// `.number` holding exactly the same whole number.
    public static func == (lhs: JSON, rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.integer(let a), .number(let b)), (.number(let b), .integer(let a)): return Int64(exactly: b) == a
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    // MARK: Reading

    /// The member named `key` of an object (the last one, if repeated).
    public subscript(key: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        return members.last(where: { $0.0 == key })?.1
    }

    /// The string, when the value is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number, when the value is a number; an `.integer` is converted, and may lose precision beyond 2^53.
    public var doubleValue: Double? {
        switch self {
        case .number(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }

    /// The value as an integer, when it is a whole number that is exact: any 64-bit integer written
    /// without a fraction or exponent, or a number up to 2^53 written any way.
    public var intValue: Int? {
        switch self {
        case .integer(let value): return Int(value)
        case .number(let value):
            guard value.rounded() == value, abs(value) <= 9_007_199_254_740_992 else { return nil }
            return Int(value)
        default: return nil
        }
    }

    /// The boolean, when the value is a boolean.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, when the value is an array.
    public var arrayValue: [JSON]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members in their order, when the value is an object.
    public var objectValue: [(String, JSON)]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether the value is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// A short name of the value's kind, for error messages ("a string", "an array", …).
    public var kindDescription: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number, .integer: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    // MARK: Building

    /// An object from members, leaving out those whose value is `nil`.
    public static func object(omittingNil members: [(String, JSON?)]) -> JSON {
        .object(members.compactMap { key, value in value.map { (key, $0) } })
    }

    /// Returns a copy of an object with `value` set for `key` (replacing or appending).
    public func setting(_ key: String, to value: JSON) -> JSON {
        guard case .object(var members) = self else { return self }
        if let index = members.firstIndex(where: { $0.0 == key }) {
            members[index].1 = value
        } else {
            members.append((key, value))
        }
        return .object(members)
    }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByNilLiteral
{
    /// Makes a string from a string literal.
    public init(stringLiteral value: String) { self = .string(value) }
    /// Makes a `.number` from an integer literal.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    /// Makes a number from a floating-point literal.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// Makes a boolean from `true` or `false`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// Makes an array from an array literal.
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    /// Makes `null` from `nil`.
    public init(nilLiteral: ()) { self = .null }
}

// MARK: - Writing

extension JSON {
    /// Compact JSON text: no spaces, keys in their order, strings escaped as RFC 8259 asks.
    public func serialized() -> String {
        var output = ""
        output.reserveCapacity(256)
        write(to: &output)
        return output
    }

    /// Indented JSON text for people.
    public func prettyPrinted() -> String {
        var output = ""
        writePretty(to: &output, indent: 0)
        return output
    }

    package func write(to output: inout String) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .number(let value): output += JSON.format(value)
        case .integer(let value): output += String(value)
        case .string(let value): JSON.writeString(value, to: &output)
        case .array(let values):
            output += "["
            for (index, value) in values.enumerated() {
                if index > 0 { output += "," }
                value.write(to: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { output += "," }
                JSON.writeString(key, to: &output)
                output += ":"
                value.write(to: &output)
            }
            output += "}"
        }
    }

    private func writePretty(to output: inout String, indent: Int) {
        let padding = String(repeating: "  ", count: indent + 1)
        let closing = String(repeating: "  ", count: indent)
        switch self {
        case .array(let values) where !values.isEmpty:
            output += "[\n"
            for (index, value) in values.enumerated() {
                output += padding
                value.writePretty(to: &output, indent: indent + 1)
                output += index == values.count - 1 ? "\n" : ",\n"
            }
            output += closing + "]"
        case .object(let members) where !members.isEmpty:
            output += "{\n"
            for (index, (key, value)) in members.enumerated() {
                output += padding
                JSON.writeString(key, to: &output)
                output += ": "
                value.writePretty(to: &output, indent: indent + 1)
                output += index == members.count - 1 ? "\n" : ",\n"
            }
            output += closing + "}"
        default:
            write(to: &output)
        }
    }

    /// Integers print without a fraction; other finite numbers in their shortest exact form.
    package static func format(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value.rounded() == value && abs(value) <= 9_007_199_254_740_992 {
            return String(Int64(value))
        }
        return "\(value)"
    }

    package static func writeString(_ value: String, to output: inout String) {
        // Most strings need no escaping: append them whole rather than scalar by scalar.
        var needsEscaping = false
        // (0x7F is DEL; C1 controls start with 0xC2, line separators and direction overrides with 0xE2.)
        for byte in value.utf8
        where byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F || byte == 0xC2 || byte == 0xE2 {
            needsEscaping = true
            break
        }
        output += "\""
        if !needsEscaping {
            output += value
            output += "\""
            return
        }
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            case "\u{2028}": output += "\\u2028"
            case "\u{2029}": output += "\\u2029"
            default:
                // C0 controls must be escaped; DEL, C1 controls and direction overrides are too, so that a
                // string written into a line of output can never act on the terminal or model that reads it.
                if scalar.value < 0x20 || DisplayText.isUnsafe(scalar) {
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }
}
