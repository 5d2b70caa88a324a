import Foundation
import ReplicaSQLite
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

/// Runs on both backends (``TestBackend``); what holds SQLite's locks or writes its files behind the
/// store's back runs on SQLite only.
@Suite struct ProjectionEngineTests {
    let clock = Fixtures.ManualClock()

    /// What a test works on: a store with accounts a and b signed in, on the suite's clock.
    struct Fixture {
        let storage: TestStore
        let clock: Fixtures.ManualClock
        var store: Store { storage.store }
        var directory: TemporaryDirectory { storage.directory }

        /// The items the records should become, by identifier.
        func expected(_ projections: ProjectionSet, account: AccountID = "a") throws -> [ItemIdentifier: SearchableItem]
        {
            let records = try #require(try store.recordStorage(for: account, creating: false))
            var items: [ItemIdentifier: SearchableItem] = [:]
            for kind in try records.kinds() {
                for record in try records.records(kind: kind, after: nil, limit: 100_000) where !record.isDeleted {
                    guard let item = try? projections.projection(for: kind).item(for: record, now: clock.now),
                        item.expirationDate! > clock.now
                    else { continue }
                    items[item.uniqueIdentifier] = item
                }
            }
            return items
        }

        /// Checks that the index holds exactly the projection of the records.
        func expectIndexEqualsProjection(
            _ projections: ProjectionSet = ProjectionSet(indexName: Store.defaultIndexName), account: AccountID = "a",
            sourceLocation: SourceLocation = #_sourceLocation
        ) async throws {
            let index = try await store.index(named: projections.indexName, account: account)
            let actual = Dictionary(uniqueKeysWithValues: try await index.allItems().map { ($0.uniqueIdentifier, $0) })
            let wanted = try expected(projections, account: account)
            #expect(Set(actual.keys) == Set(wanted.keys), sourceLocation: sourceLocation)
            for (identifier, item) in wanted {
                #expect(
                    actual[identifier]?.attributeSet == item.attributeSet, "\(identifier)",
                    sourceLocation: sourceLocation)
                #expect(actual[identifier]?.domainIdentifier == item.domainIdentifier, sourceLocation: sourceLocation)
            }
        }

        func found(_ words: String) async throws -> [String] {
            try await store.search(SearchQuery(words)).map(\.item.uniqueIdentifier.rawValue)
        }
    }

    func make(_ backend: TestBackend) async throws -> Fixture {
        let storage = try await backend.makeStore(configuration: Fixtures.configuration(clock: clock))
        for account: AccountID in ["a", "b"] { try await storage.store.signIn(account) }
        return Fixture(storage: storage, clock: clock)
    }

    func note(
        _ id: String, _ version: Int64, title: String, body: String = "", deleted: Bool = false, extra: JSON = .null
    ) -> Record {
        Record(
            account: "a", kind: "note", id: id, version: version, isDeleted: deleted,
            modified: Date(timeIntervalSince1970: 1_790_000_000 + Double(version)),
            fields: [("title", .string(title)), ("body", .string(body)), ("extra", extra)])
    }

    // MARK: Changes

    @Test(arguments: TestBackend.available)
    func createsEditsAndDeletesFollowTheRecords(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let engine = ProjectionEngine(
            store: fixture.store, projections: ProjectionSet(indexName: Store.defaultIndexName))
        try await fixture.store.records.write([
            note("1", 1, title: "Launch plan", body: "supplier risk"), note("2", 1, title: "Budget"),
        ])
        var report = try await engine.catchUp(account: "a")
        #expect(report.indexed == 2)
        try await fixture.expectIndexEqualsProjection()
        #expect(try await fixture.found("supplier") == ["note:a:1"])

        try await fixture.store.records.write([note("1", 2, title: "Launch plan", body: "vendor delay")])
        report = try await engine.catchUp(account: "a")
        #expect(report.changesApplied == 1)
        #expect(try await fixture.found("supplier").isEmpty)
        #expect(try await fixture.found("vendor") == ["note:a:1"])

        try await fixture.store.records.write([note("2", 2, title: "Budget", deleted: true)])
        report = try await engine.catchUp(account: "a")
        #expect(report.removed == 1)
        try await fixture.expectIndexEqualsProjection()
        #expect(try await fixture.found("budget").isEmpty)
    }

    @Test(arguments: TestBackend.available)
    func anEditOutsideTheSearchableFieldsDoesNotReindex(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let engine = ProjectionEngine(
            store: fixture.store, projections: ProjectionSet(indexName: Store.defaultIndexName))
        try await fixture.store.records.write([note("1", 1, title: "Launch", body: "words", extra: "x")])
        _ = try await engine.catchUp(account: "a")
        let before = try #require(try await fixture.store.search(SearchQuery("launch")).first)
        clock.advance(by: 3600)
        try await fixture.store.records.write([note("1", 2, title: "Launch", body: "words", extra: "changed")])
        // The modification time is searchable metadata; keep it as it was so only "extra" differs.
        var same = note("1", 3, title: "Launch", body: "words", extra: "again")
        same.modified = before.item.attributeSet.contentModificationDate
        try await fixture.store.records.write([same])
        _ = try await engine.catchUp(account: "a")
        let after = try #require(try await fixture.store.search(SearchQuery("launch")).first)
        #expect(after.indexedAt == before.indexedAt, "the item was not written again")
        #expect(after.origin.version == "3", "but it knows the record's version")
        try await fixture.expectIndexEqualsProjection()
    }

    @Test(arguments: TestBackend.available)
    func outOfOrderAndDuplicatedDeliveriesChangeNothing(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let engine = ProjectionEngine(
            store: fixture.store, projections: ProjectionSet(indexName: Store.defaultIndexName))
        try await fixture.store.records.write([note("1", 3, title: "three")])
        try await fixture.store.records.write([
            note("1", 2, title: "two"), note("1", 3, title: "three"), note("1", 1, title: "one"),
        ])
        _ = try await engine.catchUp(account: "a")
        #expect(try await fixture.found("three") == ["note:a:1"])
        #expect(try await fixture.found("two").isEmpty)

        try await fixture.store.records.write([note("1", 5, title: "gone", deleted: true), note("1", 4, title: "late")])
        _ = try await engine.catchUp(account: "a")
        #expect(try await fixture.found("late").isEmpty)
        #expect(try await fixture.store.index(account: "a").itemCount() == 0)
        try await fixture.expectIndexEqualsProjection()
    }

    @Test(arguments: TestBackend.available)
    func replayingTheChangeLogChangesNothing(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let engine = ProjectionEngine(
            store: fixture.store, projections: ProjectionSet(indexName: Store.defaultIndexName))
        try await fixture.store.records.write(
            (1...20).map { note("\($0)", 1, title: "title \($0)", body: "body \($0)") })
        try await fixture.store.records.write([note("3", 2, title: "edited"), note("4", 2, title: "x", deleted: true)])
        _ = try await engine.catchUp(account: "a")
        let index = try await fixture.store.index(account: "a")
        let before = try await index.allItems()
        // Rewind the checkpoint to the start: every change is applied again.
        try await index.write { try $0.setCheckpoint(ProjectionEngine.consumer, "0") }
        // Every record's change is logged again, tombstones too, through the storage's own seam.
        let records = try #require(try await fixture.store.recordStorage(for: "a", creating: false))
        try await Blocking.run {
            for kind in try records.kinds() {
                for record in try records.records(kind: kind, after: nil, limit: 1_000) {
                    try records.touch(kind: kind, id: record.id)
                }
            }
        }
        let report = try await engine.catchUp(account: "a")
        #expect(report.changesApplied == 20)
        #expect(try await index.allItems() == before)
    }

    /// A catch-up in a load (`sync`, `records import`) is written as one, though the engine writes on a
    /// thread of its own: FTS5's segments are left for the ranking lists' build to merge once (outside a
    /// load FTS5 merges a level of 16 at once), and the vocabulary is added up when the load ends. The 60
    /// segments of the two loads stay under the 64 at which a load's level is merged.
    @Test func aCatchUpInALoadIsWrittenAsALoad() async throws {
        let fixture = try await make(.sqlite)
        // A first projection reads 20 records a transaction, a change log 2 changes.
        let engine = ProjectionEngine(
            store: fixture.store, projections: ProjectionSet(indexName: Store.defaultIndexName), batchSize: 1)
        let path = fixture.directory.path + "/accounts/a/indexes/\(Store.defaultIndexName).sqlite"
        try await fixture.store.records.write((1...400).map { note("\($0)", 1, title: "harbour inspection") })
        try await fixture.store.load(accounts: ["a"]) { _ = try await engine.catchUp(account: "a") }
        let first = try fullTextSegments(ofIndexFile: path)
        #expect(first >= 20)
        #expect(try await fixture.store.search(SearchQuery("inspektion", limit: 500)).count == 400)
        // `sync`'s form, every account at once.
        try await fixture.store.records.write((401...440).map { note("\($0)", 1, title: "harbour inspection") })
        try await fixture.store.load { _ = try await engine.catchUpAllAccounts() }
        #expect(try fullTextSegments(ofIndexFile: path) >= first + 20)
        #expect(try await fixture.store.search(SearchQuery("inspektion", limit: 500)).count == 440)
    }

    /// A running engine's first catch-up (the watcher's, applying all of an app's records the first
    /// time) is written as a load, as `records import` writes: FTS5's segments are left for the ranking
    /// lists' build to merge once, and the vocabulary is added up when it ends. What follows is written
    /// as any write is.
    @Test func aRunningEnginesFirstCatchUpIsWrittenAsALoad() async throws {
        let fixture = try await make(.sqlite)
        let engine = ProjectionEngine(
            store: fixture.store, projections: ProjectionSet(indexName: Store.defaultIndexName), batchSize: 1)
        let path = fixture.directory.path + "/accounts/a/indexes/\(Store.defaultIndexName).sqlite"
        try await fixture.store.records.write((1...400).map { note("\($0)", 1, title: "harbour inspection") })
        let running = Task { await engine.run(every: .milliseconds(20)) }
        defer { running.cancel() }
        #expect(await eventually { fixture.store.loadsEnded == 1 })
        #expect(try fullTextSegments(ofIndexFile: path) >= 20)
        #expect(try await fixture.store.search(SearchQuery("inspektion", limit: 500)).count == 400)
        // Later changes are written outside a load: the level of 20 is merged at the next write.
        try await fixture.store.records.write([note("401", 1, title: "harbour pilots")])
        #expect(try await eventually { try await fixture.found("pilots") == ["note:a:401"] })
        #expect(try fullTextSegments(ofIndexFile: path) <= 2)
        #expect(fixture.store.loadsEnded == 1)
    }

    @Test(arguments: TestBackend.available)
    func theChangeLogIsPrunedOnceApplied(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.store.records.write((1...5).map { note("\($0)", 1, title: "t") })
        _ = try await ProjectionEngine(
            store: fixture.store, projections: ProjectionSet(indexName: Store.defaultIndexName)
        ).catchUp(account: "a")
        let records = try #require(try await fixture.store.recordStorage(for: "a", creating: false))
        #expect(try await Blocking.run { try records.changes(after: 0, limit: 10) }.isEmpty)
    }

    // MARK: Projection versions

    /// A first projection stopped partway (a `records import` killed, say) is said to wait for its first
    /// sync, not to be rebuilding for a new projection version.
    @Test(arguments: TestBackend.available)
    func aFirstProjectionStoppedPartwayWaitsForItsFirstSync(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.store.records.write((1...25).map { note("\($0)", 1, title: "title\($0)", body: "body\($0)") })
        let engine = ProjectionEngine(
            store: fixture.store, projections: ProjectionSet(indexName: Store.defaultIndexName), batchSize: 1)
        _ = try await Blocking.run { try engine.catchUpNow(account: "a", rebuildBatchLimit: 1) }
        let partway = try #require(try await fixture.store.status().accounts.first?.records)
        #expect(partway.waitingForFirstSync == ["note"] && partway.rebuilding == [], "\(partway)")
        _ = try await engine.catchUp(account: "a")
        let done = try #require(try await fixture.store.status().accounts.first?.records)
        #expect(done.waitingForFirstSync == [] && done.rebuilding == [])
    }

    @Test(arguments: TestBackend.available)
    func aNewProjectionVersionRebuildsEveryItemWhileSearchKeepsAnswering(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.store.records.write((1...25).map { note("\($0)", 1, title: "title\($0)", body: "body\($0)") })
        let v1 = ProjectionSet(indexName: Store.defaultIndexName)
        _ = try await ProjectionEngine(store: fixture.store, projections: v1).catchUp(account: "a")
        #expect(try await fixture.found("body5") == ["note:a:5"])

        // Version 2 makes the body the title and drops the body.
        let v2 = ProjectionSet(
            [Projection(kind: "note", version: 2, contentType: .markdown, attributes: [(.title, ["body"])])],
            indexName: Store.defaultIndexName)
        let engine = ProjectionEngine(store: fixture.store, projections: v2, batchSize: 1)
        let partial = try await Blocking.run { try engine.catchUpNow(account: "a", rebuildBatchLimit: 1) }
        #expect(partial.rebuilt == 20, "a rebuild reads 20 batches' worth of records at once")
        let index = try await fixture.store.index(account: "a")
        let types = try await index.allItems().map { $0.attributeSet.contentType }
        #expect(types.filter { $0 == .markdown }.count == 20, "the first batch is rebuilt")
        #expect(types.filter { $0 == .plainText }.count == 5, "the rest still answer as they were")
        #expect(try await fixture.found("title9") == ["note:a:9"])
        #expect(try await fixture.store.status().accounts.first?.records?.rebuilding == ["note"])

        let rest = try await engine.catchUp(account: "a")
        #expect(rest.rebuilt == 5)
        try await fixture.expectIndexEqualsProjection(v2)
        #expect(try await fixture.found("title9").isEmpty)
        #expect(try await fixture.store.status().accounts.first?.records?.rebuilding == [])
        // Nothing more to rebuild the next time.
        #expect(try await engine.catchUp(account: "a").rebuilt == 0)
    }

    /// Two builds of an app in the field: the older one must not rebuild what the newer one built, or
    /// they would rebuild back and forth.
    @Test(arguments: TestBackend.available)
    func anOlderProjectionVersionNeverRebuildsWhatANewerOneBuilt(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.store.records.write((1...5).map { note("\($0)", 1, title: "title\($0)", body: "body\($0)") })
        let v1 = ProjectionSet(indexName: Store.defaultIndexName)
        let v2 = ProjectionSet(
            [Projection(kind: "note", version: 2, contentType: .markdown, attributes: [(.title, ["body"])])],
            indexName: Store.defaultIndexName)
        #expect(try await ProjectionEngine(store: fixture.store, projections: v2).catchUp(account: "a").indexed == 5)
        // The older build catches up: nothing rebuilt, and the items stay as version 2 made them.
        #expect(try await ProjectionEngine(store: fixture.store, projections: v1).catchUp(account: "a").rebuilt == 0)
        try await fixture.expectIndexEqualsProjection(v2)
        // A change it applies is projected with its own version; the rest are untouched.
        try await fixture.store.records.write([note("1", 2, title: "renamed", body: "body1")])
        let older = try await ProjectionEngine(store: fixture.store, projections: v1).catchUp(account: "a")
        #expect(older.rebuilt == 0 && older.indexed == 1)
        #expect(try await fixture.found("renamed") == ["note:a:1"])
        // The newer build, back again, has nothing to rebuild either: its version is still the index's.
        #expect(try await ProjectionEngine(store: fixture.store, projections: v2).catchUp(account: "a").rebuilt == 0)
        #expect(try await fixture.store.status().accounts.first?.records?.rebuilding == [])
    }

    @Test(arguments: TestBackend.available)
    func anIndexRebuiltAfterDamageIsRefilledFromTheRecords(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.store.records.write((1...6).map { note("\($0)", 1, title: "title\($0)") })
        let engine = ProjectionEngine(
            store: fixture.store, projections: ProjectionSet(indexName: Store.defaultIndexName))
        _ = try await engine.catchUp(account: "a")
        // The change log is pruned by now; a new, empty index must still end up complete.
        let index = try await fixture.store.index(account: "a")
        try await index.write { writer in
            _ = try writer.deleteAll(owner: nil)
            try writer.removeCheckpoint(ProjectionEngine.consumer)
        }
        _ = try await engine.catchUp(account: "a")
        try await fixture.expectIndexEqualsProjection()
    }

    // MARK: Expiration, accounts, quarantine

    @Test(arguments: TestBackend.available)
    func messagesExpireAfterTheirKindsLifetime(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let projections = ProjectionSet(
            [
                Projection(
                    kind: "message", contentType: .message, attributes: [(.title, ["title"])], lifetime: 30 * 86_400)
            ], indexName: Store.defaultIndexName)
        let engine = ProjectionEngine(store: fixture.store, projections: projections)
        let sent = clock.now
        try await fixture.store.records.write([
            Record(account: "a", kind: "message", id: "m", version: 1, modified: sent, fields: [("title", "ephemeral")])
        ])
        _ = try await engine.catchUp(account: "a")
        #expect(try await fixture.found("ephemeral") == ["message:a:m"])
        clock.advance(by: 30 * 86_400 + 1)
        #expect(try await fixture.found("ephemeral").isEmpty, "invisible at once")
        #expect(try await fixture.store.sweep().purged == 1)
    }

    @Test(arguments: TestBackend.available)
    func switchingAccountsRemovesTheRecordsAndTheirItems(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let engine = ProjectionEngine(
            store: fixture.store, projections: ProjectionSet(indexName: Store.defaultIndexName))
        let canary = "zqcanary\(UInt32.random(in: 0..<UInt32.max))"
        try await fixture.store.records.write([note("1", 1, title: canary, body: "\(canary) body")])
        try await fixture.store.records.write([
            Record(account: "b", kind: "note", id: "1", version: 1, fields: [("title", "bob's")])
        ])
        _ = try await engine.catchUpAllAccounts()
        try await fixture.store.switchAccount(to: "b")
        #expect(try fixture.storage.filesContaining(canary).isEmpty)
        #expect(try await fixture.found(canary).isEmpty)
        #expect(try await fixture.found("bob's") == ["note:b:1"])
        #expect(try await engine.catchUpAllAccounts().indexed == 0)
    }

    @Test(arguments: TestBackend.available)
    func aRecordThatDoesNotFitIsQuarantinedUntilANewerVersionFits(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let engine = ProjectionEngine(
            store: fixture.store, projections: ProjectionSet(indexName: Store.defaultIndexName))
        try await fixture.store.records.write([note("1", 1, title: "fine"), note("2", 1, title: "also fine")])
        _ = try await engine.catchUp(account: "a")
        try await fixture.store.records.write([
            Record(account: "a", kind: "note", id: "2", version: 2, fields: [("title", 42), ("body", "secret")]),
            note("3", 1, title: "flowing"),
        ])
        let report = try await engine.catchUp(account: "a")
        #expect(report.quarantined.map(\.id) == ["2"])
        #expect(report.quarantined.first?.reason.contains("secret") == false)
        #expect(try await fixture.found("also").isEmpty, "the stale version went")
        #expect(try await fixture.found("flowing") == ["note:a:3"], "the rest of the log kept flowing")
        #expect(try await fixture.store.status().accounts.first?.records?.quarantined.map(\.id) == ["2"])

        try await fixture.store.records.write([note("2", 3, title: "fixed")])
        #expect(try await engine.catchUp(account: "a").quarantined.isEmpty)
        #expect(try await fixture.found("fixed") == ["note:a:2"])
        #expect(try await fixture.store.status().accounts.first?.records?.quarantined == [])
    }

    // MARK: Retry queue

    /// SQLite only: it holds the SQLite index file's write lock.
    @Test func aDeletionThatFailsIsQueuedAndRetriedWithBackoffUntilItSucceeds() async throws {
        let fixture = try await make(.sqlite)
        var configuration = Fixtures.configuration(clock: clock)
        configuration.index.busyTimeout = 0.05
        let store = try fixture.storage.open(configuration: configuration)
        try await store.index(account: "a").indexItems([Fixtures.item("x", text: "doomed")])
        // Another process holds the index's write lock.
        let blocker = try Connection(path: fixture.directory.path + "/accounts/a/indexes/default.sqlite")
        try blocker.execute("BEGIN IMMEDIATE")

        let outcome = try await store.deleteReliably([.identifier("x")], account: "a")
        guard case .queued = outcome else {
            Issue.record("expected the deletion to be queued, got \(outcome)")
            return
        }
        #expect(try await store.pendingDeletions(account: "a").count == 1)

        let backoff = Backoff(initial: 10, maximum: 100)
        var sweep = try await store.sweep(backoff: backoff)
        #expect(sweep.deletionsPostponed == 1)
        let pending = try #require(try await store.pendingDeletions(account: "a").first)
        #expect(pending.attempts == 1)
        #expect(pending.nextAttempt == clock.now.addingTimeInterval(10))
        #expect(pending.lastError?.contains("could not be written") == true)

        try blocker.execute("COMMIT")
        sweep = try await store.sweep(backoff: backoff)
        #expect(sweep.deletionsDone == 0, "not due yet")
        #expect(try await store.search(SearchQuery("doomed")).count == 1)
        clock.advance(by: 10)
        sweep = try await store.sweep(backoff: backoff)
        #expect(sweep.deletionsDone == 1)
        #expect(try await store.pendingDeletions(account: "a").isEmpty)
        #expect(try await store.search(SearchQuery("doomed")).isEmpty)
    }

    @Test(arguments: TestBackend.available)
    func catchingUpAnAccountThatIsNotSignedInSaysSo(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        await #expect(
            performing: {
                try await ProjectionEngine(
                    store: fixture.store, projections: ProjectionSet(indexName: Store.defaultIndexName)
                ).catchUp(account: "nobody")
            },
            throws: { error in
                (error as? ReplicaError)?.code == .accountNotSignedIn
                    && (error as? any LocalizedError)?.errorDescription?.contains("not signed in") == true
            })
    }
}
