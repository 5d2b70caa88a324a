package import ReplicaPostgres
import Synchronization

/// One account's own partitions of the tables keyed by account (`replica.partition_name`), and how a
/// statement is run on them.
///
/// replica's SQL names the parent tables (`replica.items`); ``run(_:_:on:)`` runs it on the account's
/// partitions (`replica.items_<hash>`) instead, whose names ``PostgresSignIn`` reads with its check.
/// PostgreSQL then plans each statement as one on a plain table, where a statement on a parent is
/// planned over the list of every account's partitions:
/// - among 1,000 accounts, 0.37 against 0.13 ms to plan reading a search's best items;
/// - a prepared statement is now and then planned for all the partitions at once, to compare
///   (0.2–0.6 s);
/// - and each sign-in or sign-out, which adds or drops partitions, makes every session read the list
///   of partitions anew at its next statement on each parent (71.6 ms at the median to plan one write
///   near 1,000 accounts).
///
/// Each partition has its parent's row-level policy, enabled and forced (migration 0003), and the
/// statements still name the account, for Citus's routing.
package struct AccountPartitions: Sendable {
    /// What `replica.partition_name` adds to a table's name for this account: `_` and a hash of it.
    let suffix: String

    /// The tables that have a partition per account: `replica.partitioned_tables()`.
    package static let tables: Set<Substring> = [
        "items", "vectors", "enrichment", "activities", "records", "index_statistics", "content_types", "client_state",
        "meta",
        "checkpoints", "projections", "tombstones", "quarantine", "source_entries", "embedded", "changes",
        "record_logs",
        "pending_deletions", "record_counters", "ranking_state", "ranking_lists", "ranking_changes", "vocabulary",
        "words_next",
    ]

    /// `sql` with each partitioned table it names as `replica.<table>` replaced by the account's
    /// partition, given the table's name as its alias where the statement gives none (`replica.items`
    /// becomes `replica.items_<hash> AS items`, so `items.id` still means it); the rest (functions such
    /// as `replica.items_matching`, other tables) as it is. A statement gives its own alias with `AS`.
    package func naming(_ sql: String) -> String {
        Self.pieces(of: sql).joined(separator: suffix)
    }

    /// `sql` cut where a partition's suffix goes (the aliases in the pieces after each cut): the same
    /// for every account, so cut once per statement text rather than at every run (searching the
    /// text was a twentieth of a search's time in the client). At most `templateLimit` texts are kept.
    static func pieces(of sql: String) -> [String] {
        if let known = templates.withLock({ $0[sql] }) { return known }
        var pieces: [String] = []
        var piece = ""
        var rest = sql[...]
        while let found = rest.range(of: "replica.") {
            piece += rest[..<found.upperBound]
            rest = rest[found.upperBound...]
            let name = rest.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
            piece += name
            rest = rest[name.endIndex...]
            guard Self.tables.contains(name) else { continue }
            pieces.append(piece)
            piece = ""
            let next = rest.drop { $0.isWhitespace }.prefix(3).uppercased()
            if !(next.hasPrefix("AS") && (next.count == 2 || next.last!.isWhitespace)) { piece += " AS " + name }
        }
        pieces.append(piece + rest)
        templates.withLock { templates in
            if templates.count >= templateLimit { templates.removeAll(keepingCapacity: true) }
            templates[sql] = pieces
        }
        return pieces
    }

    /// Statement texts differ by their filters and numbers of values, so there are a few hundred.
    static let templateLimit = 2_048
    private static let templates = Mutex<[String: [String]]>([:])

    /// Runs `sql`, written for the parent tables, on the account's partitions, as a varying statement
    /// (``PostgresConnection/executeVarying(_:_:)``), since its text is now the account's own: unprepared
    /// the first time, prepared and reused when the connection runs it again.
    @discardableResult
    package func run(_ sql: String, _ arguments: [PostgresValue], on connection: PostgresConnection) throws
        -> PostgresResult
    {
        try connection.executeVarying(naming(sql), arguments)
    }
}
