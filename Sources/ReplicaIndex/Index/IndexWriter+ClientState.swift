import Foundation
import ReplicaCore
import ReplicaSQLite

extension IndexWriter {
    // MARK: Client state and facts

    package func setClientState(_ state: Data) throws {
        try connection.cached("INSERT INTO client_state(id, state, updated) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET state = excluded.state, updated = excluded.updated")
            .run([SQLValue(state), .real(now.timeIntervalSince1970)])
    }

    package func setMeta(_ key: String, _ value: String?) throws {
        if let value {
            try connection.cached("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
                .run([.text(key), .text(value)])
        } else {
            try connection.cached("DELETE FROM meta WHERE key = ?").run([.text(key)])
        }
    }
}
