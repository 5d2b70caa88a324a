import Foundation
import ReplicaCore
package import ReplicaPostgres

/// replica's tables in a PostgreSQL database: the schema `replica`, brought to the newest version at
/// open by the numbered files of `migrations/postgres/`, one transaction each.
///
/// Whoever applies them owns what they create. Run as the role an operator set up to own the schema (the
/// README's `replica_owner`, which may bypass row-level security in the search functions it owns), once
/// per upgrade; the role the app connects as (`replica_app`) then finds the schema current. A schema
/// newer than this replica knows is refused, never guessed at.
///
/// A migration that adds a table keyed by account makes its partitions for the accounts already there,
/// as 0004 does: an index that exists is opened by a read, which takes its account's partitions as made.
package enum PostgresSchema {
    /// The migrations, in order.
    static let migrations = EmbeddedMigrations.postgres

    /// The newest version this replica knows.
    package static var newestVersion: Int { migrations.map(\.version).max() ?? 0 }

    /// The version the database's schema is at: 0 when replica's schema is not there.
    package static func version(_ connection: PostgresConnection) throws -> Int {
        let exists = try connection.execute("SELECT to_regclass('replica.migrations') IS NOT NULL").bool(0, 0) ?? false
        guard exists else { return 0 }
        return Int(try connection.execute("SELECT coalesce(max(version), 0) FROM replica.migrations").int(0, 0) ?? 0)
    }

    /// Applies the migrations the database lacks.
    ///
    /// Processes that open the same database at once take turns (a transaction-level advisory lock):
    /// each migration is applied once.
    ///
    /// - Throws: ``ReplicaError`` `newerSchema` for a schema newer than this replica knows; `storage`,
    ///   in words, when the role cannot create what a migration needs.
    package static func migrate(_ connection: PostgresConnection) throws {
        let known = newestVersion
        let current = try version(connection)
        if current > known { throw newer(current, known) }
        guard current < known else { return }
        // The owner of the schema must be able to bypass the policies, or the search functions it owns would
        // run under them and lose the GIN index; and a role that owns the tables could turn their policies
        // off. So the role the app connects as never creates them.
        let bypasses =
            try connection.execute("SELECT rolbypassrls OR rolsuper FROM pg_roles WHERE rolname = current_user").bool(
                0, 0) ?? false
        guard bypasses else {
            throw ReplicaError(
                .storage,
                "the database's replica schema is at version \(current) and this replica needs version \(known), "
                    + "which the role '\(connection.userName)' must not create: the schema's owner may bypass row-level security and the "
                    + "role replica searches with must not. Open the database once as the owner role (the README's replica_owner, "
                    + "BYPASSRLS), for example with 'replica --database OWNER-URL status', then connect as '\(connection.userName)' again"
            )
        }
        do {
            try connection.transaction {
                // 0x5250_4C50: "RPLP", replica's PostgreSQL schema.
                try connection.execute("SELECT pg_advisory_xact_lock(1380994128)")
                try connection.executeScript(
                    """
                    CREATE SCHEMA IF NOT EXISTS replica;
                    CREATE TABLE IF NOT EXISTS replica.migrations (
                        version integer PRIMARY KEY,
                        name text NOT NULL,
                        applied timestamptz NOT NULL DEFAULT now()
                    );
                    """)
                let applied = try version(connection)
                if applied > known { throw newer(applied, known) }
                for migration in migrations.sorted(by: { $0.version < $1.version }) where migration.version > applied {
                    try connection.executeScript(migration.sql)
                    try connection.execute(
                        "INSERT INTO replica.migrations(version, name) VALUES ($1, $2)",
                        [.int(Int64(migration.version)), .text(migration.name)])
                }
            }
        } catch let error as PostgresError where error.code == .insufficientPrivilege {
            throw ReplicaError(
                .storage,
                "the database's replica schema is at version \(current) and this replica needs version "
                    + "\(known), but the role '\(connection.userName)' may not create it: open the database once as the role that owns "
                    + "the schema (the README's replica_owner), for example with 'replica --database OWNER-URL status', then connect as "
                    + "'\(connection.userName)' again (\(error.message))", cause: error)
        }
    }

    private static func newer(_ version: Int, _ known: Int) -> ReplicaError {
        ReplicaError(
            .newerSchema,
            "the database's replica schema is at version \(version), newer than this replica knows (\(known)): "
                + "upgrade replica; nothing was changed")
    }
}

extension PostgresSchema {
    /// The functions the role the app connects as calls, and the only ones of the schema it may: the
    /// partitions' names (`partition_name`, run as the caller), and, run as the schema's owner, making and
    /// dropping the partitions of the account the transaction names (`add_account`, `remove_account`),
    /// sampling its ranking lists' numbers and the four searches, each on that account's partitions only.
    /// Migration 0010 grants them to the roles the schema's tables are given to; a migration that adds
    /// one the app calls grants it the same way and adds it here (0014 gave `ranked_matches` its weights, 0015
    /// the word of each term).
    package static let appFunctions = [
        "replica.partition_name(text, text)",
        "replica.add_account()",
        "replica.remove_account()",
        "replica.analyze_ranking_lists()",
        "replica.items_matching(text, tsquery)",
        "replica.items_matching_counts(text, tsquery[])",
        "replica.ranked_matches(text, tsquery[], boolean, float8, integer, float8, float8, float8, float8, "
            + "text[], text[], text[], text[], text[], text[], float8, float8, float8, float8, float8[], integer[])",
        "replica.unlisted_postings(text, text[], tsquery[], integer)",
    ]

    /// What an operator grants the role the app connects as, once the schema is there (docs/postgres.md
    /// shows the set-up that does the same through default privileges): it may read and write replica's
    /// tables, under their row-level security, and call ``appFunctions``; it owns nothing, may not bypass
    /// the policies, and may call none of the owner's helpers.
    package static func grants(to role: String) -> String {
        let role = "\"" + role.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        return """
            GRANT USAGE ON SCHEMA replica TO \(role);
            GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA replica TO \(role);
            GRANT USAGE ON ALL SEQUENCES IN SCHEMA replica TO \(role);
            GRANT EXECUTE ON FUNCTION \(appFunctions.joined(separator: ", ")) TO \(role);
            """
    }
}
