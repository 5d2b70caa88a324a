import Foundation
import ReplicaSQLite

// How SQLite's errors leave the catalog and the record stores: as `ReplicaError`s with code `storage`, in
// the words `SQLiteError.explanation` gives a person (what failed, what is intact, what to do), with the
// SQLite error as the cause. What the store decides from one (a full disk) it asks through
// ``StorageFailure``, never through SQLite's codes.

extension SQLiteError: StorageFailure {
    /// Whether the disk (or the shared-memory file beside the database) had no room.
    package var isOutOfSpace: Bool { code.isOutOfSpace }

    /// The result code in words and its number, such as `database is locked (5)`.
    package var summary: String { code.description }

    /// The error as the layers above the storage see it.
    var storageError: ReplicaError {
        ReplicaError(.storage, explanation, cause: self)
    }
}

/// Runs `body`, turning a ``SQLiteError`` it throws into a ``ReplicaError`` with code `storage`; any other
/// error passes through as it is.
func translatingSQLiteErrors<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as SQLiteError {
        throw error.storageError
    }
}

extension Database {
    /// ``writeNow(_:)`` with SQLite's errors turned into ``ReplicaError``s.
    @available(*, noasync, message: "it waits on SQLite; in async code run it in Blocking.run")
    func writeStorage<T>(_ body: (Connection) throws -> T) throws -> T {
        try translatingSQLiteErrors { try writeNow(body) }
    }

    /// ``readNow(_:)`` with SQLite's errors turned into ``ReplicaError``s.
    @available(*, noasync, message: "it waits on SQLite; in async code run it in Blocking.run")
    func readStorage<T>(_ body: (Connection) throws -> T) throws -> T {
        try translatingSQLiteErrors { try readNow(body) }
    }
}
