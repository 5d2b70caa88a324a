import ReplicaCore
import ReplicaIndex
import ReplicaPostgres

/// The check every transaction on an account's rows makes first, in the transaction itself: that the
/// account is still signed in under the sign-in its storage was opened with (`replica.accounts`).
///
/// A write takes a share lock on the account's catalog row. Recording a sign-out updates that row, so it
/// waits for every write that passed the check to commit, and every write that starts after it was
/// recorded fails the check: nothing is ever written into an account being removed, as on SQLite, where
/// the check holds the file's write lock.
package enum PostgresSignIn {
    /// Names the account for the transaction's row-level policies (`replica.account`) and fails with
    /// ``ReplicaError/Code/accountNotSignedIn`` unless it is signed in under `generation`: one statement,
    /// one round trip. With no row that passes, this throws, and the transaction's rollback discards
    /// any setting made (it is the transaction's own, `set_config(…, true)`).
    ///
    /// - Parameter locking: hold the account's catalog row until the transaction ends (writes).
    /// - Returns: the account's partitions, in the same round trip.
    @discardableResult
    package static func nameAndCheck(_ account: AccountID, generation: Int64, on connection: PostgresConnection, locking: Bool) throws
        -> AccountPartitions {
        let found = try connection.execute(
            "SELECT set_config('replica.account', $1, true), replica.partition_name('', $1) FROM replica.accounts "
                + "WHERE account = $1 AND generation = $2 AND state = 'signedIn'" + (locking ? " FOR SHARE" : ""),
            [.text(account.rawValue), .int(generation)])
        guard found.rowCount == 1, let suffix = found.string(0, 1) else { throw ReplicaError.signedOutSinceOpened(account) }
        return AccountPartitions(suffix: suffix)
    }

    /// Names the account for the transaction's row-level policies (`replica.account`).
    ///
    /// - Returns: the account's partitions, in the same round trip.
    @discardableResult
    package static func name(_ account: AccountID, on connection: PostgresConnection) throws -> AccountPartitions {
        let named = try connection.execute("SELECT set_config('replica.account', $1, true), replica.partition_name('', $1)",
                                           [.text(account.rawValue)])
        return AccountPartitions(suffix: named.string(0, 1) ?? "")
    }
}

/// The names of one account's own partitions of the tables keyed by account (`replica.partition_name`).
///
/// A read names the partition rather than the parent table: PostgreSQL then plans it as one table,
/// where a statement on the parent is planned over the list of every account's partitions (0.37 against
/// 0.13 ms to plan reading the best items, among 1,000 accounts), and a prepared one is at times planned
/// for all of them at once, to compare (0.2–0.6 s). Each partition has the parent's row-level policy,
/// enabled and forced (migration 0003). The statements still name the account, for Citus's routing.
package struct AccountPartitions: Sendable {
    /// What `replica.partition_name` adds to a table's name for this account: `_` and a hash of it.
    let suffix: String

    /// The account's partition of `table` (one of `replica.partitioned_tables()`), qualified.
    package func callAsFunction(_ table: String) -> String { "replica." + table + suffix }
}

/// Runs `body`, turning a ``PostgresError`` it throws into a ``ReplicaError`` with code `storage`, in the
/// client's words (never row data), with the client's error as the cause; any other error passes through.
package func translatingPostgresErrors<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as PostgresError {
        throw ReplicaError(.storage, error.message, cause: error)
    }
}
