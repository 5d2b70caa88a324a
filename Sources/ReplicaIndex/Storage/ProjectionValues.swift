import Foundation
import ReplicaCore

/// A record that could not be projected, as `replica status` and `records import` report it.
public struct QuarantinedRecord: Sendable, Equatable {
    /// The account the record belongs to.
    public var account: AccountID
    /// The record's kind.
    public var kind: String
    /// The record's id within its kind.
    public var id: String
    /// The version of the record that could not be projected.
    public var version: Int64
    /// What was wrong: fields and types, never content.
    public var reason: String

    /// Creates a quarantine entry.
    public init(account: AccountID, kind: String, id: String, version: Int64, reason: String) {
        self.account = account
        self.kind = kind
        self.id = id
        self.version = version
        self.reason = reason
    }
}

/// Where a projection kind stands: the version its items were made with, and a rebuild in progress.
package struct ProjectionState: Equatable {
    package var version: Int
    package var targetVersion: Int?
    package var cursor: String?

    package init(version: Int, targetVersion: Int?, cursor: String?) {
        self.version = version
        self.targetVersion = targetVersion
        self.cursor = cursor
    }
}
