import Foundation

/// What writing records did.
public struct RecordWriteSummary: Sendable, Equatable {
    /// Records stored (new, newer versions, or tombstones).
    public var written = 0
    /// Deliveries of a version older than the one held: normal sync traffic, ignored.
    public var ignoredOlder = 0
    /// Deliveries of exactly the version held (replays): nothing to do.
    public var unchanged = 0

    /// Creates an empty summary: nothing written.
    public init() {}

    /// Adds two summaries count by count.
    public static func + (lhs: Self, rhs: Self) -> Self {
        var sum = lhs
        sum.written += rhs.written
        sum.ignoredOlder += rhs.ignoredOlder
        sum.unchanged += rhs.unchanged
        return sum
    }

    /// The rule every record storage writes by: a delivery older than the version held is counted in
    /// ``ignoredOlder``, the same version again in ``unchanged``; either way it is not stored.
    ///
    /// - Parameter stored: the version the storage holds, `nil` when it has none.
    /// - Returns: whether `record` is to be stored (and counted in ``written`` once it is).
    package mutating func admits(_ record: Record, over stored: Int64?) -> Bool {
        guard let stored else { return true }
        if record.version < stored { ignoredOlder += 1 }
        if record.version == stored { unchanged += 1 }
        return record.version > stored
    }
}

extension Record {
    /// The readers as a storage keeps them: a JSON array of account IDs, `nil` for the owner alone.
    package var storedReaders: String? {
        readers.map { JSON.array($0.map { .string($0.rawValue) }).serialized() }
    }

    /// The fields as a storage keeps them: a JSON object, `{}` for a tombstone.
    package var storedFields: String {
        isDeleted ? "{}" : JSON.object(fields).serialized()
    }
}

/// One entry of an account's change log.
package struct Change: Sendable, Equatable {
    /// Its place in the log: greater than every entry's before it.
    package var sequence: Int64
    /// The kind of the record that changed.
    package var kind: String
    /// The record's id within its kind.
    package var id: String
    /// The version the record was written with.
    package var version: Int64

    /// Makes an entry as a record storage reads it.
    package init(sequence: Int64, kind: String, id: String, version: Int64) {
        self.sequence = sequence
        self.kind = kind
        self.id = id
        self.version = version
    }
}
