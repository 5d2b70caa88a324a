import ReplicaPostgres
import ReplicaPostgresStore

extension PostgresTestServer {
    /// A database of the test's own with replica's schema, set up as an operator would: made by an owner
    /// role that may bypass row-level security, the app role (the database's URL) granted its use.
    public static func makeMigratedDatabase() throws -> PostgresTestDatabase {
        let database = try makeDatabase()
        let admin = try PostgresConnection(url: database.adminURL)
        try admin.executeScript("""
            DO $$ BEGIN CREATE ROLE replica_owner NOLOGIN BYPASSRLS; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
            GRANT CREATE ON DATABASE \(database.name) TO replica_owner;
            SET ROLE replica_owner;
            """)
        try PostgresSchema.migrate(admin)
        try admin.executeScript("RESET ROLE; " + PostgresSchema.grants(to: database.parameters["user"] ?? "replica_app"))
        return database
    }
}
