/// A `tsvector` in PostgreSQL's binary format (what `tsvectorrecv` reads), made on the client: the
/// server copies it as it is, with none of the text input's parsing, sorting and merging.
///
/// What the text input would fix, this type leaves to its caller: lexemes are unique and contain no
/// U+0000 (``PostgresValue/storedUTF8(_:)`` makes sure of that), and each lexeme's positions rise.
/// ``binary(_:)`` sorts the lexemes into the server's order (their bytes, as `memcmp` orders them).
///
/// For example:
/// ```swift
/// let words = PostgresTSVector.binary([
///     (lexeme: Array("plan".utf8), positions: [PostgresTSVector.position(2, weight: .a)]),
///     (lexeme: Array("launch".utf8), positions: [PostgresTSVector.position(1, weight: .a)]),
/// ])
/// // a parameter `.bytes(words)` for `$1::tsvector`, or an element of a `tsvector[]`
/// ```
public enum PostgresTSVector {
    /// A position's weight: A to D, as `setweight` names them.
    public enum Weight: UInt16, Sendable {
        case a = 3, b = 2, c = 1, d = 0
    }

    /// The largest position a `tsvector` holds; the text input stores later ones as this.
    public static let maximumPosition = 16_383
    /// The most positions one lexeme keeps.
    public static let maximumPositions = 256
    /// The longest lexeme, in bytes.
    public static let maximumLexemeBytes = 2_046

    /// A position with its weight, as the binary format holds it (the weight in the top two bits).
    /// Positions past ``maximumPosition`` are stored as it.
    @inline(__always)
    public static func position(_ position: Int, weight: Weight) -> UInt16 {
        (weight.rawValue << 14) | UInt16(min(max(position, 1), maximumPosition))
    }

    /// The position part of a stored position.
    @inline(__always)
    public static func place(of stored: UInt16) -> Int { Int(stored & 0x3fff) }

    /// The `tsvector` of these lexemes (unique, each with its rising positions, at most
    /// ``maximumPositions`` of them), sorted into the server's order.
    public static func binary(_ entries: [(lexeme: [UInt8], positions: [UInt16])]) -> [UInt8] {
        let order = entries.indices.sorted { entries[$0].lexeme.lexicographicallyPrecedes(entries[$1].lexeme) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4 + entries.reduce(0) { $0 + $1.lexeme.count + 3 + 2 * $1.positions.count })
        PostgresBinaryArray.append(Int32(entries.count), to: &bytes)
        for index in order {
            let entry = entries[index]
            bytes += entry.lexeme
            bytes.append(0)
            PostgresBinaryArray.append(UInt16(entry.positions.count), to: &bytes)
            for position in entry.positions { PostgresBinaryArray.append(position, to: &bytes) }
        }
        return bytes
    }
}
