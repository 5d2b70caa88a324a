import Foundation
import Testing

@testable import ReplicaSQLite

@Suite struct MigratorTests {
    let directory: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/replica-sqlite-XXXXXX").utf8CString)
        directory = String(cString: template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!)! })
    }

    let migrations = [
        Migration(version: 1, name: "first", sql: "CREATE TABLE a(x INTEGER) STRICT;"),
        Migration(version: 2, name: "second", sql: "ALTER TABLE a ADD COLUMN y TEXT;"),
    ]

    @Test func appliesEveryMigrationInOrderAndRecordsThem() throws {
        let connection = try Connection(path: directory + "/db.sqlite")
        let migrator = Migrator(kind: "test", applicationID: 42, migrations: migrations)
        let outcome = try migrator.migrate(connection)
        #expect(outcome.isFresh)
        #expect(outcome.currentVersion == 2)
        try connection.execute("INSERT INTO a(x, y) VALUES (1, 'one')")
        let recorded = try connection.prepare("SELECT version, name FROM replica_migrations ORDER BY version").rows {
            ($0.int(0), $0.text(1))
        }
        #expect(recorded.map(\.0) == [1, 2])
        #expect(recorded.map(\.1) == ["first", "second"])
        #expect(try connection.scalarInt("PRAGMA user_version") == 2)
    }

    @Test func appliesOnlyTheNewStepsToAnOlderFile() throws {
        let path = directory + "/db.sqlite"
        try Migrator(kind: "test", applicationID: 42, migrations: [migrations[0]]).migrate(Connection(path: path))
        let outcome = try Migrator(kind: "test", applicationID: 42, migrations: migrations).migrate(
            Connection(path: path))
        #expect(outcome.previousVersion == 1)
        #expect(!outcome.isFresh)
        #expect(
            try Connection(path: path).scalarInt("SELECT count(*) FROM pragma_table_info('a') WHERE name = 'y'") == 1)
    }

    @Test func refusesAFileWrittenByANewerSchema() throws {
        let path = directory + "/db.sqlite"
        try Migrator(kind: "test", applicationID: 42, migrations: migrations).migrate(Connection(path: path))
        let older = Migrator(kind: "test", applicationID: 42, migrations: [migrations[0]])
        #expect {
            try older.migrate(Connection(path: path))
        } throws: { error in
            let error = error as? MigrationError
            return error?.code == .newerSchema && error?.message.contains("newer version of replica") == true
        }
    }

    @Test func refusesAnotherKindOfDatabase() throws {
        let path = directory + "/db.sqlite"
        try Migrator(kind: "test", applicationID: 42, migrations: migrations).migrate(Connection(path: path))
        #expect {
            try Migrator(kind: "other", applicationID: 7, migrations: migrations).migrate(Connection(path: path))
        } throws: { ($0 as? MigrationError)?.code == .foreignDatabase }
    }

    @Test func aFailingStepLeavesTheFileAsItWas() throws {
        let path = directory + "/db.sqlite"
        let broken = migrations + [Migration(version: 3, name: "broken", sql: "CREATE TABLE b(x); THIS IS NOT SQL;")]
        #expect(throws: SQLiteError.self) {
            try Migrator(kind: "test", applicationID: 42, migrations: broken).migrate(Connection(path: path))
        }
        let connection = try Connection(path: path)
        #expect(try connection.scalarInt("PRAGMA user_version") == 0)
        #expect(try connection.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name IN ('a', 'b')") == 0)
    }

    @Test func aFileThatIsNotADatabaseFailsWithACorruptionCode() throws {
        let path = directory + "/garbage.sqlite"
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: path))
        #expect {
            try Migrator(kind: "test", applicationID: 42, migrations: migrations).migrate(Connection(path: path))
        } throws: { ($0 as? SQLiteError)?.code.isCorruption == true }
    }

    @Test func newFilesArePrivateToTheirOwner() throws {
        let path = directory + "/private.sqlite"
        let connection = try Connection(path: path)
        try connection.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        for file in [path, path + "-wal"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: file)
            #expect((attributes[.posixPermissions] as? Int) == 0o600, "\(file)")
        }
    }
}
