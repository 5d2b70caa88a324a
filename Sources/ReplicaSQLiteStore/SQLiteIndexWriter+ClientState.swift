package import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaSQLite

extension SQLiteIndexWriter {
    // MARK: Client state and facts

    package func clientState() throws -> Data? {
        try SQLiteIndexReader(connection: connection, now: now).clientState()
    }

    package func setClientState(_ state: Data) throws {
        try connection.cached(
            "INSERT INTO client_state(id, state, updated) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET state = excluded.state, updated = excluded.updated"
        )
        .run([SQLValue(state), .real(now.timeIntervalSince1970)])
    }

    package func setMeta(_ key: String, _ value: String?) throws {
        if let value {
            try connection.cached(
                "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"
            )
            .run([.text(key), .text(value)])
        } else {
            try connection.cached("DELETE FROM meta WHERE key = ?").run([.text(key)])
        }
    }
}

extension SQLiteIndexWriter {
    /// A fact the index keeps about itself, or `nil`.
    package func meta(_ key: String) throws -> String? {
        guard case .text(let value)? = try connection.scalar("SELECT value FROM meta WHERE key = ?", [.text(key)])
        else { return nil }
        return value
    }

    /// Those of `identifiers` that name no item (expired or not) and no quarantined record.
    package func absent(_ identifiers: [ItemIdentifier]) throws -> Set<ItemIdentifier> {
        let item = try connection.cached("SELECT 1 FROM items WHERE identifier = ?")
        let quarantined = try connection.cached("SELECT 1 FROM quarantine WHERE identifier = ?")
        return Set(
            try identifiers.filter { identifier in
                try item.firstRow([.text(identifier.rawValue)], { _ in true }) == nil
                    && quarantined.firstRow([.text(identifier.rawValue)], { _ in true }) == nil
            })
    }
}
