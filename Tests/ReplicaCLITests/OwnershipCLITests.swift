import Foundation
import ReplicaTestSupport
import Testing

/// An owner (the API, the record store, one named source) changes only the items it made, whatever
/// identifiers it sends: the attacks of a source or an import that reuse another owner's identifier. On
/// both backends.
@Suite struct OwnershipCLITests {
    let directory: TemporaryDirectory
    let place: CLIPlace
    var store: String { place.store }
    var notes: String { directory.path + "/notes" }

    static let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Plugins/Exec/examples/notes-plugin.py").path

    init() throws {
        directory = try TemporaryDirectory()
        place = CLIPlace(directory: directory)
        try FileManager.default.createDirectory(atPath: notes, withIntermediateDirectories: true)
    }

    /// The store on `backend`, account `a` signed in, with one record the record store made.
    @available(*, noasync, message: "it waits for a process")
    func start(on backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        let record =
            #"{"account": "a", "kind": "note", "id": "r1", "version": 1, "fields": {"title": "original quarterly plan"}}"#
        #expect(try replica("records", "import", "-", input: record).status == 0)
    }

    @discardableResult
    @available(*, noasync, message: "it waits for a process")
    func replica(_ arguments: String..., input: String? = nil) throws -> ProcessResult {
        try ReplicaProcess.run(place.arguments + arguments, input: input)
    }

    @available(*, noasync, message: "it waits for a process")
    func found(_ word: String) throws -> String {
        try replica("search", "--json", word).standardOutput
    }

    @Test(arguments: TestBackend.available)
    func aSourceNamedLikeARecordKindCannotReplaceOrDeleteTheRecordsItem(_ backend: TestBackend) throws {
        try start(on: backend)
        // A plugin source named `note` whose key `a:r1` makes the identifier `note:a:r1`: the record's.
        try #"{"title": "forged words", "body": "forged"}"#.write(
            toFile: notes + "/a:r1.json", atomically: true, encoding: .utf8)
        try #"{"title": "honest words", "body": "its own"}"#.write(
            toFile: notes + "/own.json", atomically: true, encoding: .utf8)
        #expect(
            try replica(
                "sources", "add", "exec", "--account", "a", "--name", "note", "--", "python3", Self.example, notes
            ).status == 0)
        let sync = try replica("sync")
        #expect(sync.status == 0, "\(sync.standardError)")
        #expect(try found("original").contains(#""uniqueIdentifier":"note:a:r1""#))
        #expect(try found("forged") == "{\"results\":[]}\n")
        #expect(
            try found("honest").contains(#""uniqueIdentifier":"note:own""#), "the rest of the source's batch is indexed"
        )
        let status = try replica("status").standardOutput
        #expect(status.contains("its identifier is taken by an item another owner made"), "\(status)")

        // The source deletes its entry: the record's item stays.
        try FileManager.default.removeItem(atPath: notes + "/a:r1.json")
        #expect(try replica("sync").status == 0)
        #expect(try found("original").contains(#""uniqueIdentifier":"note:a:r1""#))
        // Removing the source removes only its own items.
        #expect(try replica("sources", "remove", "note").status == 0)
        #expect(try found("original").contains(#""uniqueIdentifier":"note:a:r1""#))
        #expect(try found("honest") == "{\"results\":[]}\n")
    }

    /// A plugin's deletion of another owner's item is kept out, and `status` says so (it said nothing);
    /// changes dropped when a plugin goes idle without committing them no longer show as waiting.
    @Test(arguments: TestBackend.available)
    func aPluginsRefusedDeletionAndDroppedChangesAreShownInStatus(_ backend: TestBackend) throws {
        try start(on: backend)
        func plugin(_ name: String, _ messages: [String]) throws -> String {
            let path = directory.path + "/\(name).py"
            try
                (["import sys", "sys.stdin.readline()"]
                + messages.map { "print(\(String(reflecting: $0)), flush=True)" }
                + ["for line in sys.stdin: pass"]).joined(separator: "\n").write(
                    toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let deleter = try plugin(
            "deleter",
            [
                #"{"type": "delete", "uniqueIdentifier": "a:r1"}"#, #"{"type": "commit", "checkpoint": "c1"}"#,
                #"{"type": "idle"}"#,
            ])
        let dropper = try plugin(
            "dropper",
            [
                #"{"type": "upsert", "item": {"uniqueIdentifier": "x", "attributes": {"title": "never committed"}}, "version": "1"}"#,
                #"{"type": "idle"}"#,
            ])
        #expect(
            try replica("sources", "add", "exec", "--account", "a", "--name", "note", "--", "python3", deleter).status
                == 0)
        #expect(
            try replica("sources", "add", "exec", "--account", "a", "--name", "dropper", "--", "python3", dropper)
                .status == 0)
        #expect(try replica("sync").status == 0)
        #expect(try found("original").contains(#""uniqueIdentifier":"note:a:r1""#), "the record's item is kept")
        let status = try replica("status").standardOutput
        #expect(status.contains("the source asked to delete 'note:a:r1', made by another owner"), "\(status)")
        #expect(status.contains("they were dropped"), "\(status)")
        #expect(!status.contains("1 changes waiting"), "\(status)")
    }

    @Test(arguments: TestBackend.available)
    func anImportCannotReplaceOrDeleteAnItemTheRecordStoreMade(_ backend: TestBackend) throws {
        try start(on: backend)
        let lines = [
            #"{"uniqueIdentifier": "note:a:r1", "expirationDate": "2099-01-01T00:00:00Z", "attributes": {"title": "forged"}}"#,
            #"{"uniqueIdentifier": "mine", "expirationDate": "2099-01-01T00:00:00Z", "attributes": {"title": "mine forged"}}"#,
        ].joined(separator: "\n")
        let imported = try replica("import", "--account", "a", "-", input: lines)
        #expect(imported.status == 1)
        #expect(
            imported.standardError.contains(
                "line 1: item 'note:a:r1' was made by records, and only its owner can change it"),
            "\(imported.standardError)")
        #expect(!imported.standardError.contains("line 2"))
        #expect(try found("original").contains(#""uniqueIdentifier":"note:a:r1""#))
        #expect(try found("mine").contains(#""uniqueIdentifier":"mine""#))

        // With a client state the import is all or nothing: nothing is written, the state stays.
        let batch = try replica("import", "--account", "a", "--client-state", "v9", "-", input: lines)
        #expect(batch.status == 1)
        #expect(batch.standardError.contains("client state was not changed"), "\(batch.standardError)")
        #expect(!(try replica("status", "--json").standardOutput.contains(#""lastClientState":"v9""#)))
    }

    @Test(arguments: TestBackend.available)
    func aLateLineForASignedOutAccountIsRefusedAndTheOthersAreWritten(_ backend: TestBackend) throws {
        try start(on: backend)
        #expect(try replica("accounts", "sign-in", "b").status == 0)
        #expect(try replica("accounts", "sign-out", "b").status == 0)
        let records = [
            #"{"account": "b", "kind": "note", "id": "1", "version": 2, "fields": {"title": "late delivery"}}"#,
            #"{"account": "a", "kind": "note", "id": "2", "version": 1, "fields": {"title": "timely delivery"}}"#,
            #"{"account": "b", "kind": "note", "id": "2", "version": 2, "fields": {"title": "late delivery"}}"#,
        ].joined(separator: "\n")
        let written = try replica("records", "import", "-", input: records)
        #expect(written.status == 1)
        let refusals = written.standardError.split(separator: "\n").filter {
            $0.contains("account 'b' is not signed in")
        }
        #expect(
            refusals.map { $0.prefix(17) } == ["replica: line 1: ", "replica: line 3: "], "\(written.standardError)")
        #expect(try replica("accounts").standardOutput == "a\n")
        #expect(try found("timely").contains(#""uniqueIdentifier":"note:a:2""#))
        #expect(try found("late") == "{\"results\":[]}\n")

        let imported = try replica(
            "import", "--account", "b", "-", input: #"{"uniqueIdentifier": "x", "attributes": {"title": "late"}}"#)
        #expect(imported.status == 1)
        #expect(imported.standardError.contains("line 1: account 'b' is not signed in"), "\(imported.standardError)")
        #expect(try replica("accounts").standardOutput == "a\n")
        #expect(!FileManager.default.fileExists(atPath: store + "/accounts/b"))
    }
}
