import Foundation
import ReplicaCore

/// The identifier of an account: every item, record and source belongs to one.
///
/// Any non-empty text without control characters, up to 256 bytes (an email address, a UUID, …).
///
/// For example:
/// ```swift
/// let alice: AccountID = "alice@example.com"
/// ```
public struct AccountID: RawRepresentable, Hashable, Comparable, Sendable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    /// The account's identifier text.
    public let rawValue: String

    /// Creates an account ID from its text, without validating it (see ``validate()``).
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates an account ID from its text, without validating it (see ``validate()``).
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// Creates an account ID from a string literal, without validating it.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// The account's identifier text.
    public var description: String { rawValue }

    /// Orders account IDs by their text.
    public static func < (lhs: AccountID, rhs: AccountID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Checks that the identifier can name an account.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidArgument` saying what is wrong.
    public func validate() throws {
        if rawValue.isEmpty { throw ReplicaError(.invalidArgument, "an account ID cannot be empty") }
        if rawValue.utf8.count > 256 {
            throw ReplicaError(.invalidArgument, "an account ID can be at most 256 bytes long")
        }
        if rawValue.unicodeScalars.contains(where: {
            $0.properties.generalCategory == .control || DisplayText.isUnsafe($0)
        }) {
            throw ReplicaError(
                .invalidArgument,
                "an account ID cannot contain control characters, line separators or direction overrides")
        }
        // Names that read as paths are refused, though the folder name would be escaped: a person or a
        // script reading "../x" or "." as an account would be misled.
        if rawValue == "." || rawValue == ".." || rawValue.contains("/") {
            throw ReplicaError(
                .invalidArgument,
                "an account ID cannot be '.' or '..' or contain '/'; use a name such as alice or alice@example.com")
        }
        if rawValue.first?.isWhitespace == true || rawValue.last?.isWhitespace == true {
            throw ReplicaError(.invalidArgument, "an account ID cannot begin or end with a space")
        }
    }

    /// The account's folder name in a store: letters, digits, `-` and `_` as they are, every other byte
    /// as `%XX`, so that any ID maps to exactly one safe name.
    package var directoryName: String {
        var name = ""
        for byte in rawValue.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                name.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                name += String(format: "%%%02X", byte)
            }
        }
        return name
    }
}

/// The stable, unique identifier of a searchable item within its index.
///
/// Identifiers are routing keys: keep them stable and free of secret payloads (`note:alice:42`).
public struct ItemIdentifier: RawRepresentable, Hashable, Comparable, Sendable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    /// The item's identifier text.
    public let rawValue: String

    /// Creates an item identifier from its text.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates an item identifier from its text.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// Creates an item identifier from a string literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// The item's identifier text.
    public var description: String { rawValue }

    /// Orders item identifiers by their text.
    public static func < (lhs: ItemIdentifier, rhs: ItemIdentifier) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The longest identifier accepted, in bytes.
    public static let maximumLength = 1024
}

/// A group of items that can be deleted together, such as `account.alice.notes`.
///
/// Domains are hierarchical with `.` between levels: a domain covers itself and every domain under it,
/// so deleting `account.alice` deletes `account.alice.notes` too (but not `account.alicia`).
public struct DomainIdentifier: RawRepresentable, Hashable, Comparable, Sendable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    /// The domain's name, levels separated by `.`.
    public let rawValue: String

    /// Creates a domain identifier from its name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates a domain identifier from its name.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// Creates a domain identifier from a string literal naming it.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// The domain's name.
    public var description: String { rawValue }

    /// Orders domain identifiers by name.
    public static func < (lhs: DomainIdentifier, rhs: DomainIdentifier) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Whether `other` is this domain or lies under it.
    ///
    /// For example:
    /// ```swift
    /// DomainIdentifier("account.a").covers("account.a.notes")  // true
    /// DomainIdentifier("account.a").covers("account.ab")       // false
    /// ```
    public func covers(_ other: DomainIdentifier) -> Bool {
        other.rawValue == rawValue || other.rawValue.hasPrefix(rawValue + ".")
    }

    /// The domain a replica-managed account's kind lives in: `account.<id>.<kind>`.
    public static func account(_ account: AccountID, kind: String? = nil) -> DomainIdentifier {
        DomainIdentifier("account.\(account.rawValue)" + (kind.map { ".\($0)" } ?? ""))
    }
}
