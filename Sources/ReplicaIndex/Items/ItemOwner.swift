import Foundation

/// Who made an item, and so the only one that may change or delete it (the index refuses everyone
/// else). Stored in the index as its ``rawValue``.
///
/// For example:
/// ```swift
/// ItemOwner.source("docs").rawValue          // "source:docs"
/// ItemOwner(rawValue: "records") == .records  // true
/// ```
public enum ItemOwner: Hashable, Sendable, CustomStringConvertible {
    /// A host that indexed items itself, through ``SearchableIndex`` or `replica import`.
    case api
    /// The record store's projection.
    case records
    /// A named source (a file tree, a git repository, a plugin).
    case source(String)
    /// A table of an app's own database followed through triggers: `<database path>#<table>`.
    case table(String)
    /// A search-eligible user activity that is about no indexed item (``UserActivity``).
    case activities
    /// An owner this version of replica does not know (written by a newer one); it owns its items all
    /// the same.
    case other(String)

    /// Reads an owner from its stored form: `api`, `records`, `activities`, `source:<name>` or `table:<name>`;
    /// any other text becomes ``other(_:)``.
    public init(rawValue: String) {
        switch rawValue {
        case "api": self = .api
        case "records": self = .records
        case "activities": self = .activities
        case _ where rawValue.hasPrefix("source:"): self = .source(String(rawValue.dropFirst("source:".count)))
        case _ where rawValue.hasPrefix("table:"): self = .table(String(rawValue.dropFirst("table:".count)))
        default: self = .other(rawValue)
        }
    }

    /// The owner's stored form, as ``init(rawValue:)`` reads it.
    public var rawValue: String {
        switch self {
        case .api: "api"
        case .records: "records"
        case .activities: "activities"
        case .source(let name): "source:" + name
        case .table(let name): "table:" + name
        case .other(let raw): raw
        }
    }

    /// The owner's stored form.
    public var description: String { rawValue }
}

/// Who made an item and from what: shown to models as provenance, used to remove a source's items.
public struct ItemOrigin: Hashable, Sendable {
    /// Who made the item, and so who may change or delete it.
    public var owner: ItemOwner
    /// The version of the thing the item was built from: a record version, a commit, a file stamp.
    public var version: String?

    /// Creates an origin from an owner and, optionally, the version the item was built from.
    public init(owner: ItemOwner, version: String? = nil) {
        self.owner = owner
        self.version = version
    }

    /// Items a host indexed directly.
    public static let api = ItemOrigin(owner: .api)
}
