import Foundation
import Testing
import ReplicaSQLite

/// A store's SQLite files as the kill and fault tests check them: with SQLite's own integrity checks,
/// not through replica's code.
enum StoreFiles {
    /// Opens the database at `path` (never creating it) and expects it sound: SQLite's `integrity_check`,
    /// and for an index, FTS5's `integrity-check` with rank 1, which also compares the full-text index
    /// with the rows it indexes. Returns the connection, for the test's own reads.
    @discardableResult
    static func expectSound(_ path: String, _ what: String) throws -> Connection {
        var options = Connection.Options()
        options.create = false
        let connection = try Connection(path: path, options: options)
        let integrity = try connection.prepare("PRAGMA integrity_check").rows { $0.text(0) }
        #expect(integrity == ["ok"], "\(what): \(path): \(integrity)")
        let isIndex = try connection.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'items_text'") == 1
        if isIndex {
            do {
                try connection.execute("INSERT INTO items_text(items_text, rank) VALUES ('integrity-check', 1)")
            } catch {
                Issue.record("\(what): \(path): the full-text index does not match its rows: \(error)")
            }
        }
        return connection
    }
}
