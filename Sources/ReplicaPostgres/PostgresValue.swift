/// A value sent to PostgreSQL as a statement's parameter or a `COPY` field, or read back from a result.
///
/// Parameters are always bound, never spliced into the SQL text. Every kind but ``bytes(_:)`` travels in
/// PostgreSQL's text format, which the server reads as the type it infers for the parameter (an `int`
/// column takes `.int(42)`, a `bigint` `.text("42")` too); ``bytes(_:)`` travels in the binary format, so
/// its parameter must be a `bytea` (write `$1::bytea` where the server cannot infer it).
///
/// For example:
/// ```swift
/// let values: [PostgresValue] = ["été", 42, 2.5, .bytes([0, 255]), .bool(true), nil]
/// ```
public enum PostgresValue: Sendable, Hashable {
    /// SQL `NULL`.
    case null
    /// Text, sent as its UTF-8 bytes. PostgreSQL's text cannot hold U+0000, so it travels escaped (see
    /// ``nulEscape``) and ``PostgresResult/string(_:_:)`` reads it back: every Swift string round-trips.
    case text(String)
    /// A 64-bit signed integer.
    case int(Int64)
    /// An 8-byte floating-point number; infinities and NaN included.
    case double(Double)
    /// Bytes for a `bytea`, exactly as given (sent in the binary format).
    case bytes([UInt8])
    /// A boolean.
    case bool(Bool)
}

extension PostgresValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    /// Makes a text value from a string literal.
    public init(stringLiteral value: String) { self = .text(value) }
    /// Makes an integer value from an integer literal.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// Makes a floating-point value from a literal.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// Makes a boolean value from a literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// Makes SQL NULL from `nil`.
    public init(nilLiteral: ()) { self = .null }
}

extension PostgresValue {
    /// Makes a text value, or NULL when `value` is `nil`.
    public init(_ value: String?) { self = value.map(PostgresValue.text) ?? .null }
    /// Makes an integer value, or NULL when `value` is `nil`.
    public init(_ value: Int?) { self = value.map { .int(Int64($0)) } ?? .null }
    /// Makes an integer value, or NULL when `value` is `nil`.
    public init(_ value: Int64?) { self = value.map(PostgresValue.int) ?? .null }
    /// Makes a floating-point value, or NULL when `value` is `nil`.
    public init(_ value: Double?) { self = value.map(PostgresValue.double) ?? .null }
    /// Makes a `bytea` value, or NULL when `value` is `nil`.
    public init(_ value: [UInt8]?) { self = value.map(PostgresValue.bytes) ?? .null }

    /// The value in PostgreSQL's text format (what its input functions read), or `nil` for NULL and for
    /// bytes, which travel in the binary format.
    var textFormat: String? {
        switch self {
        case .null, .bytes: return nil
        case .text(let text): return text
        case .int(let number): return String(number)
        case .double(let number): return Self.textFormat(number)
        case .bool(let truth): return truth ? "t" : "f"
        }
    }

    /// A double as `float8in` reads it back exactly: Swift's shortest round-tripping digits, and
    /// PostgreSQL's own words for the infinities and NaN.
    static func textFormat(_ number: Double) -> String {
        if number.isNaN { return "NaN" }
        if number.isInfinite { return number < 0 ? "-Infinity" : "Infinity" }
        return "\(number)"
    }

    /// A double from `float8out`'s text (shortest exact digits since PostgreSQL 12, `Infinity`, `NaN`).
    static func double(fromTextFormat text: String) -> Double? {
        switch text {
        case "NaN": return .nan
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        default: return Double(text)
        }
    }
}

// MARK: U+0000 in text

extension PostgresValue {
    /// The character that escapes what PostgreSQL's text cannot hold: U+0000 is stored as U+FFFF then
    /// `0`, and U+FFFF itself as U+FFFF then `1`. U+FFFF is a noncharacter, which no text is meant to hold,
    /// so almost every string is stored exactly as it is. The code keeps equality, prefixes and the
    /// order of strings without either character; SQL that works on such a string on the server
    /// (`length`, `substr`, a `LIKE` pattern) sees its escaped form.
    public static let nulEscape: Unicode.Scalar = "\u{FFFF}"

    /// The bytes the server stores for `text`: its UTF-8, with U+0000 and U+FFFF escaped as
    /// ``text(_:)`` escapes them. For values built in a binary format (``PostgresBinaryArray``,
    /// ``PostgresTSVector``), which must match what the same text sent as ``text(_:)`` stores.
    public static func storedUTF8(_ text: String) -> [UInt8] {
        escapedUTF8(text) ?? Array(text.utf8)
    }

    /// `text`'s UTF-8 with U+0000 and U+FFFF escaped, or `nil` when it holds neither (most text), to be
    /// sent as it is.
    static func escapedUTF8(_ text: String) -> [UInt8]? {
        guard holdsEscapedCharacters(text.utf8) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\u{0}": bytes += [0xEF, 0xBF, 0xBF, UInt8(ascii: "0")]
            case nulEscape: bytes += [0xEF, 0xBF, 0xBF, UInt8(ascii: "1")]
            default: bytes += UTF8.encode(scalar)!
            }
        }
        return bytes
    }

    /// Whether UTF-8 text holds U+0000 or U+FFFF (EF BF BF).
    static func holdsEscapedCharacters(_ utf8: some Sequence<UInt8>) -> Bool {
        var last: UInt8 = 0x20
        var beforeLast: UInt8 = 0x20
        for byte in utf8 {
            if byte == 0 || (byte == 0xBF && last == 0xBF && beforeLast == 0xEF) { return true }
            beforeLast = last
            last = byte
        }
        return false
    }

    /// Text read back from the server, its escapes undone. A U+FFFF at the very end with nothing after
    /// it is what is left of an escape that a server-side `substr` cut in two, and is dropped.
    static func unescaping(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        guard holdsEscapedCharacters(bytes) else { return text }
        var scalars = String.UnicodeScalarView()
        var rest = text.unicodeScalars[...]
        while let scalar = rest.popFirst() {
            guard scalar == nulEscape else {
                scalars.append(scalar)
                continue
            }
            switch rest.first {
            case nil: break
            case "0"?:
                scalars.append("\u{0}")
                rest.removeFirst()
            case "1"?:
                scalars.append(nulEscape)
                rest.removeFirst()
            default: scalars.append(scalar)
            }
        }
        return String(scalars)
    }
}
