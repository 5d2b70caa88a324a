import ReplicaPostgres
import ReplicaPostgresStore

extension PostgresTestServer {
    /// A database of the test's own with replica's schema, set up as an operator would: made by an owner
    /// role that may bypass row-level security (`replica_owner`), the app role (the database's URL)
    /// granted its use. A store opened with ``PostgresTestDatabase/url`` finds its schema current.
    ///
    /// - Parameter tablespace: where the database's files go (``makeTablespace(at:)``); `nil`, the server's own.
    /// - Throws: Why the server is not available, or the ``PostgresError`` of setting the database up.
    public static func makeMigratedDatabase(tablespace: String? = nil) throws -> PostgresTestDatabase {
        let database = try makeDatabase(tablespace: tablespace)
        let admin = try PostgresConnection(url: database.adminURL)
        try admin.executeScript(
            """
            DO $$ BEGIN CREATE ROLE replica_owner NOLOGIN BYPASSRLS; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
            GRANT CREATE ON DATABASE \(database.name) TO replica_owner;
            SET ROLE replica_owner;
            """)
        try PostgresSchema.migrate(admin)
        // As the README's operator does: what the owner creates later (each account's partitions) is the
        // app's to use too, under its own row-level security.
        let app = database.parameters["user"] ?? "replica_app"
        try admin.executeScript(
            """
            ALTER DEFAULT PRIVILEGES IN SCHEMA replica GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO \(app);
            RESET ROLE;
            """ + PostgresSchema.grants(to: app))
        return database
    }
}
