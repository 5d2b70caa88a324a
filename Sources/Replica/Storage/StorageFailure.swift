import Foundation

/// What the store asks of a storage engine's own error, which arrives as the ``ReplicaError/cause`` of a
/// ``ReplicaError`` with code `storage`: the decisions it makes from one, without knowing the engine.
package protocol StorageFailure: Error {
    /// Whether the storage had no room left for the write: a full disk, or whatever the engine's own limit
    /// on space is.
    var isOutOfSpace: Bool { get }

    /// The failure in a few words, for a log line or a queued retry's last error (SQLite: its result code
    /// in words and its number); never content.
    var summary: String { get }

    /// The failure in a sentence or two for a person: what failed, what is intact, what to do; never
    /// content. What a command prints when a storage error reaches it untranslated.
    var explanation: String { get }
}

extension ReplicaError {
    /// Whether the storage underneath failed for want of room, which the store answers by deleting a
    /// leaving account's files before it records the sign-out.
    package var isOutOfSpace: Bool {
        code == .storage && (cause as? any StorageFailure)?.isOutOfSpace == true
    }
}
