import Foundation
import Testing
@testable import Replica
@testable import ReplicaIndex
@testable import ReplicaCore
import ReplicaSQLite
import ReplicaTestSupport
import Synchronization

@Suite struct StoreTests {
    let directory: TemporaryDirectory
    let store: Store

    init() throws {
        directory = try TemporaryDirectory()
        store = try Store(directory: directory.url)
        for account: AccountID in ["alice", "bob"] { try store.signIn(account) }
    }

    static func isNotSignedIn(_ error: any Error) -> Bool { (error as? ReplicaError)?.code == .accountNotSignedIn }

    /// The async forms wait for SQLite's locks on threads of their own, never on Swift's cooperative pool
    /// (as wide as the machine has cores). Another process holds the catalog's write lock while more
    /// sign-ins and switches wait than the pool has threads; a thread lets go of the lock as soon as other
    /// async work runs (or after 120 s). Were the waits on the pool, nothing else could run before the
    /// deadline.
    @Test func theAsyncFormsWaitOffTheCooperativePool() async throws {
        let blocker = try Connection(path: directory.path + "/catalog.sqlite")
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
        let store = self.store
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

    @Test func onlyAnExplicitSignInBringsAnAccountIntoUse() async throws {
        let fresh = try Store(directory: directory.appending("fresh"))
        #expect(throws: ReplicaError.self) { try fresh.index(account: "carol") }
        #expect(performing: { try fresh.index(account: "carol") }, throws: Self.isNotSignedIn)
        #expect(performing: { try fresh.records.write([Record(account: "carol", kind: "note", id: "1", version: 1)]) }, throws: Self.isNotSignedIn)
        #expect(performing: { try fresh.addSource(SourceDefinition(kind: .files, account: "carol", settings: .object([("root", "/tmp")]))) },
                throws: Self.isNotSignedIn)
        #expect(try await fresh.signedInAccounts().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/fresh/accounts/carol"))
        try await fresh.signIn("carol")
        try await fresh.index(account: "carol").indexItems([Fixtures.item("x", text: "hello")])
        #expect(try await fresh.signedInAccounts().map(\.id) == ["carol"])
    }

    @Test func aLateWriteForASignedOutAccountIsRefusedAndDoesNotSignItBackIn() async throws {
        let index = try await store.index(account: "bob")
        try await index.indexItems([Fixtures.item("b1", text: "before")])
        try await store.records.write([Record(account: "bob", kind: "note", id: "1", version: 1, fields: [("title", "before")])])
        try await store.signOut("bob")

        // Late writes from a sync layer, through every path: refused, and bob stays out.
        #expect(performing: { try store.index(account: "bob") }, throws: Self.isNotSignedIn)
        #expect(performing: { try store.records.write([Record(account: "bob", kind: "note", id: "2", version: 1, fields: [("title", "late")])]) },
                throws: Self.isNotSignedIn)
        await #expect(performing: { try await index.indexItems([Fixtures.item("b2", text: "late")]) }, throws: Self.isNotSignedIn)
        // A batch of records for two accounts is refused whole: nothing is written for alice either.
        #expect(performing: {
            try store.records.write([Record(account: "alice", kind: "note", id: "1", version: 1), Record(account: "bob", kind: "note", id: "3", version: 1)])
        }, throws: Self.isNotSignedIn)
        #expect(try await store.records.record(account: "alice", kind: "note", id: "1") == nil)
        #expect(try await store.signedInAccounts().map(\.id) == ["alice"])
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/accounts/bob"))
        #expect(try await store.search(SearchQuery("late")).isEmpty)

        // Only an explicit sign-in brings bob back, with nothing of before.
        try await store.signIn("bob")
        #expect(try await store.index(account: "bob").itemCount() == 0)
        #expect(try await store.records.record(account: "bob", kind: "note", id: "1") == nil)
    }

    @Test func searchSpansSignedInAccountsAndMergesByScore() async throws {
        try await store.index(account: "alice").indexItems([Fixtures.item("a1", title: "orchid", text: "orchid"), Fixtures.item("a2", text: "x orchid")])
        try await store.index(account: "bob").indexItems([Fixtures.item("b1", text: "orchid"), Fixtures.item("b2", text: "none")])
        try await store.index(named: "Mail", account: "bob").indexItems([Fixtures.item("m1", title: "orchid mail", text: "orchid orchid")])
        let results = try await store.search(SearchQuery("orchid"))
        #expect(Set(results.map(\.item.uniqueIdentifier)) == ["a1", "a2", "b1", "m1"])
        #expect(results.map(\.score) == results.map(\.score).sorted(by: >))
        #expect(results.first { $0.item.uniqueIdentifier == "m1" }?.indexName == "Mail")
        var onlyBob = SearchQuery("orchid")
        onlyBob.accounts = ["bob"]
        #expect(Set(try await store.search(onlyBob).map(\.account)) == ["bob"])
        #expect(try await store.search(SearchQuery("orchid", limit: 2)).count == 2)
    }

    @Test func signingOutLeavesNoByteOfTheAccountsTextInAnyFile() async throws {
        let canary = "zqxcanary\(UInt32.random(in: 0..<UInt32.max))"
        let alice = try await store.index(account: "alice")
        try await alice.indexItems((0..<200).map { Fixtures.item("n\($0)", title: "\(canary) title", text: "\($0) \(canary) body text") })
        let batch = alice.beginBatch()
        try batch.deleteItems(withIdentifiers: ["n1"])
        try await batch.end(clientState: Data(canary.utf8))
        // Activities, entities and enrichment results are the account's too.
        try await alice.donateUserActivities([UserActivity(activityType: "com.example.view", persistentIdentifier: "view:\(canary)",
                                                           title: "\(canary) viewed", relatedUniqueIdentifier: "n2",
                                                           keywords: [canary], isEligibleForPrediction: true)])
        try await alice.indexItems([SearchableItem(reference: EntityReference(typeName: "Canary", id: canary),
                                                   attributes: AttributeSet(), priority: 5)].map { item in
            var entity = item
            entity.attributeSet.title = canary
            return entity
        })
        var mail = Fixtures.item("mail", text: String(repeating: "\(canary) words of a message long enough to summarize. ", count: 8),
                                 contentType: .emailMessage)
        mail.domainIdentifier = "thread.1"
        mail.attributeSet.contentCreationDate = Date()
        mail.attributeSet.authorNames = ["Bob"]
        mail.updateListenerOptions = [.summarization, .priority]
        try await alice.indexItems([mail])
        #expect(try await store.enrichPendingItems(accounts: ["alice"]).enriched == 1)
        try await store.index(account: "bob").indexItems([Fixtures.item("b", text: "bob's own words")])
        #expect(!directory.filesContaining(canary).isEmpty, "the canary should be on disk before the sign-out")

        #expect(try await store.signOut("alice"))
        #expect(directory.filesContaining(canary).isEmpty, "found in \(directory.filesContaining(canary))")
        #expect(try await store.signedInAccounts().map(\.id) == ["bob"])
        #expect(try await store.search(SearchQuery(canary)).isEmpty)
        #expect(try await store.search(SearchQuery("bob's")).count == 1)
        await #expect(performing: { try await alice.itemCount() }, throws: { ($0 as? ReplicaError)?.code == .accountNotSignedIn })
        #expect(try await store.signOut("alice") == false)
    }

    @Test func switchingAccountsSignsOutEveryOther() async throws {
        for account: AccountID in ["a", "b", "c"] {
            try await store.signIn(account)
            try await store.index(account: account).indexItems([Fixtures.item("x", text: "shared word")])
        }
        try await store.switchAccount(to: "b")
        #expect(try await store.signedInAccounts().map(\.id) == ["b"])
        #expect(try await store.search(SearchQuery("shared")).map(\.account) == ["b"])
        try await store.switchAccount(to: "d")
        #expect(try await store.signedInAccounts().map(\.id) == ["d"])
        #expect(try await store.search(SearchQuery("shared")).isEmpty)
    }

    @Test func anotherStoreOnTheSameDirectorySeesASignOut() async throws {
        try await store.index(account: "alice").indexItems([Fixtures.item("x", text: "visible")])
        let other = try Store(directory: directory.url)
        #expect(try await other.search(SearchQuery("visible")).count == 1)
        try await store.signOut("alice")
        #expect(try await other.search(SearchQuery("visible")).isEmpty)
        #expect(performing: { try other.index(account: "alice") }, throws: Self.isNotSignedIn)
        // Signing in again starts afresh, with nothing of before.
        try await store.signIn("alice")
        let again = try await other.index(account: "alice")
        #expect(try await again.itemCount() == 0)
    }

    @Test func anIndexHeldOpenByAnotherStoreNoticesASignOutMadeElsewhere() async throws {
        let other = try Store(directory: directory.url)
        let held = try await other.index(account: "alice")
        let heldRecords = other.records
        try await held.indexItems([Fixtures.item("x", text: "visible")])
        try await heldRecords.write([Record(account: "alice", kind: "note", id: "1", version: 1, fields: [("title", "visible")])])
        #expect(try await held.itemCount() == 1)

        // This store signs alice out: the other one's open handles stop serving and taking her data.
        try await store.signOut("alice")
        await #expect(performing: { try await held.itemCount() }, throws: Self.isNotSignedIn)
        await #expect(performing: { try await held.search(SearchQuery("visible")) }, throws: Self.isNotSignedIn)
        await #expect(performing: { try await held.indexItems([Fixtures.item("y", text: "lost?")]) }, throws: Self.isNotSignedIn)
        #expect(performing: { try heldRecords.write([Record(account: "alice", kind: "note", id: "2", version: 1)]) }, throws: Self.isNotSignedIn)

        // Signed in again (a new sign-in): the old handle still refuses, and never writes into the new files.
        try await store.signIn("alice")
        await #expect(performing: { try await held.indexItems([Fixtures.item("z", text: "stale handle")]) }, throws: Self.isNotSignedIn)
        let fresh = try await other.index(account: "alice")
        #expect(fresh !== held)
        #expect(try await fresh.itemCount() == 0)
        // What the other store writes now is what this store reads.
        try await fresh.indexItems([Fixtures.item("n", text: "after the new sign-in")])
        #expect(try await store.search(SearchQuery("sign")).map(\.item.uniqueIdentifier) == ["n"])
        try await heldRecords.write([Record(account: "alice", kind: "note", id: "3", version: 1, fields: [("title", "kept")])])
        #expect(try await store.records.record(account: "alice", kind: "note", id: "3") != nil)
    }

    @Test func aSwitchIsRecordedWholeBeforeAnythingIsDeleted() async throws {
        for account: AccountID in ["c", "d", "e"] {
            try await store.signIn(account)
            try await store.index(account: account).indexItems([Fixtures.item("x", text: "words")])
        }
        try await store.switchAccount(to: "alice")
        #expect(try await store.signedInAccounts().map(\.id) == ["alice"])
        for account in ["bob", "c", "d", "e"] {
            #expect(!FileManager.default.fileExists(atPath: directory.path + "/accounts/\(account)"))
        }
        // The account switched to is signed in even when the store did not know it.
        try await store.switchAccount(to: "zed")
        #expect(try await store.signedInAccounts().map(\.id) == ["zed"])
    }

    @Test func accountIdentifiersMapToSafeFolders() async throws {
        let weird: AccountID = "..%2E\\etc ä b"
        try await store.signIn(weird)
        try await store.index(account: weird).indexItems([Fixtures.item("x", text: "contained")])
        let files = directory.allFiles().map(\.path)
        #expect(files.allSatisfy { $0.hasPrefix(directory.path + "/") })
        #expect(files.contains { $0.contains("/accounts/%2E%2E%252E%5Cetc%20%C3%A4%20b/indexes/default.sqlite") })
        for refused: AccountID in ["", ".", "..", "../x", "a/b", "tab\there", "esc\u{1B}[2J", "line\u{2028}sep", " padded", "rtl\u{202E}"] {
            #expect("\(refused.rawValue.debugDescription)", performing: { try store.signIn(refused) }, throws: { ($0 as? ReplicaError)?.code == .invalidArgument })
        }
        #expect(Set(try await store.signedInAccounts().map(\.id)) == ["alice", "bob", weird])
        #expect(throws: ReplicaError.self) { try store.index(account: "") }
        #expect(throws: ReplicaError.self) { try store.index(named: "../x", account: "a") }
    }

    @Test func storeFilesAreReadableByTheirOwnerOnly() async throws {
        try await store.index(account: "alice").indexItems([Fixtures.item("x", text: "private")])
        for file in directory.allFiles() {
            let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file.path)")
        }
        for folder in [directory.path, directory.path + "/accounts", directory.path + "/accounts/alice", directory.path + "/accounts/alice/indexes"] {
            let mode = try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int
            #expect(mode == 0o700, "\(folder)")
        }
    }

    /// A store folder that already existed open to others (mode 0777) is made private when the store
    /// opens it, as a new one is.
    @Test func anExistingStoreFolderOpenToOthersIsMadePrivate() throws {
        let folder = directory.path + "/shared-store"
        #expect(mkdir(folder, 0o777) == 0 && chmod(folder, 0o777) == 0)
        _ = try Store(directory: URL(fileURLWithPath: folder))
        let mode = try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int
        #expect(mode == 0o700)
    }
}
