import Foundation
import Testing
import ReplicaSQLite

/// `Connection` itself, where it does more than hand SQLite a path.
@Suite struct SQLiteConnectionTests {
    /// An in-memory database is a database, and no file named `:memory:` is made in the working folder
    /// (the owner-only file made ahead of SQLite is for files only).
    @Test func anInMemoryDatabaseMakesNoFile() throws {
        let stray = FileManager.default.currentDirectoryPath + "/:memory:"
        let connection = try Connection(path: ":memory:")
        try connection.execute("CREATE TABLE t(x)")
        try connection.execute("INSERT INTO t(x) VALUES (?)", [.text("one")])
        #expect(try connection.cached("SELECT x FROM t").rows { $0.text(0) } == ["one"])
        #expect(!FileManager.default.fileExists(atPath: stray), "a file was made at \(stray)")
    }
}
