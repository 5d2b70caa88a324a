import Foundation
import Testing
import ReplicaCore
import ReplicaTestSupport

/// The command line on a store kept in PostgreSQL (`--database URL`, `$REPLICA_DATABASE`): the README's
/// commands, in the same order, with the same meaning as on SQLite, and nothing of an account's content
/// written to `--store`.
@Suite(.enabled(if: PostgresTestServer.isEnabled, "PostgreSQL is not installed here or could not start (why: standard error)"))
struct PostgresCLITests {
    let directory: TemporaryDirectory
    let database: PostgresTestDatabase
    var store: String { directory.path + "/store" }

    init() throws {
        directory = try TemporaryDirectory()
        database = try PostgresTestServer.makeMigratedDatabase()
    }

    @discardableResult
    @available(*, noasync, message: "it waits for a process")
    func replica(_ arguments: String..., input: String? = nil) throws -> ProcessResult {
        try ReplicaProcess.run(["--store", store, "--database", database.url] + arguments, input: input)
    }

    func ids(_ output: String) throws -> [String] {
        try JSON.parse(output)["results"]?.arrayValue?.compactMap { $0["uniqueIdentifier"]?.stringValue } ?? []
    }

    static let items = [
        #"{"uniqueIdentifier": "n1", "domainIdentifier": "account.alice.notes", "expirationDate": "2099-01-01T00:00:00Z", "attributes": {"title": "Launch plan", "textContent": "The launch risk is the supplier.", "contentType": "public.plain-text"}}"#,
        #"{"uniqueIdentifier": "n2", "expirationDate": "2099-01-01T00:00:00Z", "attributes": {"title": "Budget", "textContent": "Numbers for the quarter.", "contentType": "public.plain-text"}}"#,
    ].joined(separator: "\n")

    @Test func theReadmesCommandsWorkOnADatabase() throws {
        #expect(try replica("accounts", "sign-in", "alice").status == 0)
        let imported = try replica("import", "--account", "alice", "-", input: Self.items)
        #expect(imported.status == 0, "\(imported.standardError)")
        #expect(imported.standardError == "replica: imported 2 items into account 'alice'\n")

        let search = try replica("search", "--json", "launch", "risk")
        #expect(search.status == 0, "\(search.standardError)")
        #expect(try ids(search.standardOutput) == ["n1"])
        #expect(try replica("suggest", "laun").standardOutput.contains("launch"))
        let query = try replica("query", "--json", #"title == "Budget""#)
        let queried = try JSON.parse(query.standardOutput)["items"]?.arrayValue?.compactMap { $0["uniqueIdentifier"]?.stringValue }
        #expect(queried == ["n2"], "\(query.standardOutput) \(query.standardError)")
        let got = try replica("get", "--account", "alice", "--json", "n2")
        #expect(got.status == 0 && got.standardOutput.contains("Numbers for the quarter."), "\(got.standardError)")

        let records = #"{"account": "alice", "kind": "note", "id": "7", "version": 1, "fields": {"title": "Harbor map", "body": "tides"}}"#
        #expect(try replica("records", "import", "-", input: records).status == 0)
        #expect(try ids(replica("search", "--json", "harbor").standardOutput) == ["note:alice:7"])

        let status = try replica("status")
        #expect(status.standardOutput.contains("database: postgresql: "), "\(status.standardOutput)")
        #expect(!status.standardOutput.contains(database.parameters["password"] ?? "no password"))

        let tool = try replica("tool", "call", #"{"query": "supplier"}"#)
        #expect(tool.status == 0 && tool.standardOutput.contains("Launch plan"), "\(tool.standardError)")

        // Nothing of the account's content is in the local folder.
        #expect(directory.filesContaining("supplier").isEmpty)
        #expect(directory.filesContaining("Harbor").isEmpty)

        #expect(try replica("switch-account", "bob").status == 0)
        #expect(try ids(replica("search", "--json", "launch").standardOutput) == [])
        #expect(try replica("accounts").standardOutput.contains("bob"))
    }

    @Test func theDatabaseCanComeFromTheEnvironment() throws {
        let signIn = try ReplicaProcess.run(["--store", store, "accounts", "sign-in", "carol"], environment: ["REPLICA_DATABASE": database.url])
        #expect(signIn.status == 0, "\(signIn.standardError)")
        // The same database through --database sees the account; the store's own files do not have it.
        #expect(try replica("accounts").standardOutput.contains("carol"))
        let local = try ReplicaProcess.run(["--store", store, "accounts"])
        #expect(!local.standardOutput.contains("carol"))
    }

    @Test func aDatabaseThatCannotBeReachedIsSaidInWordsWithoutThePassword() throws {
        let result = try ReplicaProcess.run(["--store", store, "--database", database.url(changing: ["password": "wrong-secret"]), "status"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("password") || result.standardError.contains("authentication"), "\(result.standardError)")
        #expect(!result.standardError.contains("wrong-secret"))
    }
}
