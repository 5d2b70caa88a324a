import Foundation
import ReplicaCore

/// What a source saw of one of its entries: a file, a plugin's record.
public struct SourceEntry: Sendable, Equatable, Hashable {
    /// The source's own key, such as a path within the root.
    public var key: String
    /// The source's fingerprint of the entry (size, modification time and inode for a file).
    public var stamp: String
    /// Why the entry made no item, if it did not.
    public var skipReason: String?

    /// Creates an entry from its key, its stamp and, if it made no item, why.
    public init(key: String, stamp: String, skipReason: String? = nil) {
        self.key = key
        self.stamp = stamp
        self.skipReason = skipReason
    }
}
