import Foundation
import ReplicaCore
import ReplicaSQLite
import ReplicaTestSupport
import Testing

/// `replica records import`, `sync`, the configuration file and what `status` shows of records.
@Suite struct RecordsCLITests {
    let directory: TemporaryDirectory
    let place: CLIPlace
    var store: String { place.store }

    init() throws {
        directory = try TemporaryDirectory()
        place = CLIPlace(directory: directory)
    }

    @discardableResult
    @available(*, noasync, message: "it waits for a process")
    func replica(_ arguments: String..., input: String? = nil) throws -> ProcessResult {
        try ReplicaProcess.run(place.arguments + arguments, input: input)
    }

    static let records = """
        {"account": "a", "kind": "note", "id": "1", "version": 1, "fields": {"title": "Launch plan", "body": "supplier risk"}}
        {"account": "a", "kind": "note", "id": "2", "version": 3, "fields": {"title": "Budget", "body": "numbers"}}
        {"account": "a", "kind": "note", "id": "2", "version": 2, "fields": {"title": "Old budget"}}
        {"account": "b", "kind": "message", "id": "m", "version": 1, "modified": "2026-11-20T10:00:00Z", "fields": {"title": "Hello", "text": "launch party"}}
        """

    /// A version is compared exactly: 1e3 is the version 1000, as the help now says, and a fraction or a
    /// number too large to be exact unless written in digits is refused with the rule.
    @Test(arguments: TestBackend.available)
    func aVersionIsAWholeNumberComparedExactly(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a", "b")
        let line = { (version: String) in
            #"{"account": "a", "kind": "note", "id": "v", "version": \#(version), "fields": {"title": "Versioned"}}"#
        }
        #expect(try replica("records", "import", "-", input: line("1e3")).status == 0)
        let same = try replica("records", "import", "--json", "-", input: line("1000"))
        #expect(
            same.standardOutput.contains(#""written":0"#) && same.standardOutput.contains(#""unchanged":1"#),
            "\(same.standardOutput)")
        for refused in ["1.5", "1e17"] {
            let result = try replica("records", "import", "-", input: line(refused))
            #expect(result.status == 1)
            #expect(
                result.standardError.contains("written without a fraction (beyond 2^53, in plain digits)"),
                "\(result.standardError)")
        }
        #expect(try replica("records", "--help").standardOutput.contains("1000 may be written 1e3"))
    }

    /// A `records import` killed after indexing, before it built the ranking lists, leaves them to the
    /// next command: sending the same records again, which indexes nothing, builds them. (Found by the
    /// outside kill suite.) SQLite only: the lists are SQLite's.
    @Test func aRunThatIndexesNothingStillBuildsTheListsAKilledRunLeft() async throws {
        try await place.use(.sqlite, signingIn: "a")
        let lines = (0..<60).map {
            #"{"account": "a", "kind": "note", "id": "\#($0)", "version": 1, "fields": {"title": "note \#($0)", "body": "harbor lantern \#($0)"}}"#
        }
        .joined(separator: "\n")
        let environment = ["REPLICA_RANKING_LISTS_MINIMUM_ITEMS": "50"]
        func lists() throws -> Int {
            try Connection(path: store + "/accounts/a/indexes/default.sqlite").scalarInt(
                "SELECT count(*) FROM ranking_lists") ?? 0
        }
        #expect(
            try await ReplicaProcess.running(
                place.arguments + ["records", "import", "-"], input: lines, environment: environment
            ).status == 0)
        #expect(try lists() > 0)
        // What a kill between the indexing and the lists leaves: the items without their lists.
        let index = try await place.openStore().index(account: "a")
        try await index.removeRankingLists()
        #expect(try lists() == 0)
        let again = try await ReplicaProcess.running(
            place.arguments + ["records", "import", "--json", "-"], input: lines, environment: environment)
        #expect(again.standardOutput.contains(#""indexed":0"#), "\(again.standardOutput)")
        #expect(try lists() > 0, "the second run did not build the lists the first left")

        // `sync` tells the whole time it took, the lists' build included (it printed the indexing alone).
        try await index.removeRankingLists()
        let sync = try await ReplicaProcess.running(
            place.arguments + ["sync", "--json", "--no-embed"], environment: environment)
        let summary = try JSON.parse(sync.standardOutput)
        let indexing = try #require(summary["seconds"]?.doubleValue)
        let building = try #require(summary["rankingListsSeconds"]?.doubleValue)
        let total = try #require(summary["totalSeconds"]?.doubleValue)
        #expect(try lists() > 0 && building > 0, "\(sync.standardOutput)")
        #expect(total >= indexing + building - 0.002, "\(sync.standardOutput)")
    }

    @Test(arguments: TestBackend.available)
    func importedRecordsAreSearchableWhenTheCommandReturns(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a", "b")
        let result = try replica("records", "import", "-", input: Self.records)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(
            result.standardError.hasPrefix(
                "replica: wrote 3 records, ignored 1 older version; indexed 3, removed 0 in ")
                && result.standardError.hasSuffix(" s\n"), "\(result.standardError)")
        let search = try replica("search", "--json", "launch")
        #expect(search.standardOutput.contains(#""uniqueIdentifier":"note:a:1","domainIdentifier":"account.a.note""#))
        #expect(
            search.standardOutput.contains(#""uniqueIdentifier":"message:b:m","domainIdentifier":"account.b.message""#))
        #expect(search.standardOutput.contains(#""owner":"records","version":"1""#))
        // Sending the same stream again changes nothing.
        let again = try replica("records", "import", "--json", "-", input: Self.records)
        #expect(
            again.standardOutput.hasPrefix(
                #"{"written":0,"ignoredOlder":1,"unchanged":3,"rejected":0,"indexed":0,"removed":0,"quarantined":0,"seconds":"#
            ),
            "\(again.standardOutput)")
    }

    @Test(arguments: TestBackend.available)
    func badLinesAndRecordsThatDoNotFitAreReportedWithoutContent(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a", "b")
        let input =
            Self.records + "\n" + """
                {"account": "a", "kind": "note", "id": "3"}
                {"account": "a", "kind": "note", "id": "4", "version": 1, "fields": {"title": 42, "body": "zzsecret"}}
                """
        let result = try replica("records", "import", "-", input: input)
        #expect(result.status == 1)
        #expect(result.standardError.contains("line 5: the record has no 'version' (account 'a', kind 'note', id '3')"))
        #expect(
            result.standardError.contains(
                "record note '4' of account 'a' (version 1) was not indexed: field 'title' is a number"))
        #expect(!result.standardError.contains("zzsecret"))
        #expect(result.standardError.contains("rejected 1 line, 1 record not indexed"))
        let status = try replica("status", "--json")
        #expect(
            status.standardOutput.contains(
                #""records":{"recordCount":3,"pendingChanges":0,"ignoredOlder":1,"pendingDeletions":[],"quarantined":[{"kind":"note","id":"4","version":1,"reason":"field 'title' is a number"#
            ))
        #expect(
            try replica("status").standardOutput.contains(
                "    quarantined: note '4' version 1: field 'title' is a number"))
    }

    @Test(arguments: TestBackend.available)
    func syncRebuildsWhenAProjectionVersionChanges(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a", "b")
        try replica("records", "import", "-", input: Self.records)
        try
            #"{ "projections": { "note": { "version": 2, "contentType": "net.daringfireball.markdown", "attributes": {"title": "body"} } } }"#
            .write(toFile: store + "/config.json", atomically: true, encoding: .utf8)
        let sync = try replica("sync", "--json")
        #expect(sync.status == 0)
        #expect(sync.standardOutput.contains(#""rebuilt":2"#))
        let search = try replica("search", "--json", "--type", "net.daringfireball.markdown", "supplier")
        #expect(search.standardOutput.contains(#""title":"supplier risk""#))
        let plain = try replica("sync")
        #expect(
            plain.standardOutput.contains("records: applied 0 changes (indexed 0, removed 0, rebuilt 0, quarantined 0)")
        )
    }

    @Test(arguments: TestBackend.available)
    func aBrokenConfigurationIsRefusedWithWhereAndWhat(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a", "b")
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        try "{ \"projections\": { \"note\": { \"version\": \"two\" } } }".write(
            toFile: store + "/config.json", atomically: true, encoding: .utf8)
        let result = try replica("sync")
        #expect(result.status == 1)
        #expect(
            result.standardError.contains(
                "\(store)/config.json: projection 'note': 'version' must be a whole number from 1"))
        let other = directory.path + "/other.json"
        try "{ \"index\": \"Notes\" }".write(toFile: other, atomically: true, encoding: .utf8)
        #expect(
            try ReplicaProcess.run(
                place.arguments + ["--config", other, "records", "import", "-"], input: Self.records
            ).status == 0)
        #expect(try replica("status").standardOutput.contains("index Notes: 2 items"))
    }

    /// Issue 19, 4.1: `query --fetch` used to remove every record item it read from the index, for good.
    @Test(arguments: TestBackend.available)
    func aQueryWithFetchRemovesNothing(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a", "b")
        try replica(
            "records", "import", "-",
            input: #"{"account":"a","kind":"note","id":"1","version":1,"fields":{"title":"t","body":"recordbody"}}"#)
        for fetch in ["title", "textContent", "title,contentType"] {
            let query = try replica("query", "--fetch", fetch, #"title == "*""#)
            #expect(query.status == 0, "\(query.standardError)")
            #expect(query.standardOutput.hasPrefix("note:a:1"), "\(fetch): \(query.standardOutput)")
            #expect(!query.standardError.contains("left out"), "\(fetch): \(query.standardError)")
        }
        #expect(try replica("search", "recordbody").standardOutput.contains("note:a:1"))
        #expect(
            try replica("query", "--json", "--fetch", "title", #"title == "t""#).standardOutput
                == #"{"items":[{"account":"a","index":"default","uniqueIdentifier":"note:a:1","domainIdentifier":"account.a.note","owner":"records","attributes":{"title":"t"}}],"found":1}"#
                + "\n")
    }

    /// Issue 19, 4.3: a record whose readers leave out the account shows nothing of itself in any command.
    @Test(arguments: TestBackend.available)
    func aRecordTheAccountMayNotReadShowsNothingAnywhere(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a", "b")
        let records = """
            {"account":"a","kind":"note","id":"secret","version":1,"readers":["b"],"fields":{"title":"Zanzibar hidden plan","body":"quokkamystery"}}
            {"account":"a","kind":"note","id":"open","version":1,"fields":{"title":"Quokka open notes","body":"quokkas everywhere"}}
            """
        #expect(try replica("records", "import", "-", input: records).status == 0)
        let donation =
            #"{"persistentIdentifier":"v1","activityType":"com.example.view","title":"viewed","relatedUniqueIdentifier":"note:a:secret","eligibleForPrediction":true}"#
            + "\n"
            + #"{"persistentIdentifier":"v2","activityType":"com.example.view","title":"viewed","relatedUniqueIdentifier":"note:a:open","eligibleForPrediction":true}"#
        let donated = try replica("activities", "donate", "--account", "a", "-", input: donation)
        #expect(donated.status == 0, "\(donated.standardError)")
        var shown: [String] = []
        for arguments in [
            ["suggest", "--account", "a", "quokka"], ["suggest", "quokkam"], ["suggest", "zanz"],
            ["get", "--account", "a", "note:a:secret"], ["get", "--account", "a", "--json", "note:a:secret"],
            ["recent", "--account", "a"], ["recent", "--json"], ["search", "quokkamystery"],
            ["query", "--fetch", "title,textContent", #"title == "*""#],
        ] {
            let result = try ReplicaProcess.run(place.arguments + arguments)
            shown.append(result.standardOutput + result.standardError)
            #expect(
                !result.standardOutput.contains("Zanzibar") && !result.standardOutput.contains("quokkamystery"),
                "\(arguments): \(result.standardOutput)")
            #expect(!result.standardError.contains("Zanzibar") && !result.standardError.contains("quokkamystery"))
        }
        // What the account may read is still shown.
        #expect(shown[0].contains("quokkas") || shown[0].contains("Quokka open notes"), "\(shown[0])")
        #expect(shown[5].contains("Quokka open notes"), "\(shown[5])")
        #expect(try replica("get", "--account", "a", "note:a:open").standardOutput.contains("quokkas everywhere"))
    }

    /// A damaged record store (truncated here) is the canonical copy: it is reported plainly, never
    /// rebuilt, and the rest of the store keeps working.
    @Test func aDamagedRecordStoreIsReportedPlainlyAndTheRestWorks() throws {
        try place.use(.sqlite, signingIn: "a", "b")
        #expect(
            try replica(
                "records", "import", "-",
                input: #"{"account": "a", "kind": "note", "id": "1", "version": 1, "fields": {"title": "harbor"}}"#
            ).status == 0)
        let file = directory.path + "/store/accounts/a/records.sqlite"
        // The command may exit before its connections close, leaving the record in the write-ahead log;
        // move it into the file first, so cutting the file always cuts pages the schema points at.
        try Connection(path: file).execute("PRAGMA wal_checkpoint(TRUNCATE)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)).count > 4096)
        let head = try Data(contentsOf: URL(fileURLWithPath: file)).prefix(4096)
        try head.write(to: URL(fileURLWithPath: file))
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }

        let imported = try replica(
            "records", "import", "-",
            input: #"{"account": "a", "kind": "note", "id": "2", "version": 1, "fields": {"title": "harbor two"}}"#)
        #expect(imported.status == 1)
        #expect(
            imported.standardError.contains("the record store of account 'a' is damaged")
                && !imported.standardError.contains("SQLite error"),
            "\(imported.standardError)")
        let status = try replica("status")
        #expect(status.status == 0, "\(status.standardError)")
        #expect(status.standardOutput.contains("records: cannot be read: the record store of account 'a' is damaged"))
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: file)).count == 4096,
            "the damaged file is left for the app to restore")
    }
}
