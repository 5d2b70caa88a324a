public import Replica

extension Store.Database {
    /// A PostgreSQL database, given as a libpq URL (`postgresql://USER:PASSWORD@HOST:PORT/DATABASE`, or
    /// `postgresql:///DATABASE?host=/socket/folder`). Its schema is created or upgraded when the store is
    /// opened as the schema's owner role (`docs/postgres.md`); the app's own role then finds it current.
    ///
    /// A store opened here also reads followed tables in PostgreSQL databases (``PostgreSQL/enable()``).
    public static func postgres(url: String) -> Self {
        PostgreSQL.enable()
        return Self(description: "a PostgreSQL database", identity: url) { directory, configuration in
            try PostgresHome(
                url: url, readDatabase: configuration.readDatabase, directory: directory,
                events: configuration.events)
        }
    }
}

/// What this library adds to replica: stores in a PostgreSQL database (`Store.Database.postgres(url:)`),
/// and followed tables (`FollowedTable`) in an app's PostgreSQL database.
public enum PostgreSQL {
    /// Lets replica read followed tables whose database is a `postgresql://` URL. A store opened with
    /// `Store.Database.postgres(url:)` calls this itself; an app whose store is on SQLite and
    /// that follows a table in PostgreSQL calls it once before it starts its projection engine. Calling
    /// it again does nothing.
    public static func enable() {
        FollowedDatabases.register(
            FollowedDatabases.Kind(
                schemes: ["postgresql", "postgres"],
                open: { url in try PostgresAppDatabase.shared(url: url.absoluteString) },
                listener: { urls in TableChangeListener(urls: urls) }))
    }
}
