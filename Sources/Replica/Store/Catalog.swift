import Foundation
import ReplicaSQLite

/// An account as the catalog records it.
public struct AccountRecord: Hashable, Sendable {
    /// Where an account is in its life: signed in, or being signed out.
    public enum State: String, Sendable {
        /// Searched and written to.
        case signedIn
        /// A sign-out was recorded and is being (or will be) completed; never searched again.
        case signingOut
    }

    /// The account's identifier.
    public var id: AccountID
    /// Whether the account is signed in or being signed out.
    public var state: State
    /// When the account was signed in.
    public var signedInAt: Date
    /// The account's folder, relative to the store.
    var directory: String
    /// Which sign-in this is: a number the store never gives twice, so a sign-out followed by a sign-in
    /// is told apart from an account that stayed signed in.
    var generation: Int64
}

/// The store's catalog: which accounts exist and in what state. It never holds indexed content.
struct Catalog: Sendable {
    let database: Database

    static let migrator = Migrator(kind: "catalog", applicationID: 0x5250_4C43, migrations: EmbeddedMigrations.catalog)

    init(path: String) throws {
        do {
            database = try Database(path: path, migrator: Self.migrator)
            // A few pages: checking them all costs less than a millisecond, and damage that a later
            // query would meet halfway through a sign-out is found before anything starts.
            let verdict = try database.readNow { try $0.prepare("PRAGMA quick_check").rows { $0.text(0) } }
            if verdict != ["ok"] { throw SQLiteError(code: .corrupt, message: "quick_check found damage", path: path) }
        } catch let error as MigrationError {
            throw ReplicaError(error.code == .newerSchema ? .newerSchema : .storage, error.description, cause: error)
        } catch let error as SQLiteError where error.code.isCorruption {
            throw ReplicaError(.storage, "the store's catalog (\(path)) is damaged or the disk could not read it. It says which "
                + "accounts are signed in, so replica reads and changes nothing until it is sound, and has deleted nothing: run "
                + "the command again; if this repeats, check the disk (dmesg) and restore catalog.sqlite from a backup", cause: error)
        }
    }

    static func decode(_ row: Statement) -> AccountRecord {
        AccountRecord(
            id: AccountID(row.text(0)),
            state: AccountRecord.State(rawValue: row.text(1)) ?? .signingOut,
            signedInAt: Date(timeIntervalSince1970: row.double(2)),
            directory: row.text(3),
            generation: row.int64(4))
    }

    func accounts(_ connection: Connection) throws -> [AccountRecord] {
        try connection.cached("SELECT id, state, signed_in_at, directory, generation FROM accounts ORDER BY id").rows { Self.decode($0) }
    }

    func account(_ id: AccountID, _ connection: Connection) throws -> AccountRecord? {
        try connection.cached("SELECT id, state, signed_in_at, directory, generation FROM accounts WHERE id = ?")
            .firstRow([.text(id.rawValue)]) { Self.decode($0) }
    }

    /// Inserts an account as signed in, under a generation never used before; returns it.
    func insertSignedIn(_ id: AccountID, _ connection: Connection) throws -> AccountRecord {
        try connection.execute("UPDATE counters SET value = value + 1 WHERE name = 'sign_in_generation'")
        try connection.execute("""
            INSERT INTO accounts(id, directory, state, signed_in_at, generation)
            VALUES (?, ?, 'signedIn', ?, (SELECT value FROM counters WHERE name = 'sign_in_generation'))
            """, [.text(id.rawValue), .text("accounts/" + id.directoryName), .real(Date().timeIntervalSince1970)])
        guard let record = try account(id, connection) else {
            throw ReplicaError(.storage, "account '\(id)' was not found right after it was signed in")
        }
        return record
    }

    /// Fails unless `id` is signed in under `generation`: what every operation on an account's open files
    /// checks, so that a sign-out made by another process or another `Store` value is noticed.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    func requireSignedIn(_ id: AccountID, generation: Int64) throws {
        let current = try database.readNow { try account(id, $0) }
        guard let current, current.state == .signedIn, current.generation == generation else {
            throw ReplicaError(.accountNotSignedIn,
                               "account '\(id)' was signed out after its files were opened; nothing was read or written. Sign it in again to use it")
        }
    }

    /// A number that changes whenever any connection, in any process, commits to the catalog.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    func dataVersion() throws -> Int {
        try database.readNow { try $0.scalarInt("PRAGMA data_version") ?? 0 }
    }
}

/// The sign-in an account's files were opened under. Every operation on them checks it first, so a
/// sign-out made by another process, or by another ``Store`` value on the same folder, is noticed at once
/// instead of leaving stale data served and new writes lost in deleted files.
struct SignInLease: Sendable {
    let catalog: Catalog
    let account: AccountID
    let generation: Int64

@available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    func check() throws {
        try catalog.requireSignedIn(account, generation: generation)
    }

    /// The same check, as the index takes it.
    var index: IndexLease {
        IndexLease(generation: generation, check: check)
    }
}
