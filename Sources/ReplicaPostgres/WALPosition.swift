/// A position in a PostgreSQL server's write-ahead log (an LSN, written `16/B374D848`): what a standby
/// has replayed up to, and what it must reach to show a transaction committed on its primary.
public struct WALPosition: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// The position as one number: the part before the slash in the high 32 bits.
    public let value: UInt64

    /// Makes a position from its number.
    public init(_ value: UInt64) { self.value = value }

    /// Reads a position as the server writes it (`pg_lsn` as text: two hexadecimal numbers with a slash);
    /// `nil` for anything else.
    public init?(text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let high = UInt32(parts[0], radix: 16), let low = UInt32(parts[1], radix: 16) else {
            return nil
        }
        value = UInt64(high) << 32 | UInt64(low)
    }

    /// The server's way of writing it.
    public var description: String {
        String(value >> 32, radix: 16, uppercase: true) + "/" + String(value & 0xFFFF_FFFF, radix: 16, uppercase: true)
    }

    public static func < (a: WALPosition, b: WALPosition) -> Bool { a.value < b.value }
}
