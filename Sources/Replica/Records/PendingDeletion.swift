public import Foundation

/// A deletion from an index still to be done.
public struct PendingDeletion: Sendable, Equatable {
    /// What to delete: one item by its identifier, or every item in a domain and the domains under it.
    public enum Target: Sendable, Equatable {
        /// The one item with this identifier.
        case identifier(ItemIdentifier)
        /// Every item in this domain and in the domains under it.
        case domain(DomainIdentifier)
    }

    /// The named index to delete from.
    public var indexName: String
    /// What to delete.
    public var target: Target
    /// How many retries have failed so far (0 when only the first try has).
    public var attempts: Int
    /// When the deletion is next due to be retried.
    public var nextAttempt: Date
    /// The last failure, in words (never content).
    public var lastError: String?

    /// Makes a queued deletion as a record storage reads it.
    package init(indexName: String, target: Target, attempts: Int, nextAttempt: Date, lastError: String?) {
        self.indexName = indexName
        self.target = target
        self.attempts = attempts
        self.nextAttempt = nextAttempt
        self.lastError = lastError
    }
}

extension PendingDeletion.Target {
    /// The target as it is stored and shown: its kind (`identifier` or `domain`) and its value.
    package var storedParts: (kind: String, value: String) {
        switch self {
        case .identifier(let identifier): ("identifier", identifier.rawValue)
        case .domain(let domain): ("domain", domain.rawValue)
        }
    }

    /// The target a stored kind and value name (anything but `domain` is an identifier).
    package init(storedKind kind: String, value: String) {
        self = kind == "domain" ? .domain(DomainIdentifier(value)) : .identifier(ItemIdentifier(value))
    }
}
