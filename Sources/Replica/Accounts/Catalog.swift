import Foundation
import ReplicaSQLite

/// An account as the catalog records it.
public struct AccountRecord: Hashable, Sendable {
    public enum State: String, Sendable {
        /// Searched and written to.
        case signedIn
        /// A sign-out was recorded and is being (or will be) completed; never searched again.
        case signingOut
    }

    public var id: AccountID
    public var state: State
    public var signedInAt: Date
    /// The account's folder, relative to the store.
    var directory: String
}

/// The store's catalog: which accounts exist and in what state. It never holds indexed content.
struct Catalog: Sendable {
    let database: Database

    static let migrator = Migrator(kind: "catalog", applicationID: 0x5250_4C43, migrations: EmbeddedMigrations.catalog)

    init(path: String) throws {
        do {
            database = try Database(path: path, migrator: Self.migrator)
        } catch let error as MigrationError {
            throw ReplicaError(error.code == .newerSchema ? .newerSchema : .storage, error.description, cause: error)
        }
    }

    static func decode(_ row: Statement) -> AccountRecord {
        AccountRecord(
            id: AccountID(row.text(0)),
            state: AccountRecord.State(rawValue: row.text(1)) ?? .signingOut,
            signedInAt: Date(timeIntervalSince1970: row.double(2)),
            directory: row.text(3))
    }

    func accounts(_ connection: Connection) throws -> [AccountRecord] {
        try connection.cached("SELECT id, state, signed_in_at, directory FROM accounts ORDER BY id").rows { Self.decode($0) }
    }

    func account(_ id: AccountID, _ connection: Connection) throws -> AccountRecord? {
        try connection.cached("SELECT id, state, signed_in_at, directory FROM accounts WHERE id = ?")
            .firstRow([.text(id.rawValue)]) { Self.decode($0) }
    }

    /// A number that changes whenever any connection, in any process, commits to the catalog.
    func dataVersion() throws -> Int {
        try database.readNow { try $0.scalarInt("PRAGMA data_version") ?? 0 }
    }
}
