import Foundation
import ReplicaSQLite
import ReplicaTestSupport
import Synchronization
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

/// Runs on both backends (``TestBackend``); what is about SQLite's files (their locks, modes and folders)
/// runs on SQLite only.
@Suite struct StoreTests {
    /// A store with alice and bob signed in.
    func make(_ backend: TestBackend) async throws -> TestStore {
        try await backend.makeStore(signingIn: "alice", "bob")
    }

    static func isNotSignedIn(_ error: any Error) -> Bool { (error as? ReplicaError)?.code == .accountNotSignedIn }

    /// The async forms wait for SQLite's locks on threads of their own, never on Swift's cooperative pool
    /// (as wide as the machine has cores). Another process holds the catalog's write lock while more
    /// sign-ins and switches wait than the pool has threads; a thread lets go of the lock as soon as other
    /// async work runs (or after 120 s). Were the waits on the pool, nothing else could run before the
    /// deadline. SQLite only: it holds the SQLite catalog's write lock.
    @Test func theAsyncFormsWaitOffTheCooperativePool() async throws {
        let fixture = try await make(.sqlite)
        let blocker = try Connection(path: fixture.directory.path + "/catalog.sqlite")
        try blocker.execute("BEGIN IMMEDIATE")
        let otherWorkRan = DispatchSemaphore(value: 0)
        let releasedInTime = Mutex<Bool?>(nil)
        let releaser = Thread {
            let inTime = otherWorkRan.wait(timeout: .now() + 120) == .success
            try? blocker.execute("COMMIT")
            releasedInTime.withLock { $0 = inTime }
        }
        releaser.start()
        let waiting = ProcessInfo.processInfo.activeProcessorCount * 2 + 2
        let store = fixture.store
        let waits = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for number in 0..<waiting {
                    group.addTask { try await store.signIn(AccountID("carol\(number)")) }
                }
                group.addTask { try await store.switchAccount(to: "bob") }
                try await group.waitForAll()
            }
        }
        // Other async work, started after the waits.
        try await Task.sleep(for: .milliseconds(100))
        _ = await Task.detached { otherWorkRan.signal() }.value
        try await waits.value
        #expect(releasedInTime.withLock { $0 } == true)
        #expect(try await store.signedInAccounts().map(\.id).contains("bob"))
    }

    /// A search reads each account's catalog entry once. An entry read before the account was signed out
    /// and in again opens nothing and closes nothing of the new sign-in: it is refused, and the new
    /// sign-in's index goes on answering, by itself and through the store's search.
    @Test(arguments: TestBackend.available)
    func aSearchWithAnOutOfDateEntryTouchesNothingOfTheNewSignIn(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let store = fixture.store
        try await store.index(account: "alice").indexItems([Fixtures.item("old", text: "harbor lantern")])
        let stale = try #require(try await Blocking.run { try store.catalog.account("alice") })
        _ = try await store.signOut("alice")
        try await store.signIn("alice")
        let fresh = try await store.index(account: "alice")
        try await fresh.indexItems([Fixtures.item("new", text: "harbor meadow")])
        let refused = try await Blocking.run {
            [nil, ["default"]].map { (names: [String]?) in
                Result { try store.searchedIndexes(of: stale, named: names) }.mapError { $0 as any Error }
            }
        }
        for result in refused {
            #expect(performing: { _ = try result.get() }, throws: Self.isNotSignedIn)
        }
        #expect(try await fresh.search(SearchQuery("harbor")).map(\.item.uniqueIdentifier.rawValue) == ["new"])
        let current = try await Blocking.run {
            try store.searchedIndexes(of: try #require(try store.catalog.account("alice")), named: nil)
        }
        #expect(current.map(\.name) == ["default"])
        _ = try await store.signOut("bob")
        #expect(try await store.search(SearchQuery("harbor")).map(\.item.uniqueIdentifier.rawValue) == ["new"])
    }

    @Test(arguments: TestBackend.available)
    func onlyAnExplicitSignInBringsAnAccountIntoUse(_ backend: TestBackend) async throws {
        let freshStorage = try await backend.makeStore()
        let fresh = freshStorage.store
        #expect(throws: ReplicaError.self) { try fresh.index(account: "carol") }
        #expect(performing: { try fresh.index(account: "carol") }, throws: Self.isNotSignedIn)
        #expect(
            performing: { try fresh.records.write([Record(account: "carol", kind: "note", id: "1", version: 1)]) },
            throws: Self.isNotSignedIn)
        #expect(
            performing: {
                try fresh.addSource(
                    SourceDefinition(kind: .files, account: "carol", settings: .object([("root", "/tmp")])))
            },
            throws: Self.isNotSignedIn)
        #expect(try await fresh.signedInAccounts().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: freshStorage.directory.path + "/accounts/carol"))
        try await fresh.signIn("carol")
        try await fresh.index(account: "carol").indexItems([Fixtures.item("x", text: "hello")])
        #expect(try await fresh.signedInAccounts().map(\.id) == ["carol"])
    }

    @Test(arguments: TestBackend.available)
    func aLateWriteForASignedOutAccountIsRefusedAndDoesNotSignItBackIn(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let index = try await fixture.store.index(account: "bob")
        try await index.indexItems([Fixtures.item("b1", text: "before")])
        try await fixture.store.records.write([
            Record(account: "bob", kind: "note", id: "1", version: 1, fields: [("title", "before")])
        ])
        try await fixture.store.signOut("bob")

        // Late writes from a sync layer, through every path: refused, and bob stays out.
        #expect(performing: { try fixture.store.index(account: "bob") }, throws: Self.isNotSignedIn)
        #expect(
            performing: {
                try fixture.store.records.write([
                    Record(account: "bob", kind: "note", id: "2", version: 1, fields: [("title", "late")])
                ])
            },
            throws: Self.isNotSignedIn)
        await #expect(
            performing: { try await index.indexItems([Fixtures.item("b2", text: "late")]) }, throws: Self.isNotSignedIn)
        // A batch of records for two accounts is refused whole: nothing is written for alice either.
        #expect(
            performing: {
                try fixture.store.records.write([
                    Record(account: "alice", kind: "note", id: "1", version: 1),
                    Record(account: "bob", kind: "note", id: "3", version: 1),
                ])
            }, throws: Self.isNotSignedIn)
        #expect(try await fixture.store.records.record(account: "alice", kind: "note", id: "1") == nil)
        #expect(try await fixture.store.signedInAccounts().map(\.id) == ["alice"])
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.path + "/accounts/bob"))
        #expect(try await fixture.store.search(SearchQuery("late")).isEmpty)

        // Only an explicit sign-in brings bob back, with nothing of before.
        try await fixture.store.signIn("bob")
        #expect(try await fixture.store.index(account: "bob").itemCount() == 0)
        #expect(try await fixture.store.records.record(account: "bob", kind: "note", id: "1") == nil)
    }

    @Test(arguments: TestBackend.available)
    func searchSpansSignedInAccountsAndMergesByScore(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.store.index(account: "alice").indexItems([
            Fixtures.item("a1", title: "orchid", text: "orchid"), Fixtures.item("a2", text: "x orchid"),
        ])
        try await fixture.store.index(account: "bob").indexItems([
            Fixtures.item("b1", text: "orchid"), Fixtures.item("b2", text: "none"),
        ])
        try await fixture.store.index(named: "Mail", account: "bob").indexItems([
            Fixtures.item("m1", title: "orchid mail", text: "orchid orchid")
        ])
        let results = try await fixture.store.search(SearchQuery("orchid"))
        #expect(Set(results.map(\.item.uniqueIdentifier)) == ["a1", "a2", "b1", "m1"])
        #expect(results.map(\.score) == results.map(\.score).sorted(by: >))
        #expect(results.first { $0.item.uniqueIdentifier == "m1" }?.indexName == "Mail")
        var onlyBob = SearchQuery("orchid")
        onlyBob.accounts = ["bob"]
        #expect(Set(try await fixture.store.search(onlyBob).map(\.account)) == ["bob"])
        #expect(try await fixture.store.search(SearchQuery("orchid", limit: 2)).count == 2)
    }

    @Test(arguments: TestBackend.available)
    func signingOutLeavesNoByteOfTheAccountsTextInAnyFile(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let canary = "zqxcanary\(UInt32.random(in: 0..<UInt32.max))"
        let alice = try await fixture.store.index(account: "alice")
        try await alice.indexItems(
            (0..<200).map { Fixtures.item("n\($0)", title: "\(canary) title", text: "\($0) \(canary) body text") })
        // Identifiers and client state are the app's bytes too: a deleted item leaves its identifier behind
        // (tombstone, change log), and so does a record.
        try await alice.indexItems([Fixtures.item("gone-\(canary)", text: "soon deleted")])
        let batch = alice.beginBatch()
        try batch.deleteItems(withIdentifiers: ["n1", ItemIdentifier("gone-\(canary)")])
        try await batch.end(clientState: Data(canary.utf8))
        try await fixture.store.records.write([
            Record(
                account: "alice", kind: "note", id: "record-\(canary)", version: 1,
                fields: [("title", .string(canary))])
        ])
        // Activities, entities and enrichment results are the account's too.
        try await alice.donateUserActivities([
            UserActivity(
                activityType: "com.example.view", persistentIdentifier: "view:\(canary)",
                title: "\(canary) viewed", relatedUniqueIdentifier: "n2",
                keywords: [canary], isEligibleForPrediction: true)
        ])
        try await alice.indexItems(
            [
                SearchableItem(
                    reference: EntityReference(typeName: "Canary", id: canary),
                    attributes: AttributeSet(), priority: 5)
            ].map { item in
                var entity = item
                entity.attributeSet.title = canary
                return entity
            })
        var mail = Fixtures.item(
            "mail", text: String(repeating: "\(canary) words of a message long enough to summarize. ", count: 8),
            contentType: .emailMessage)
        mail.domainIdentifier = "thread.1"
        mail.attributeSet.contentCreationDate = Date()
        mail.attributeSet.authorNames = ["Bob"]
        mail.updateListenerOptions = [.summarization, .priority]
        try await alice.indexItems([mail])
        #expect(try await fixture.store.enrichPendingItems(accounts: ["alice"]).enriched == 1)
        try await fixture.store.index(account: "bob").indexItems([Fixtures.item("b", text: "bob's own words")])
        // Statistics sampled now would hold the account's words if any column of its text were sampled.
        try fixture.analyzeDatabase()
        #expect(!(try fixture.filesContaining(canary)).isEmpty, "the canary should be on disk before the sign-out")

        #expect(try await fixture.store.signOut("alice"))
        let left = try fixture.filesContaining(canary)
        #expect(left.isEmpty, "found in \(left)")
        #expect(try await fixture.store.signedInAccounts().map(\.id) == ["bob"])
        #expect(try await fixture.store.search(SearchQuery(canary)).isEmpty)
        #expect(try await fixture.store.search(SearchQuery("bob's")).count == 1)
        await #expect(
            performing: { try await alice.itemCount() }, throws: { ($0 as? ReplicaError)?.code == .accountNotSignedIn })
        #expect(try await fixture.store.signOut("alice") == false)
    }

    @Test(arguments: TestBackend.available)
    func switchingAccountsSignsOutEveryOther(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        for account: AccountID in ["a", "b", "c"] {
            try await fixture.store.signIn(account)
            try await fixture.store.index(account: account).indexItems([Fixtures.item("x", text: "shared word")])
        }
        try await fixture.store.switchAccount(to: "b")
        #expect(try await fixture.store.signedInAccounts().map(\.id) == ["b"])
        #expect(try await fixture.store.search(SearchQuery("shared")).map(\.account) == ["b"])
        try await fixture.store.switchAccount(to: "d")
        #expect(try await fixture.store.signedInAccounts().map(\.id) == ["d"])
        #expect(try await fixture.store.search(SearchQuery("shared")).isEmpty)
    }

    @Test(arguments: TestBackend.available)
    func anotherStoreOnTheSameDirectorySeesASignOut(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.store.index(account: "alice").indexItems([Fixtures.item("x", text: "visible")])
        let other = try fixture.open()
        #expect(try await other.search(SearchQuery("visible")).count == 1)
        try await fixture.store.signOut("alice")
        #expect(try await other.search(SearchQuery("visible")).isEmpty)
        #expect(performing: { try other.index(account: "alice") }, throws: Self.isNotSignedIn)
        // Signing in again starts afresh, with nothing of before.
        try await fixture.store.signIn("alice")
        let again = try await other.index(account: "alice")
        #expect(try await again.itemCount() == 0)
    }

    @Test(arguments: TestBackend.available)
    func anIndexHeldOpenByAnotherStoreNoticesASignOutMadeElsewhere(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let other = try fixture.open()
        let held = try await other.index(account: "alice")
        let heldRecords = other.records
        try await held.indexItems([Fixtures.item("x", text: "visible")])
        try await heldRecords.write([
            Record(account: "alice", kind: "note", id: "1", version: 1, fields: [("title", "visible")])
        ])
        #expect(try await held.itemCount() == 1)

        // This store signs alice out: the other one's open handles stop serving and taking her data.
        try await fixture.store.signOut("alice")
        await #expect(performing: { try await held.itemCount() }, throws: Self.isNotSignedIn)
        await #expect(performing: { try await held.search(SearchQuery("visible")) }, throws: Self.isNotSignedIn)
        await #expect(
            performing: { try await held.indexItems([Fixtures.item("y", text: "lost?")]) }, throws: Self.isNotSignedIn)
        #expect(
            performing: { try heldRecords.write([Record(account: "alice", kind: "note", id: "2", version: 1)]) },
            throws: Self.isNotSignedIn)

        // Signed in again (a new sign-in): the old handle still refuses, and never writes into the new files.
        try await fixture.store.signIn("alice")
        await #expect(
            performing: { try await held.indexItems([Fixtures.item("z", text: "stale handle")]) },
            throws: Self.isNotSignedIn)
        let fresh = try await other.index(account: "alice")
        #expect(fresh !== held)
        #expect(try await fresh.itemCount() == 0)
        // What the other store writes now is what this store reads.
        try await fresh.indexItems([Fixtures.item("n", text: "after the new sign-in")])
        #expect(try await fixture.store.search(SearchQuery("sign")).map(\.item.uniqueIdentifier) == ["n"])
        try await heldRecords.write([
            Record(account: "alice", kind: "note", id: "3", version: 1, fields: [("title", "kept")])
        ])
        #expect(try await fixture.store.records.record(account: "alice", kind: "note", id: "3") != nil)
    }

    @Test(arguments: TestBackend.available)
    func aSwitchIsRecordedWholeBeforeAnythingIsDeleted(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        for account: AccountID in ["c", "d", "e"] {
            try await fixture.store.signIn(account)
            try await fixture.store.index(account: account).indexItems([Fixtures.item("x", text: "words")])
        }
        try await fixture.store.switchAccount(to: "alice")
        #expect(try await fixture.store.signedInAccounts().map(\.id) == ["alice"])
        for account in ["bob", "c", "d", "e"] {
            #expect(!FileManager.default.fileExists(atPath: fixture.directory.path + "/accounts/\(account)"))
        }
        // The account switched to is signed in even when the store did not know it.
        try await fixture.store.switchAccount(to: "zed")
        #expect(try await fixture.store.signedInAccounts().map(\.id) == ["zed"])
    }

    @Test(arguments: TestBackend.available)
    func accountIdentifiersMapToSafeFolders(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let weird: AccountID = "..%2E\\etc ä b"
        try await fixture.store.signIn(weird)
        try await fixture.store.index(account: weird).indexItems([Fixtures.item("x", text: "contained")])
        if backend == .sqlite {  // where the SQLite files are
            let files = fixture.directory.allFiles().map(\.path)
            #expect(files.allSatisfy { $0.hasPrefix(fixture.directory.path + "/") })
            #expect(files.contains { $0.contains("/accounts/%2E%2E%252E%5Cetc%20%C3%A4%20b/indexes/default.sqlite") })
        }
        for refused: AccountID in [
            "", ".", "..", "../x", "a/b", "tab\there", "esc\u{1B}[2J", "line\u{2028}sep", " padded", "rtl\u{202E}",
        ] {
            #expect(
                "\(refused.rawValue.debugDescription)", performing: { try fixture.store.signIn(refused) },
                throws: { ($0 as? ReplicaError)?.code == .invalidArgument })
        }
        #expect(Set(try await fixture.store.signedInAccounts().map(\.id)) == ["alice", "bob", weird])
        #expect(throws: ReplicaError.self) { try fixture.store.index(account: "") }
        #expect(throws: ReplicaError.self) { try fixture.store.index(named: "../x", account: "a") }
    }

    /// SQLite only: the modes of the SQLite files and their folders.
    @Test func storeFilesAreReadableByTheirOwnerOnly() async throws {
        let fixture = try await make(.sqlite)
        try await fixture.store.index(account: "alice").indexItems([Fixtures.item("x", text: "private")])
        for file in fixture.directory.allFiles() {
            let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file.path)")
        }
        for folder in [
            fixture.directory.path, fixture.directory.path + "/accounts", fixture.directory.path + "/accounts/alice",
            fixture.directory.path + "/accounts/alice/indexes",
        ] {
            let mode = try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int
            #expect(mode == 0o700, "\(folder)")
        }
    }

    /// A store folder that already existed open to others (mode 0777) is made private when the store
    /// opens it, as a new one is.
    @Test(arguments: TestBackend.available)
    func anExistingStoreFolderOpenToOthersIsMadePrivate(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let folder = fixture.directory.path + "/shared-store"
        #expect(mkdir(folder, 0o777) == 0 && chmod(folder, 0o777) == 0)
        _ = try fixture.open(directory: URL(fileURLWithPath: folder))
        let mode = try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int
        #expect(mode == 0o700)
    }
}
