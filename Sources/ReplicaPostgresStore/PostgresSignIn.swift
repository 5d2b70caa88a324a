import ReplicaCore
package import ReplicaIndex
package import ReplicaPostgres

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
    package static func nameAndCheck(
        _ account: AccountID, generation: Int64, on connection: PostgresConnection, locking: Bool
    ) throws
        -> AccountPartitions
    {
        let found = try connection.execute(
            "SELECT set_config('replica.account', $1, true), replica.partition_name('', $1) FROM replica.accounts "
                + "WHERE account = $1 AND generation = $2 AND state = 'signedIn'" + (locking ? " FOR SHARE" : ""),
            [.text(account.rawValue), .int(generation)])
        guard found.rowCount == 1, let suffix = found.string(0, 1) else {
            throw ReplicaError.signedOutSinceOpened(account)
        }
        return AccountPartitions(suffix: suffix)
    }

    /// Runs `body`, a transaction of the account's opened under sign-in `generation`, and ends it as
    /// signed out (``ReplicaError/Code/accountNotSignedIn``) when it fails for want of one of the account's
    /// partitions and the account is no longer signed in under `generation`.
    ///
    /// A read names the account's partitions, and a sign-out that commits after the read checked its
    /// sign-in drops them (a write holds off the sign-out until it commits): the read ends as one begun
    /// after the sign-out would, not with "relation does not exist".
    package static func endingAsSignedOut<T>(
        _ account: AccountID, generation: Int64?, on connection: PostgresConnection,
        _ body: () throws -> T
    ) throws -> T {
        do {
            return try body()
        } catch let error as PostgresError where error.isUndefinedTable {
            guard let generation else { throw error }
            let signedIn =
                try connection.execute(
                    "SELECT 1 FROM replica.accounts WHERE account = $1 AND generation = $2 AND state = 'signedIn'",
                    [.text(account.rawValue), .int(generation)]
                ).rowCount == 1
            if signedIn { throw error }
            throw ReplicaError.signedOutSinceOpened(account)
        }
    }

    /// Names the account for the transaction's row-level policies (`replica.account`).
    ///
    /// - Returns: the account's partitions, in the same round trip.
    @discardableResult
    package static func name(_ account: AccountID, on connection: PostgresConnection) throws -> AccountPartitions {
        let named = try connection.execute(
            "SELECT set_config('replica.account', $1, true), replica.partition_name('', $1)",
            [.text(account.rawValue)])
        return AccountPartitions(suffix: named.string(0, 1) ?? "")
    }
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
