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

    /// Runs `body`, a transaction of the account's opened under sign-in `generation`, and ends it as
    /// signed out (``ReplicaError/Code/accountNotSignedIn``) when it fails for want of one of the account's
    /// partitions and the account is no longer signed in under `generation`.
    ///
    /// A read names the account's partitions, and a sign-out that commits after the read checked its
    /// sign-in drops them (a write holds off the sign-out until it commits): the read ends as one begun
    /// after the sign-out would, not with "relation does not exist".
    package static func endingAsSignedOut<T>(_ account: AccountID, generation: Int64?, on connection: PostgresConnection,
                                             _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PostgresError where error.isUndefinedTable {
            guard let generation else { throw error }
            let signedIn = try connection.execute(
                "SELECT 1 FROM replica.accounts WHERE account = $1 AND generation = $2 AND state = 'signedIn'",
                [.text(account.rawValue), .int(generation)]).rowCount == 1
            if signedIn { throw error }
            throw ReplicaError.signedOutSinceOpened(account)
        }
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

/// One account's own partitions of the tables keyed by account (`replica.partition_name`), and how a
/// statement is run on them.
///
/// replica's SQL names the parent tables (`replica.items`); ``run(_:_:on:)`` runs it on the account's
/// partitions (`replica.items_<hash>`) instead. PostgreSQL then plans each statement as one on a plain
/// table, where a statement on a parent is planned over the list of every account's partitions:
/// - among 1,000 accounts, 0.37 against 0.13 ms to plan reading a search's best items;
/// - a prepared statement is now and then planned for all the partitions at once, to compare
///   (0.2–0.6 s);
/// - and each sign-in or sign-out, which adds or drops partitions, makes every session read the list
///   of partitions anew at its next statement on each parent (71 ms for one statement at 1,000
///   accounts).
///
/// Each partition has its parent's row-level policy, enabled and forced (migration 0003), and the
/// statements still name the account, for Citus's routing.
package struct AccountPartitions: Sendable {
    /// What `replica.partition_name` adds to a table's name for this account: `_` and a hash of it.
    let suffix: String

    /// The tables that have a partition per account: `replica.partitioned_tables()`.
    package static let tables: Set<Substring> = [
        "items", "vectors", "enrichment", "activities", "records", "index_statistics", "content_types", "client_state", "meta",
        "checkpoints", "projections", "tombstones", "quarantine", "source_entries", "embedded", "changes", "record_logs",
        "pending_deletions", "record_counters",
    ]

    /// `sql` with each partitioned table it names as `replica.<table>` replaced by the account's
    /// partition, given the table's name as its alias where the statement gives none (`replica.items`
    /// becomes `replica.items_<hash> AS items`, so `items.id` still means it); the rest (functions such
    /// as `replica.items_matching`, other tables) as it is. A statement gives its own alias with `AS`.
    package func naming(_ sql: String) -> String {
        var named = ""
        named.reserveCapacity(sql.utf8.count + 64)
        var rest = sql[...]
        while let found = rest.range(of: "replica.") {
            named += rest[..<found.upperBound]
            rest = rest[found.upperBound...]
            let name = rest.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
            named += name
            rest = rest[name.endIndex...]
            guard Self.tables.contains(name) else { continue }
            named += suffix
            let next = rest.drop { $0.isWhitespace }.prefix(3).uppercased()
            if !(next.hasPrefix("AS") && (next.count == 2 || next.last!.isWhitespace)) { named += " AS " + name }
        }
        return named + rest
    }

    /// Runs `sql`, written for the parent tables, on the account's partitions, as a varying statement
    /// (``PostgresConnection/executeVarying(_:_:)``), since its text is now the account's own: unprepared
    /// the first time, prepared and reused when the connection runs it again.
    @discardableResult
    package func run(_ sql: String, _ arguments: [PostgresValue], on connection: PostgresConnection) throws -> PostgresResult {
        try connection.executeVarying(naming(sql), arguments)
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
