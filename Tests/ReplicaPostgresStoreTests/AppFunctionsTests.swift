import Foundation
import ReplicaCore
import ReplicaPostgres
import ReplicaTestSupport
import Testing

@testable import ReplicaPostgresStore

/// The role the app connects as may call only the functions replica calls as it, and none of them changes
/// anything but the partitions of the account its transaction names: every function of the schema, called
/// as the app with hostile arguments, leaves the catalog, every policy, every grant and every other
/// account's rows as they were. On databases set up the old way (every function granted to the app) and
/// brought up to date, and on databases set up the documented way now.
@Suite(.enabled(if: PostgresTestServer.isEnabled, "needs a PostgreSQL server (scripts/setup-system.sh installs one)"))
struct AppFunctionsTests {
    /// How the database was set up.
    enum SetUp: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// docs/postgres.md and scripts/postgres.sh before migration 0010: the schema's default privileges
        /// grant the app every function; the schema at 0009, then brought up to date.
        case oldDefaultPrivileges
        /// PostgresSchema.grants before 0010 (the tests' makeMigratedDatabase): `GRANT EXECUTE ON ALL
        /// FUNCTIONS` after migrating to 0009, then brought up to date.
        case oldGrantAllFunctions
        /// docs/postgres.md now: no function granted by the set-up; the migrations grant the app's.
        case documented
        /// PostgresTestServer.makeMigratedDatabase now (the new PostgresSchema.grants).
        case migratedDatabase
        /// The documented set-up, then an operator grants the app every function anyway: the owner's
        /// helpers run as their caller and refuse any table but an account's, so nothing changes still.
        case everythingGrantedAnyway

        var testDescription: String { rawValue }
        var isOld: Bool { self == .oldDefaultPrivileges || self == .oldGrantAllFunctions }
    }

    /// The calling account, signed in like the others: naming it, the app may make and drop its partitions.
    static let caller = "mallory"

    @Test(arguments: SetUp.allCases)
    func everyFunctionWithHostileArgumentsChangesNothing(_ setUp: SetUp) throws {
        let (database, admin) = try Self.makeDatabase(setUp)
        let app = database.parameters["user"] ?? "replica_app"

        if setUp.isOld {
            // The hole, as the issue reports it, then the migration that closes and repairs it.
            let appConnection = try PostgresConnection(url: database.url)
            try appConnection.execute("SELECT replica.protect_partition('accounts')")
            try appConnection.execute("SELECT replica.keep_words_out_of_statistics('sources')")
            #expect(
                try appConnection.execute("SELECT count(*) FROM replica.accounts").int(0, 0) == 0,
                "the old set-up's hole is there")
            let zeroTargets =
                "SELECT count(*) FROM pg_attribute WHERE attrelid IN ('replica.accounts'::regclass, 'replica.sources'::regclass) "
                + "AND attnum > 0 AND attstattarget = 0"
            #expect(try admin.execute(zeroTargets).int(0, 0) ?? 0 > 0, "and the catalog's statistics were turned off")
            try admin.executeScript("SET ROLE replica_owner")
            try PostgresSchema.migrate(admin)
            try admin.executeScript("RESET ROLE")
            #expect(try PostgresSchema.version(admin) == PostgresSchema.newestVersion)
            #expect(
                try appConnection.execute("SELECT count(*) FROM replica.accounts").int(0, 0) == 3,
                "0010 took the policy off the catalog")
            #expect(try admin.execute(zeroTargets).int(0, 0) == 0, "0010 gave the catalog its statistics back")
        }
        if setUp == .everythingGrantedAnyway {
            try admin.executeScript("GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA replica TO \(app)")
        } else {
            // What the app may call: exactly its functions.
            let callable = try Self.strings(
                admin.execute(
                    """
                    SELECT p.oid::regprocedure::text FROM pg_proc p
                    WHERE p.pronamespace = 'replica'::regnamespace AND has_function_privilege($1, p.oid, 'EXECUTE') ORDER BY 1
                    """, [.text(app)]))
            let expected = try Self.strings(
                admin.execute(
                    "SELECT f::regprocedure::text FROM unnest($1::text[]) AS f ORDER BY 1",
                    [.text(Self.arrayLiteral(PostgresSchema.appFunctions))]))
            #expect(callable == expected)
        }

        let before = try Self.snapshot(admin)
        var calls = 0
        var refused = 0
        // The account named, an empty name, and none at all.
        for named in [Self.caller, "", nil] as [String?] {
            let connection = try PostgresConnection(url: database.url)
            if let named { try connection.execute("SELECT set_config('replica.account', $1, false)", [.text(named)]) }
            for call in try Self.hostileCalls(admin) {
                calls += 1
                do { try connection.execute(call.sql, call.parameters) } catch is PostgresError { refused += 1 }
            }
        }
        let after = try Self.snapshot(admin)
        #expect(calls > 300 && refused > 0)
        let changes =
            Set(before).subtracting(after).sorted().map { "- " + $0 }
            + Set(after).subtracting(before).sorted().map { "+ " + $0 }
        #expect(after == before, "changed by the app's calls: \(changes)")
        #expect(
            try PostgresConnection(url: database.url).execute("SELECT count(*) FROM replica.accounts").int(0, 0) == 3)
    }

    // MARK: Set-ups

    /// A database set up as `setUp` says, its accounts signed in by the app (alice, bob, mallory, an item
    /// each and a source of bob's), and a superuser's connection to it.
    static func makeDatabase(_ setUp: SetUp) throws -> (PostgresTestDatabase, PostgresConnection) {
        let database: PostgresTestDatabase
        let admin: PostgresConnection
        if setUp == .migratedDatabase {
            database = try PostgresTestServer.makeMigratedDatabase()
            admin = try PostgresConnection(url: database.adminURL)
        } else {
            database = try PostgresTestServer.makeDatabase()
            admin = try PostgresConnection(url: database.adminURL)
            let app = database.parameters["user"] ?? "replica_app"
            try admin.executeScript(
                """
                DO $$ BEGIN CREATE ROLE replica_owner NOLOGIN BYPASSRLS; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
                GRANT CREATE ON DATABASE \(database.name) TO replica_owner;
                SET ROLE replica_owner;
                """)
            switch setUp {
            case .oldDefaultPrivileges, .documented, .everythingGrantedAnyway:
                // docs/postgres.md's block, as the owner; the old one had the FUNCTIONS line.
                try admin.executeScript(
                    """
                    CREATE SCHEMA replica;
                    GRANT USAGE ON SCHEMA replica TO \(app);
                    ALTER DEFAULT PRIVILEGES IN SCHEMA replica GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO \(app);
                    ALTER DEFAULT PRIVILEGES IN SCHEMA replica GRANT USAGE ON SEQUENCES TO \(app);
                    """
                        + (setUp == .oldDefaultPrivileges
                            ? "ALTER DEFAULT PRIVILEGES IN SCHEMA replica GRANT EXECUTE ON FUNCTIONS TO \(app);" : ""))
                if setUp == .oldDefaultPrivileges {
                    try migrate(admin, through: 9)
                } else {
                    try PostgresSchema.migrate(admin)
                }
            case .oldGrantAllFunctions:
                try migrate(admin, through: 9)
                // PostgresSchema.grants(to:) as it was.
                try admin.executeScript(
                    """
                    ALTER DEFAULT PRIVILEGES IN SCHEMA replica GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO \(app);
                    RESET ROLE;
                    GRANT USAGE ON SCHEMA replica TO \(app);
                    GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA replica TO \(app);
                    GRANT USAGE ON ALL SEQUENCES IN SCHEMA replica TO \(app);
                    GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA replica TO \(app);
                    """)
            case .migratedDatabase:
                break
            }
            try admin.executeScript("RESET ROLE")
        }
        // Signed in as the app signs accounts in (PostgresCatalog.insertSignedIn), with a row of each.
        let app = try PostgresConnection(url: database.url)
        for account in ["alice", "bob", caller] {
            try app.execute(
                """
                INSERT INTO replica.accounts(account, directory, state, signed_in_at, generation)
                VALUES ($1, 'accounts/' || $1, 'signedIn', 0, nextval('replica.sign_in_generations'))
                """, [.text(account)])
            try app.execute("SELECT set_config('replica.account', $1, false)", [.text(account)])
            try app.execute("SELECT replica.add_account()")
            try app.execute(
                """
                INSERT INTO replica.items(account, index_name, identifier, expires, attributes, indexed, body, words, length)
                VALUES ($1, 'default', $1 || '1', 32503680000, '{}', 0, $1 || ' secret', to_tsvector('simple', $1 || ' secret'), 2)
                """, [.text(account)])
        }
        try app.execute(
            """
            INSERT INTO replica.sources(account, name, kind, index_name, settings, added, updated)
            VALUES ('bob', 'notes', 'fileTree', 'default', '{}', 0, 0)
            """)
        return (database, admin)
    }

    /// PostgresSchema.migrate's steps through migration `last` only: a schema as an older replica left it.
    static func migrate(_ owner: PostgresConnection, through last: Int) throws {
        try owner.transaction {
            try owner.executeScript(
                """
                CREATE SCHEMA IF NOT EXISTS replica;
                CREATE TABLE IF NOT EXISTS replica.migrations (version integer PRIMARY KEY, name text NOT NULL, applied timestamptz NOT NULL DEFAULT now());
                """)
            for migration in PostgresSchema.migrations.sorted(by: { $0.version < $1.version })
            where migration.version <= last {
                try owner.executeScript(migration.sql)
                try owner.execute(
                    "INSERT INTO replica.migrations(version, name) VALUES ($1, $2)",
                    [.int(Int64(migration.version)), .text(migration.name)])
            }
        }
    }

    // MARK: The calls

    struct Call {
        var sql: String
        var parameters: [PostgresValue]
    }

    /// Every function of the schema (pg_proc: the list is read, not written here, so a function a later
    /// migration adds is called too) with each hostile value: every text argument the value, every text[]
    /// one an array of it, the others a plain value; NULL for every argument as well.
    static func hostileCalls(_ admin: PostgresConnection) throws -> [Call] {
        let functions = try admin.execute(
            """
            SELECT p.proname, coalesce(string_agg(format_type(t.type, NULL), ',' ORDER BY t.position), '')
            FROM pg_proc p LEFT JOIN LATERAL unnest(p.proargtypes::oid[]) WITH ORDINALITY AS t(type, position) ON true
            WHERE p.pronamespace = 'replica'::regnamespace GROUP BY p.oid, p.proname ORDER BY p.oid::regprocedure::text
            """)
        let others = try strings(
            admin.execute(
                """
                SELECT replica.partition_name(t, a) FROM unnest(ARRAY['items', 'records', 'ranking_lists', 'meta', '']) AS t,
                    unnest(ARRAY['alice', 'bob']) AS a
                """))
        let values: [String?] =
            [
                "accounts", "sources", "catalog_version", "migrations", "items", "replica.accounts", "\"accounts\"",
                "accounts; DROP TABLE replica.accounts", "pg_catalog.pg_class", "alice", "bob", "", nil,
            ]
            + others.map { Optional($0) }
        #expect(functions.rowCount >= 13, "the schema's functions were found")
        var calls: [Call] = []
        for row in 0..<functions.rowCount {
            let name = functions.string(row, 0) ?? ""
            let types = (functions.string(row, 1) ?? "").split(separator: ",").map(String.init)
            for value in values {
                var usesValue = false
                let arguments = types.map { type -> String in
                    switch (type, value) {
                    case (_, nil) where type != "text" && type != "text[]": return "NULL::\(type)"
                    case ("text", _):
                        usesValue = true
                        return "$1::text"
                    case ("text[]", _):
                        usesValue = true
                        return "ARRAY[$1::text]"
                    case ("tsquery", _): return "'alpine'::tsquery"
                    case ("tsquery[]", _): return "'{alpine,secret}'::tsquery[]"
                    case ("boolean", _): return "true"
                    case ("integer", _): return "10"
                    case ("double precision", _): return "0::float8"
                    default: return "NULL::\(type)"
                    }
                }
                let sql = "SELECT replica.\(quoted(name))(\(arguments.joined(separator: ", ")))"
                calls.append(Call(sql: sql, parameters: usesValue ? [value.map(PostgresValue.text) ?? .null] : []))
            }
        }
        return calls
    }

    // MARK: The snapshot

    /// What no call of the app's may change, one line a fact, sorted: the schema's relations (row-level
    /// security, owner, grants), policies, column statistics targets, functions (code, rights, grants),
    /// triggers, default privileges, the schema's grants, the catalog's rows and every other account's
    /// items. The calling account's own partitions and their indexes are left out: naming its account,
    /// the app makes and drops them (add_account, remove_account).
    static func snapshot(_ admin: PostgresConnection) throws -> [String] {
        let result = try admin.execute(
            """
            WITH partitions AS (
                SELECT c.oid FROM pg_class c
                WHERE c.relnamespace = 'replica'::regnamespace
                  AND c.relname IN (SELECT replica.partition_name(t, $1) FROM unnest(replica.partitioned_tables()) AS t)
            ), own AS (
                SELECT oid FROM partitions UNION SELECT i.indexrelid FROM pg_index i WHERE i.indrelid IN (SELECT oid FROM partitions)
            )
            SELECT 'relation', c.relname::text, c.relkind::text, c.relrowsecurity, c.relforcerowsecurity, c.relacl::text, c.relowner::regrole::text
            FROM pg_class c WHERE c.relnamespace = 'replica'::regnamespace AND c.oid NOT IN (SELECT oid FROM own)
            UNION ALL
            SELECT 'policy', c.relname || '.' || p.polname, p.polcmd::text, p.polpermissive, null, p.polroles::regrole[]::text,
                   coalesce(pg_get_expr(p.polqual, p.polrelid), '') || ' / ' || coalesce(pg_get_expr(p.polwithcheck, p.polrelid), '')
            FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid
            WHERE c.relnamespace = 'replica'::regnamespace AND c.oid NOT IN (SELECT oid FROM own)
            UNION ALL
            SELECT 'column', c.relname || '.' || a.attname, a.attstattarget::text, a.attnotnull, null, null, null
            FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
            WHERE c.relnamespace = 'replica'::regnamespace AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
              AND c.oid NOT IN (SELECT oid FROM own)
            UNION ALL
            SELECT 'function', p.oid::regprocedure::text, p.prokind::text, p.prosecdef, null, p.proacl::text,
                   md5(p.prosrc) || ' ' || coalesce(p.proconfig::text, '') || ' ' || p.proowner::regrole::text
            FROM pg_proc p WHERE p.pronamespace = 'replica'::regnamespace
            UNION ALL
            SELECT 'trigger', t.tgrelid::regclass::text || '.' || t.tgname, t.tgenabled::text, null, null, null, t.tgfoid::regprocedure::text
            FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
            WHERE c.relnamespace = 'replica'::regnamespace AND NOT t.tgisinternal AND c.oid NOT IN (SELECT oid FROM own)
            UNION ALL
            SELECT 'default acl', d.defaclrole::regrole::text, d.defaclobjtype::text, null, null, d.defaclacl::text,
                   d.defaclnamespace::regnamespace::text
            FROM pg_default_acl d
            UNION ALL
            SELECT 'schema', n.nspname::text, null, null, null, n.nspacl::text, n.nspowner::regrole::text FROM pg_namespace n WHERE n.nspname = 'replica'
            UNION ALL
            SELECT 'account', a.account, a.state, null, null, a.directory, a.generation::text FROM replica.accounts a
            UNION ALL
            SELECT 'source', s.account || '/' || s.name, s.state, null, null, s.settings, s.kind FROM replica.sources s
            UNION ALL
            SELECT 'catalog version', v.version::text, null, null, null, null, null FROM replica.catalog_version v
            UNION ALL
            SELECT 'migration', m.version::text, m.name, null, null, null, null FROM replica.migrations m
            UNION ALL
            SELECT 'item', i.account || '/' || i.identifier, md5(i.body), null, null, null, null FROM replica.items i WHERE i.account <> $1
            ORDER BY 1, 2, 3
            """, [.text(caller)])
        return (0..<result.rowCount).map { row in
            (0..<result.columnCount).map { result.string(row, $0) ?? "∅" }.joined(separator: " | ")
        }
    }

    // MARK: Helpers

    static func strings(_ result: PostgresResult) -> [String] {
        (0..<result.rowCount).compactMap { result.string($0, 0) }
    }

    static func quoted(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A text[] literal: each element double-quoted, quotes and backslashes escaped.
    static func arrayLiteral(_ elements: [String]) -> String {
        "{"
            + elements.map {
                "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                    + "\""
            }
            .joined(separator: ",") + "}"
    }
}
