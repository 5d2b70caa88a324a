import Foundation

/// One numbered step of a schema, as it stands in `migrations/<kind>/NNNN-name.sql`.
public struct Migration: Sendable, Equatable {
    /// The step's number, from the file name; steps apply in increasing order.
    public let version: Int
    /// The name after the number in the file name, recorded in `replica_migrations`.
    public let name: String
    /// The SQL the step runs.
    public let sql: String

    /// Makes a migration step.
    ///
    /// - Parameters:
    ///   - version: The step's number, greater than the one before it.
    ///   - name: A short name recorded with the step.
    ///   - sql: One or more SQL statements to run.
    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }
}

/// What opening a database found.
public struct MigrationOutcome: Sendable, Equatable {
    /// The schema version the file had before opening (0 for a new file).
    public var previousVersion: Int
    /// The schema version it has now.
    public var currentVersion: Int
    /// Whether the file was empty and its schema was created just now.
    public var isFresh: Bool { previousVersion == 0 }
}

/// A database whose schema this build cannot use.
public struct MigrationError: Error, CustomStringConvertible, Sendable {
    /// Why the database cannot be used.
    public struct Code: RawRepresentable, Hashable, Sendable {
        /// The code's name.
        public let rawValue: String
        /// Makes a code from its name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The file was written by a newer schema than this build knows.
        public static let newerSchema = Code(rawValue: "newerSchema")
        /// The file is a SQLite database of another kind (or another program's).
        public static let foreignDatabase = Code(rawValue: "foreignDatabase")
    }

    /// Why the database cannot be used.
    public var code: Code
    /// What went wrong and what to do about it, for a person.
    public var message: String
    /// The database file involved.
    public var path: String

    /// The path followed by the message.
    public var description: String { "\(path): \(message)" }
}

/// Applies numbered migrations in order at open and records each one in the database.
///
/// The applied versions are kept in the table `replica_migrations` and in `PRAGMA user_version`; the
/// kind of database is stamped in `PRAGMA application_id`, so a catalog is never opened as an index.
/// A file stamped with a version above the last known migration is refused, never guessed at.
public struct Migrator: Sendable {
    /// A short name for messages ("index", "catalog", …).
    public let kind: String
    /// Stamped into `PRAGMA application_id`.
    public let applicationID: Int32
    /// The steps, in increasing version order.
    public let migrations: [Migration]

    /// Makes a migrator for one kind of database.
    ///
    /// - Parameters:
    ///   - kind: A short name for messages, such as "index" or "catalog".
    ///   - applicationID: The number stamped into `PRAGMA application_id`.
    ///   - migrations: At least one step, in strictly increasing version order; anything else stops the process.
    public init(kind: String, applicationID: Int32, migrations: [Migration]) {
        precondition(!migrations.isEmpty, "a schema needs at least one migration")
        precondition(
            zip(migrations, migrations.dropFirst()).allSatisfy { $0.version < $1.version },
            "migrations must be in increasing version order")
        self.kind = kind
        self.applicationID = applicationID
        self.migrations = migrations
    }

    /// The version of the last step: the schema version this build writes.
    public var latestVersion: Int { migrations.last!.version }

    /// Brings the schema of `connection`'s database up to date.
    ///
    /// Runs in one immediate transaction, so two processes opening a new file at once apply each step once.
    ///
    /// - Throws: ``MigrationError`` for a newer or foreign schema; ``SQLiteError`` when a step fails
    ///   (the whole migration is rolled back).
    @discardableResult
    public func migrate(_ connection: Connection) throws -> MigrationOutcome {
        // Reading the schema first gives a clear SQLITE_NOTADB for a file that is not a database.
        let current = try connection.scalarInt("PRAGMA user_version") ?? 0
        if current == latestVersion, try connection.scalarInt("PRAGMA application_id") == Int(applicationID) {
            return MigrationOutcome(previousVersion: current, currentVersion: current)
        }
        return try connection.transaction(.immediate) {
            let version = try connection.scalarInt("PRAGMA user_version") ?? 0
            let application = try connection.scalarInt("PRAGMA application_id") ?? 0
            let tableCount = try connection.scalarInt("SELECT count(*) FROM sqlite_schema") ?? 0
            if application != Int(applicationID) && (application != 0 || tableCount > 0) {
                throw MigrationError(
                    code: .foreignDatabase,
                    message: "this file is not a replica \(kind) database; move it away or choose another path",
                    path: connection.path)
            }
            if version > latestVersion {
                throw MigrationError(
                    code: .newerSchema,
                    message: "this \(kind) was written by a newer version of replica (schema \(version); "
                        + "this build knows up to \(latestVersion)). Upgrade replica, or remove the file to rebuild it.",
                    path: connection.path)
            }
            try connection.execute(
                """
                CREATE TABLE IF NOT EXISTS replica_migrations (
                    version INTEGER PRIMARY KEY,
                    name TEXT NOT NULL,
                    applied_at REAL NOT NULL
                ) STRICT
                """)
            for migration in migrations where migration.version > version {
                try connection.execute(migration.sql)
                try connection.execute(
                    "INSERT INTO replica_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                    [.integer(Int64(migration.version)), .text(migration.name), .real(Date().timeIntervalSince1970)])
            }
            try connection.execute("PRAGMA application_id = \(applicationID)")
            try connection.execute("PRAGMA user_version = \(latestVersion)")
            return MigrationOutcome(previousVersion: version, currentVersion: latestVersion)
        }
    }
}
