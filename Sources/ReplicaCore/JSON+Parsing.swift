import Foundation

/// JSON text that could not be read, with where and why.
public struct JSONParseError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What was wrong, in words.
    public var reason: String
    /// The 1-based column (in bytes) where reading stopped.
    public var column: Int

    /// The reason followed by the column.
    public var description: String { "\(reason) at column \(column)" }
}

extension JSON {
    /// Reads one JSON value from `text`; anything but white space after it is an error.
    ///
    /// - Parameter allowComments: accept `//` line comments and `/* */` block comments, as the
    ///   configuration files do.
    /// - Throws: ``JSONParseError`` saying what was wrong and where.
    public static func parse(_ text: String, allowComments: Bool = false) throws -> JSON {
        var parser = JSONParser(bytes: Array(text.utf8), allowComments: allowComments)
        return try parser.parseDocument()
    }

    /// Reads one JSON value from UTF-8 bytes.
    public static func parse(bytes: [UInt8], allowComments: Bool = false) throws -> JSON {
        var parser = JSONParser(bytes: bytes, allowComments: allowComments)
        return try parser.parseDocument()
    }
}

/// A small recursive-descent reader over UTF-8 bytes (RFC 8259), with a depth limit.
struct JSONParser {
    let bytes: [UInt8]
    let allowComments: Bool
    var position = 0
    var depth = 0
    static let maximumDepth = 256

    init(bytes: [UInt8], allowComments: Bool) {
        self.bytes = bytes
        self.allowComments = allowComments
    }

    func error(_ reason: String) -> JSONParseError {
        JSONParseError(reason: reason, column: position + 1)
    }

    mutating func parseDocument() throws -> JSON {
        try skipWhitespace()
        guard position < bytes.count else { throw error("expected a JSON value but the text is empty") }
        let value = try parseValue()
        try skipWhitespace()
        guard position == bytes.count else { throw error("unexpected text after the JSON value") }
        return value
    }

    mutating func skipWhitespace() throws {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            case UInt8(ascii: "/") where allowComments && position + 1 < bytes.count:
                if bytes[position + 1] == UInt8(ascii: "/") {
                    while position < bytes.count && bytes[position] != 0x0A { position += 1 }
                } else if bytes[position + 1] == UInt8(ascii: "*") {
                    position += 2
                    while position + 1 < bytes.count
                        && !(bytes[position] == UInt8(ascii: "*") && bytes[position + 1] == UInt8(ascii: "/"))
                    {
                        position += 1
                    }
                    guard position + 1 < bytes.count else { throw error("unterminated /* comment") }
                    position += 2
                } else {
                    return
                }
            default: return
            }
        }
    }

    mutating func parseValue() throws -> JSON {
        guard position < bytes.count else { throw error("unexpected end of text") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectWord("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectWord("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectWord("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character '\(Character(Unicode.Scalar(bytes[position])))'")
        }
    }

    mutating func expectWord(_ word: String) throws {
        let utf8 = Array(word.utf8)
        guard position + utf8.count <= bytes.count, Array(bytes[position..<position + utf8.count]) == utf8 else {
            throw error("expected a JSON value (an object, array, string, number, true, false or null)")
        }
        position += utf8.count
    }

    mutating func enter() throws {
        depth += 1
        guard depth <= Self.maximumDepth else { throw error("nested deeper than \(Self.maximumDepth) levels") }
    }

    mutating func parseObject() throws -> JSON {
        try enter()
        defer { depth -= 1 }
        position += 1
        var members: [(String, JSON)] = []
        try skipWhitespace()
        if position < bytes.count && bytes[position] == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        while true {
            try skipWhitespace()
            guard position < bytes.count else { throw error("unterminated object") }
            guard bytes[position] == UInt8(ascii: "\"") else {
                throw error("expected a quoted member name")
            }
            let key = try parseString()
            try skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
                throw error("expected ':' after a member name")
            }
            position += 1
            try skipWhitespace()
            members.append((key, try parseValue()))
            try skipWhitespace()
            guard position < bytes.count else { throw error("unterminated object") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            if bytes[position] == UInt8(ascii: "}") {
                position += 1
                return .object(members)
            }
            throw error("expected ',' or '}' in an object")
        }
    }

    mutating func parseArray() throws -> JSON {
        try enter()
        defer { depth -= 1 }
        position += 1
        var values: [JSON] = []
        try skipWhitespace()
        if position < bytes.count && bytes[position] == UInt8(ascii: "]") {
            position += 1
            return .array(values)
        }
        while true {
            try skipWhitespace()
            values.append(try parseValue())
            try skipWhitespace()
            guard position < bytes.count else { throw error("unterminated array") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            if bytes[position] == UInt8(ascii: "]") {
                position += 1
                return .array(values)
            }
            throw error("expected ',' or ']' in an array")
        }
    }

    mutating func parseString() throws -> String {
        position += 1
        var buffer: [UInt8] = []
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                guard let string = String(validating: buffer, as: UTF8.self) else {
                    throw error("string is not valid UTF-8")
                }
                return string
            case UInt8(ascii: "\\"):
                position += 1
                guard position < bytes.count else { throw error("unterminated escape") }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""): buffer.append(0x22)
                case UInt8(ascii: "\\"): buffer.append(0x5C)
                case UInt8(ascii: "/"): buffer.append(0x2F)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                            bytes[position + 1] == UInt8(ascii: "u")
                        else {
                            throw error("lone UTF-16 surrogate in \\u escape")
                        }
                        position += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid UTF-16 surrogate pair") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw error("lone UTF-16 surrogate in \\u escape")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
                    buffer.append(contentsOf: Array(String(Character(unicode)).utf8))
                default:
                    throw error("unknown escape '\\\(Character(Unicode.Scalar(escape)))'")
                }
            case 0x00..<0x20:
                throw error("control character inside a string (escape it)")
            default:
                buffer.append(byte)
                position += 1
            }
        }
        throw error("unterminated string")
    }

    mutating func parseHex4() throws -> UInt32 {
        guard position + 4 <= bytes.count else { throw error("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("bad hex digit in \\u escape")
            }
            value = value * 16 + digit
            position += 1
        }
        return value
    }

    /// A number; a whole number written without fraction or exponent and beyond what a `Double` holds
    /// exactly is kept as `.integer` when it fits in 64 bits.
    mutating func parseNumber() throws -> JSON {
        let start = position
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        func digits() -> Int {
            let begin = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                position += 1
            }
            return position - begin
        }
        guard digits() > 0 else { throw error("expected digits in a number") }
        var isWhole = true
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isWhole = false
            position += 1
            guard digits() > 0 else { throw error("expected digits after '.'") }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            isWhole = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard digits() > 0 else { throw error("expected digits in an exponent") }
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        if isWhole, let integer = Int64(text), integer.magnitude > 1 << 53 { return .integer(integer) }
        guard let value = Double(text), value.isFinite else { throw error("number out of range") }
        return .number(value)
    }
}
