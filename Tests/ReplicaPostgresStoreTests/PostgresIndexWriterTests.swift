import Foundation
import ReplicaCore
import ReplicaIndex
import ReplicaPostgres
import ReplicaTestSupport
import Testing

@testable import ReplicaPostgresStore

/// The PostgreSQL index writer on a server of the tests' own, as the role the app connects as: the same
/// outcomes as the SQLite writer (`SearchableIndexTests`, `UserActivityTests`), and the index's statistics
/// exact after every write.
@Suite(.enabled(if: PostgresTestServer.isEnabled, "needs a PostgreSQL server (scripts/setup-system.sh installs one)"))
struct PostgresIndexWriterTests {
    let database: PostgresTestDatabase
    let connection: PostgresConnection
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    init() throws {
        database = try PostgresTestServer.makeMigratedDatabase()
        connection = try PostgresConnection(url: database.url)
    }

    /// Runs `body` with a writer in one transaction of `account`, as the store will.
    @discardableResult
    func write<T>(
        account: AccountID = "alice", index: String = "default", at now: Date? = nil,
        lifetime: TimeInterval = 30 * 24 * 3600,
        _ body: (PostgresIndexWriter) throws -> T
    ) throws -> T {
        try connection.transaction {
            let table = try PostgresSignIn.name(account, on: connection)
            try connection.execute("SELECT replica.add_account()")
            return try body(
                PostgresIndexWriter(
                    connection: connection, account: account, indexName: index, table: table, now: now ?? start,
                    defaultLifetime: lifetime))
        }
    }

    /// Runs a query in a transaction of `account`, as the app role.
    func query(_ sql: String, _ parameters: [PostgresValue] = [], account: AccountID = "alice") throws -> PostgresResult
    {
        try connection.transaction {
            try connection.execute("SELECT set_config('replica.account', $1, true)", [.text(account.rawValue)])
            return try connection.execute(sql, parameters)
        }
    }

    /// The identifiers of an index's items, sorted.
    func identifiers(account: AccountID = "alice", index: String = "default") throws -> [String] {
        let result = try query(
            "SELECT identifier FROM replica.items WHERE account = $1 AND index_name = $2 ORDER BY identifier COLLATE \"C\"",
            [.text(account.rawValue), .text(index)], account: account)
        return (0..<result.rowCount).map { result.string($0, 0) ?? "" }
    }

    /// Expects the index's statistics to be what counting its items gives.
    func expectExactStatistics(
        account: AccountID = "alice", index: String = "default", _ comment: Comment? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let counted = try query(
            "SELECT count(*), coalesce(sum(length), 0) FROM replica.items WHERE account = $1 AND index_name = $2",
            [.text(account.rawValue), .text(index)], account: account)
        let kept = try query(
            "SELECT items, words FROM replica.index_statistics WHERE account = $1 AND index_name = $2",
            [.text(account.rawValue), .text(index)], account: account)
        let keptItems = kept.rowCount > 0 ? kept.int(0, 0) : 0
        let keptWords = kept.rowCount > 0 ? kept.int(0, 1) : 0
        #expect(
            keptItems == counted.int(0, 0) && keptWords == counted.int(0, 1),
            "kept \(String(describing: keptItems)) items, \(String(describing: keptWords)) words; counted \(String(describing: counted.int(0, 0))), \(String(describing: counted.int(0, 1))). \(comment?.description ?? "")",
            sourceLocation: sourceLocation)
    }

    func item(
        _ identifier: String, title: String? = nil, text: String? = nil, domain: String? = nil,
        expiration: Date? = .distantFuture
    ) -> SearchableItem {
        Fixtures.item(identifier, title: title, text: text, domain: domain, expiration: expiration)
    }

    // MARK: Index, replace, update

    /// An item whose words are stemmed for another language than English, sent again as it was, is the
    /// same item: its language is found again from the stored row, not taken for English.
    @Test func anItemInAnotherLanguageSentAgainIsUnchanged() throws {
        var german = item(
            "de",
            text: "Die Kinder spielten den ganzen Nachmittag im Garten ihrer Großeltern, während die Eltern "
                + "in der Küche das Abendessen vorbereiteten.")
        german.attributeSet[.language] = .text("de")
        #expect(try write { try $0.index(german, origin: ItemOrigin(owner: .records, version: "1")) } == .inserted)
        #expect(try write { try $0.index(german, origin: ItemOrigin(owner: .records, version: "2")) } == .unchanged)
        german.attributeSet[.language] = nil
        #expect(
            try write { try $0.index(german, origin: ItemOrigin(owner: .records, version: "3")) } == .replaced,
            "without its attribute, the text is told to be German all the same, but the attributes changed")
        #expect(try write { try $0.index(german, origin: ItemOrigin(owner: .records, version: "4")) } == .unchanged)
    }

    @Test func outcomesAreTheSQLiteWritersOutcomes() throws {
        #expect(
            try write {
                try $0.index(
                    item("n1", title: "Launch plan", text: "supplier risk"),
                    origin: ItemOrigin(owner: .records, version: "1"))
            } == .inserted)
        // The same item again: only its source version is written.
        let indexedBefore = try query("SELECT indexed FROM replica.items WHERE identifier = 'n1'").double(0, 0)
        #expect(
            try write(at: start + 10) {
                try $0.index(
                    item("n1", title: "Launch plan", text: "supplier risk"),
                    origin: ItemOrigin(owner: .records, version: "2"))
            } == .unchanged)
        #expect(try write { try $0.storedVersion("n1") } == 2)
        #expect(try query("SELECT indexed FROM replica.items WHERE identifier = 'n1'").double(0, 0) == indexedBefore)
        // Other text: replaced, and its words with it.
        #expect(
            try write {
                try $0.index(
                    item("n1", title: "Budget", text: "numbers only"), origin: ItemOrigin(owner: .records, version: "3")
                )
            } == .replaced)
        let words = try query("SELECT words::text, body, length FROM replica.items WHERE identifier = 'n1'")
        #expect(words.string(0, 1) == "numbers only")
        #expect(
            words.string(0, 0)?.contains("'number'") == true && words.string(0, 0)?.contains("suppli") == false,
            "\(words.string(0, 0) ?? "")")
        #expect(words.int(0, 2) == 3)
        // Same text, another domain: replaced, words kept.
        #expect(
            try write {
                try $0.index(
                    item("n1", title: "Budget", text: "numbers only", domain: "d"),
                    origin: ItemOrigin(owner: .records, version: "4"))
            } == .replaced)
        #expect(try query("SELECT domain FROM replica.items WHERE identifier = 'n1'").string(0, 0) == "d")
        // An update of a missing item is ignored, as Core Spotlight does.
        var change = AttributeSet()
        change.title = "Ghost"
        #expect(
            try write {
                try $0.index(
                    SearchableItem(uniqueIdentifier: "missing", attributeSet: change, isUpdate: true), origin: .api)
            } == .ignoredUpdate)
        #expect(try identifiers() == ["n1"])
        try expectExactStatistics()
    }

    @Test func anUpdateMergesIntoTheStoredItem() throws {
        var attributes = AttributeSet(contentType: .plainText)
        attributes.title = "Launch plan"
        attributes.textContent = "supplier risk"
        attributes.keywords = ["q3"]
        try write {
            try $0.index(
                SearchableItem(
                    uniqueIdentifier: "n1", domainIdentifier: "account.alice.notes", attributeSet: attributes,
                    expirationDate: .distantFuture), origin: .api)
        }
        var change = AttributeSet()
        change.title = "Launch plan v2"
        change.keywords = nil
        #expect(
            try write {
                try $0.index(SearchableItem(uniqueIdentifier: "n1", attributeSet: change, isUpdate: true), origin: .api)
            } == .merged)
        let row = try query(
            "SELECT title, keywords, body, content_type, domain, expires, attributes FROM replica.items WHERE identifier = 'n1'"
        )
        #expect(row.string(0, 0) == "Launch plan v2")
        #expect(row.string(0, 1) == "")
        #expect(row.string(0, 2) == "supplier risk")
        #expect(row.string(0, 3) == ContentType.plainText.rawValue)
        #expect(row.string(0, 4) == "account.alice.notes")
        #expect(row.double(0, 5) == Date.distantFuture.timeIntervalSince1970)
        let stored = try AttributeSet(
            stored: row.string(0, 6) ?? "", contentType: row.string(0, 3), body: row.string(0, 2),
            title: row.string(0, 0) ?? "", description: "")
        #expect(stored.title == "Launch plan v2" && stored.keywords == nil && stored.textContent == "supplier risk")
        try expectExactStatistics()
        // An update of an expired item is ignored too.
        try write { try $0.index(item("old", text: "gone", expiration: start + 5), origin: .api) }
        #expect(
            try write(at: start + 6) {
                try $0.index(
                    SearchableItem(uniqueIdentifier: "old", attributeSet: change, isUpdate: true), origin: .api)
            } == .ignoredUpdate)
    }

    @Test func anItemWithoutExpirationGetsTheDefaultLifetime() throws {
        try write(lifetime: 3600) { try $0.index(item("n", text: "an hour", expiration: nil), origin: .api) }
        #expect(
            try query("SELECT expires FROM replica.items WHERE identifier = 'n'").double(0, 0) == start
                .timeIntervalSince1970 + 3600)
    }

    // MARK: Owners

    @Test func anotherOwnersItemIsRefusedAndLeftAsItIs() throws {
        try write { try $0.index(item("n1", text: "made by the app"), origin: .api) }
        let (outcome, refused) = try write { writer in
            (
                try writer.index(item("n1", text: "from the docs"), origin: ItemOrigin(owner: .source("docs"))),
                writer.refusedOwnership
            )
        }
        #expect(outcome == .notOwned)
        #expect(
            refused.map { $0.identifier } == ["n1"] && refused.first?.owner == .api
                && refused.first?.writer == .source("docs"))
        var change = AttributeSet()
        change.title = "taken over"
        #expect(
            try write {
                try $0.index(
                    SearchableItem(uniqueIdentifier: "n1", attributeSet: change, isUpdate: true),
                    origin: ItemOrigin(owner: .records))
            } == .notOwned)
        #expect(try write { try $0.delete(identifiers: ["n1"], owner: .records) } == 0)
        #expect(try write { try $0.rowID(of: "n1", owner: .records) } == nil)
        #expect(try write { try $0.rowID(of: "n1", owner: .api) } != nil)
        #expect(
            try query("SELECT body, owner FROM replica.items WHERE identifier = 'n1'").string(0, 0) == "made by the app"
        )
        // The refusal is the caller's to turn into an error.
        #expect(throws: ReplicaError.self) {
            try write { writer -> Void in
                try writer.index(item("n1", text: "again"), origin: ItemOrigin(owner: .records))
                try writer.throwIfRefused()
            }
        }
        #expect(try write { try $0.identifiers(ownedBy: .api) } == ["n1"])
        #expect(try write { try $0.delete(identifiers: ["n1", "unknown"], owner: nil) } == 1)
        try expectExactStatistics()
    }

    // MARK: Deletes

    @Test func aDomainDeleteCoversEveryDomainUnderIt() throws {
        try write { writer in
            for (identifier, domain) in [
                ("1", "account.a"), ("2", "account.a.notes"), ("3", "account.a.notes.archive"), ("4", "account.ab"),
                ("5", "account.a-b"), ("6", nil),
            ] as [(String, String?)] {
                try writer.index(item(identifier, text: "word", domain: domain), origin: .api)
            }
        }
        #expect(
            try write { try $0.delete(domains: ["account.a"], owner: .records) } == 0, "only their owner deletes them")
        #expect(try write { try $0.delete(domains: ["account.a"], owner: nil) } == 3)
        #expect(try identifiers() == ["4", "5", "6"])
        try expectExactStatistics()
    }

    @Test func deletesByOwnerAndIdentifierPrefixAndAll() throws {
        try write { writer in
            try writer.index(item("docs/a/1", text: "one"), origin: ItemOrigin(owner: .source("docs")))
            try writer.index(item("docs/a/2", text: "two"), origin: ItemOrigin(owner: .source("docs")))
            try writer.index(item("docs/b/1", text: "three"), origin: ItemOrigin(owner: .source("docs")))
            try writer.index(item("docs/a/3", text: "four"), origin: .api)
            try writer.index(item("r1", text: "five"), origin: ItemOrigin(owner: .records))
            try writer.index(item("r2", text: "six"), origin: ItemOrigin(owner: .records))
        }
        #expect(try write { try $0.deleteItems(withIdentifierPrefix: "docs/a/", owner: .source("docs")) } == 2)
        #expect(try identifiers() == ["docs/a/3", "docs/b/1", "r1", "r2"])
        #expect(try write { try $0.delete(owner: .records) } == 2)
        try expectExactStatistics()
        #expect(try write { try $0.deleteAll(owner: .api) } == 1)
        #expect(try identifiers() == ["docs/b/1"])
        try write { try $0.index(item("x", text: "seven"), origin: .api) }
        #expect(try write { try $0.deleteAll(owner: nil) } == 2)
        #expect(try identifiers() == [])
        try expectExactStatistics()
    }

    @Test func purgeExpiredDeletesUpToItsLimit() throws {
        try write { writer in
            for number in 0..<3 {
                try writer.index(item("soon\(number)", text: "ephemeral", expiration: start + 60), origin: .api)
            }
            try writer.index(item("later", text: "ephemeral", expiration: start + 3600), origin: .api)
        }
        #expect(try write(at: start + 30) { try $0.purgeExpired(limit: 10) } == 0)
        #expect(try write(at: start + 61) { try $0.purgeExpired(limit: 2) } == 2)
        try expectExactStatistics()
        #expect(try write(at: start + 61) { try $0.purgeExpired(limit: 2) } == 1)
        #expect(try write(at: start + 61) { try $0.purgeExpired() } == 0)
        #expect(try identifiers() == ["later"])
        try expectExactStatistics()
    }

    /// A delete takes what is kept about the item elsewhere with it, as the SQLite index's triggers do.
    @Test func aDeleteTakesTheItemsVectorsAndEnrichmentWithIt() throws {
        var asking = item("mail", title: "Quarterly numbers", text: "the numbers are in")
        asking.updateListenerOptions = [.summarization]
        let pending = try write { writer -> PendingEmbedding in
            try writer.index(asking, origin: .api)
            let id = try #require(try writer.rowID(of: "mail"))
            return PendingEmbedding(rowID: id, indexed: start.timeIntervalSince1970, text: "")
        }
        #expect(
            try query("SELECT pending FROM replica.enrichment WHERE item = $1", [.int(pending.rowID)]).bool(0, 0)
                == true)
        #expect(try write { try $0.setVectors([[0.5, -0.5], [1, 0]], for: pending, model: "m") })
        let version = try write { try $0.meta("vectors_version") }
        #expect(try write { try $0.delete(identifiers: ["mail"], owner: .api) } == 1)
        for table in ["vectors", "embedded", "enrichment"] {
            #expect(try query("SELECT count(*) FROM replica.\(table)").int(0, 0) == 0, "\(table)")
        }
        #expect(try write { try $0.meta("vectors_version") } != version)
    }

    // MARK: Statistics

    /// Every kind of write, one after another; after each, the statistics are what counting gives.
    @Test func statisticsStayExactThroughAMixedSequence() throws {
        try expectExactStatistics("empty")
        try write { writer in
            try writer.index(
                contentsOf: (0..<40).map {
                    (
                        item(
                            "n\($0)", title: "note \($0)", text: String(repeating: "word ", count: $0 % 7),
                            domain: "d.\($0 % 3)"), ItemOrigin.api
                    )
                })
        }
        try expectExactStatistics("bulk insert")
        try write {
            try $0.index(item("n1", title: "note one", text: "a much longer text than it had before"), origin: .api)
        }
        try expectExactStatistics("replace")
        var change = AttributeSet()
        change.textContent = "short"
        try write {
            try $0.index(SearchableItem(uniqueIdentifier: "n2", attributeSet: change, isUpdate: true), origin: .api)
        }
        try expectExactStatistics("merge")
        try write { try $0.index(item("n3", title: "note 3", text: "word word word ", domain: "d.0"), origin: .api) }
        try expectExactStatistics("same text")
        try write { try $0.delete(identifiers: ["n4", "n5"], owner: .api) }
        try expectExactStatistics("delete identifiers")
        try write { try $0.delete(domains: ["d.1"], owner: nil) }
        try expectExactStatistics("delete domain")
        try write { try $0.deleteItems(withIdentifierPrefix: "n2", owner: .api) }
        try expectExactStatistics("delete prefix")
        try write {
            try $0.donate([
                UserActivity(
                    activityType: "t", persistentIdentifier: "p", title: "an activity", keywords: ["k"],
                    isEligibleForSearch: true)
            ])
        }
        try expectExactStatistics("activity item")
        try write { writer in
            try writer.index(item("gone", text: "expires soon", expiration: start + 1), origin: .api)
            try writer.deleteRow(try #require(try writer.rowID(of: "n0")))
        }
        try expectExactStatistics("delete row")
        try write(at: start + 2) { try $0.purgeExpired() }
        try expectExactStatistics("purge")
        try write { try $0.deleteAllActivities() }
        try expectExactStatistics("activities")
        try write { try $0.delete(owner: .api) }
        try expectExactStatistics("delete owner")
        // A failed transaction leaves the statistics as they were.
        try write { try $0.index(item("kept", text: "one two three"), origin: .api) }
        #expect(throws: ReplicaError.self) {
            try write { writer -> Void in
                try writer.index(item("rolled back", text: "four five"), origin: .api)
                throw ReplicaError(.storage, "the caller failed")
            }
        }
        try expectExactStatistics("rolled back")
        let kept = try query("SELECT items, words FROM replica.index_statistics")
        #expect(kept.int(0, 0) == 1 && kept.int(0, 1) == 3)
    }

    // MARK: Bulk

    /// Many items at once end as they would one by one: repeated identifiers, updates among them, items
    /// already there, another owner's.
    @Test func indexingManyItemsAtOnceEndsAsOneByOne() throws {
        var change = AttributeSet()
        change.title = "merged title"
        var entries: [(SearchableItem, ItemOrigin)] = (0..<1_200).map { number in
            var attributes = AttributeSet(contentType: number % 2 == 0 ? .plainText : .markdown)
            attributes.title = "title \(number)"
            attributes.textContent = "body \(number % 5) with \"quotes\", a back\\slash, {braces} and NULL"
            if number % 3 == 0 { attributes.keywords = ["kw\(number % 4)"] }
            if number % 5 < 2 { attributes.authorNames = ["Author\(number % 2)"] }
            if number % 7 < 3 {
                attributes.contentModificationDate = start.addingTimeInterval(Double(number % 2) + 0.25)
            }
            return (
                SearchableItem(
                    uniqueIdentifier: ItemIdentifier("i\(number % 1_000)"),
                    domainIdentifier: number % 3 == 1 ? nil : DomainIdentifier(rawValue: "d.\(number % 2)"),
                    attributeSet: attributes,
                    expirationDate: number % 2 == 0
                        ? start.addingTimeInterval(3600 + Double(number % 3)) : .distantFuture),
                number == 700 ? ItemOrigin(owner: .records, version: "7") : .api
            )
        }
        // The same identifier twice in one run of new items.
        entries.insert((item("i250", text: "second version in the same run"), .api), at: 300)
        entries.insert((SearchableItem(uniqueIdentifier: "i3", attributeSet: change, isUpdate: true), .api), at: 10)
        entries.insert((SearchableItem(uniqueIdentifier: "i600", attributeSet: change, isUpdate: true), .api), at: 900)
        entries.append((item("taken", text: "by the app"), ItemOrigin(owner: .source("s"))))
        for name in ["bulk", "single"] {
            try write(index: name) { try $0.index(item("taken", text: "made first"), origin: .api) }
        }
        let refused = try write(index: "bulk") { writer in
            try writer.index(contentsOf: entries)
            return writer.refusedOwnership.map { $0.identifier }
        }
        try write(index: "single") { writer in
            for (item, origin) in entries { try writer.index(item, origin: origin) }
        }
        #expect(refused == ["taken"])
        let columns =
            "identifier, domain, content_type, created, modified, expires, authors, recipients, attributes, owner, source_version, "
            + "title, keywords, people, description, body, words::text, length"
        func rows(_ name: String) throws -> [[PostgresValue]] {
            try query(
                "SELECT \(columns) FROM replica.items WHERE account = 'alice' AND index_name = $1 ORDER BY identifier COLLATE \"C\"",
                [.text(name)]
            ).rows
        }
        let bulk = try rows("bulk")
        let single = try rows("single")
        #expect(bulk.count == 1_001)
        #expect(single.count == bulk.count)
        let differing = zip(bulk, single).first { $0 != $1 }.map { $0.0[0] }
        #expect(differing == nil, "the first row that differs")
        try expectExactStatistics(index: "bulk")
        try expectExactStatistics(index: "single")
        let types = try query("SELECT name, tree FROM replica.content_types WHERE index_name = 'bulk' ORDER BY name")
            .rows
        let typesOneByOne = try query(
            "SELECT name, tree FROM replica.content_types WHERE index_name = 'single' ORDER BY name"
        ).rows
        #expect(types.count == 2 && types == typesOneByOne)
    }

    // MARK: Vectors

    @Test func setVectorsRefusesAnItemThatChangedSinceItWasRead() throws {
        let pending = try write { writer -> PendingEmbedding in
            try writer.index(item("n", title: "Glacier", text: "rope and boots"), origin: .api)
            return PendingEmbedding(
                rowID: try #require(try writer.rowID(of: "n")), indexed: start.timeIntervalSince1970, text: "")
        }
        #expect(try write { try $0.setVectors([[0.25, 0.5, 1], [1, 0, 0]], for: pending, model: "m") })
        let stored = try query(
            "SELECT passage, vector FROM replica.vectors WHERE item = $1 ORDER BY passage", [.int(pending.rowID)])
        #expect(stored.rowCount == 2)
        #expect(stored.bytes(0, 1) == VectorCoding.encode([0.25, 0.5, 1]))
        #expect(
            try query("SELECT model, indexed FROM replica.embedded WHERE item = $1", [.int(pending.rowID)]).string(0, 0)
                == "m")
        let afterVectors = try #require(try write { try $0.meta("vectors_version") }.flatMap { Int($0) })
        // Rewritten with other text: its vectors go, and vectors made from the old text are refused.
        try write(at: start + 1) { try $0.index(item("n", title: "Glacier", text: "crampons"), origin: .api) }
        #expect(try query("SELECT count(*) FROM replica.vectors").int(0, 0) == 0)
        #expect(try query("SELECT count(*) FROM replica.embedded").int(0, 0) == 0)
        #expect(try write { try $0.meta("vectors_version") }.flatMap { Int($0) } == afterVectors + 1)
        #expect(try write(at: start + 2) { try $0.setVectors([[1, 0, 0]], for: pending, model: "m") } == false)
        #expect(try query("SELECT count(*) FROM replica.vectors").int(0, 0) == 0)
        // Read again, it is stored.
        let fresh = PendingEmbedding(rowID: pending.rowID, indexed: start.timeIntervalSince1970 + 1, text: "")
        #expect(try write(at: start + 2) { try $0.setVectors([[1, 0, 0]], for: fresh, model: "m") })
        // The same text with other metadata keeps them.
        try write(at: start + 3) {
            try $0.index(item("n", title: "Glacier", text: "crampons", domain: "d"), origin: .api)
        }
        #expect(try query("SELECT count(*) FROM replica.vectors").int(0, 0) == 1)
    }

    // MARK: Enrichment

    @Test func enrichmentIsQueuedAppliedAndRefusedForAChangedItem() throws {
        var mail = item("mail", title: "Quarterly numbers", text: "the numbers are in, and they are good")
        mail.updateListenerOptions = [.summarization, .priority]
        let id = try write { writer in
            try writer.index(mail, origin: .api)
            return try #require(try writer.rowID(of: "mail"))
        }
        let pending = PendingEnrichment(
            rowID: id, item: mail, origin: .api, indexed: start.timeIntervalSince1970, input: nil, summary: nil,
            priority: nil, attempts: 0)
        try write { try $0.recordEnrichmentFailure(pending, error: "model busy", retry: start + 60) }
        let failed = try query(
            "SELECT pending, attempts, next_attempt, error FROM replica.enrichment WHERE item = $1", [.int(id)])
        #expect(
            failed.bool(0, 0) == true && failed.int(0, 1) == 1
                && failed.double(0, 2) == start.timeIntervalSince1970 + 60)
        let merged = try write(at: start + 1) {
            try $0.applyEnrichment(
                to: pending, input: "fingerprint", summary: "Numbers are good.",
                priority: true, skipped: ["priority.type"])
        }
        #expect(merged?.attributeSet.textContentSummary == "Numbers are good.")
        let row = try query(
            "SELECT pending, input, summary, priority, skipped, attempts, error FROM replica.enrichment WHERE item = $1",
            [.int(id)])
        #expect(
            row.rows == [
                [
                    .bool(false), .text("fingerprint"), .text("Numbers are good."), .bool(true), .text("priority.type"),
                    .int(0), .null,
                ]
            ])
        #expect(
            try query("SELECT description FROM replica.items WHERE id = $1", [.int(id)]).string(0, 0)
                == "Numbers are good.")
        // The item changed (merged at start + 1) since `pending` was read: nothing is stored.
        #expect(
            try write(at: start + 2) {
                try $0.applyEnrichment(to: pending, input: "other", summary: "Stale.", priority: nil, skipped: [])
            } == nil)
        #expect(
            try query("SELECT input FROM replica.enrichment WHERE item = $1", [.int(id)]).string(0, 0) == "fingerprint")
        try write { try $0.dropEnrichment(pending) }
        #expect(try query("SELECT count(*) FROM replica.enrichment").int(0, 0) == 0)
        try expectExactStatistics()
    }

    // MARK: Activities

    func view(_ item: String, at date: Date? = nil, search: Bool = false) -> UserActivity {
        UserActivity(
            activityType: "com.example.view", persistentIdentifier: "view:\(item)", title: "Viewed \(item)",
            relatedUniqueIdentifier: ItemIdentifier(item), date: date, isEligibleForSearch: search,
            isEligibleForPrediction: true)
    }

    @Test func activitiesMergeStandInAndGo() throws {
        try write { writer in
            try writer.donate([view("trip", at: start - 100, search: true)])
            try writer.donate([view("trip", at: start - 200, search: true)])
        }
        let activity = try query(
            "SELECT views, date, search, prediction, title FROM replica.activities WHERE persistent = 'view:trip'")
        #expect(activity.int(0, 0) == 2)
        #expect(activity.double(0, 1) == start.timeIntervalSince1970 - 100, "the latest date is kept")
        #expect(activity.bool(0, 2) == true && activity.bool(0, 3) == true)
        // About no indexed item and search-eligible: it stands in as an item of its own.
        #expect(try identifiers() == ["activity:view:trip"])
        #expect(try query("SELECT owner FROM replica.items").string(0, 0) == "activities")
        #expect(
            try write { try $0.delete(identifiers: ["activity:view:trip"], owner: .api) } == 0,
            "the app's deletes do not reach it")
        // Once the item is indexed, the stand-in goes; donated again, it does not come back.
        try write { try $0.index(item("trip", title: "Trip plan", text: "the glacier"), origin: .api) }
        #expect(try identifiers() == ["trip"])
        try write { try $0.donate([view("trip", search: true)]) }
        #expect(try identifiers() == ["trip"])
        #expect(try query("SELECT views FROM replica.activities WHERE persistent = 'view:trip'").int(0, 0) == 3)
        // An activity about nothing, then deleted with its item.
        try write {
            try $0.donate([
                UserActivity(
                    activityType: "com.example.search", persistentIdentifier: "search:tents",
                    title: "Searched for tents",
                    keywords: ["camping"], isEligibleForSearch: true)
            ])
        }
        #expect(try identifiers() == ["activity:search:tents", "trip"])
        #expect(try write { try $0.deleteActivities(["search:tents", "unknown"]) } == 1)
        #expect(try identifiers() == ["trip"])
        try write { try $0.donate([view("a"), view("b")]) }
        #expect(try write { try $0.deleteAllActivities() } == 3)
        #expect(try query("SELECT count(*) FROM replica.activities").int(0, 0) == 0)
        try expectExactStatistics()
    }

    // MARK: State

    @Test func clientStateRoundTrips() throws {
        #expect(try write { try $0.clientState() } == nil)
        let state = Data([0, 1, 0xFF, 0x5C, 0x27, 0])
        try write { try $0.setClientState(state) }
        #expect(try write { try $0.clientState() } == state)
        try write { writer in
            try writer.setClientState(Data("cursor=2".utf8))
            #expect(try writer.clientState() == Data("cursor=2".utf8), "the transaction sees its own write")
        }
        #expect(try write { try $0.clientState() } == Data("cursor=2".utf8))
        #expect(try write(index: "other") { try $0.clientState() } == nil)
        #expect(try write(account: "bob") { try $0.clientState() } == nil)
        try write { try $0.setClientState(Data()) }
        #expect(try write { try $0.clientState() } == Data())
    }

    @Test func stateBesideTheItemsRoundTrips() throws {
        try write { writer in
            try writer.setMeta("k", "v")
            try writer.setCheckpoint("records", "42")
            try writer.setProjectionState("note", ProjectionState(version: 2, targetVersion: 3, cursor: "c"))
            try writer.noteProjectionVersion("note", 9)
            try writer.noteProjectionVersion("mail", 1)
            try writer.quarantine("q1", kind: "note", recordID: "1", version: 5, reason: "bad field")
            try writer.setTombstone("t1", version: 7)
            try writer.setTombstone("t1", version: 3)
            try writer.setEntry(SourceEntry(key: "a/1", stamp: "s1"), source: "docs")
            try writer.setEntry(SourceEntry(key: "a/2", stamp: "s2", skipReason: "tooLarge"), source: "docs")
            try writer.setEntry(SourceEntry(key: "b/1", stamp: "s3"), source: "docs")
            try writer.index(item("i1", text: "x"), origin: ItemOrigin(owner: .source("docs"), version: "not a number"))
        }
        try write { writer in
            #expect(try writer.meta("k") == "v")
            #expect(try writer.checkpoint("records") == "42")
            #expect(
                try writer.projectionStates() == [
                    "note": ProjectionState(version: 2, targetVersion: 3, cursor: "c"),
                    "mail": ProjectionState(version: 1, targetVersion: nil, cursor: nil),
                ])
            #expect(try writer.hasQuarantinedRecords())
            #expect(try writer.tombstoneVersion("t1") == 7)
            #expect(try writer.storedVersion("i1") == nil)
            #expect(try writer.absent(["i1", "q1", "t1", "nothing"]) == ["t1", "nothing"])
            try writer.setMeta("k", nil)
            try writer.releaseFromQuarantine("q1")
            try writer.clearTombstone("t1")
            try writer.removeCheckpoint("records")
            try writer.removeEntries(withKeyPrefix: "a/", source: "docs")
        }
        try write { writer in
            #expect(try writer.meta("k") == nil)
            #expect(try writer.checkpoint("records") == nil)
            #expect(try !writer.hasQuarantinedRecords())
            #expect(try writer.tombstoneVersion("t1") == nil)
            try writer.setCheckpoint("docs", "9")
        }
        #expect(try query("SELECT key FROM replica.source_entries").rows == [[.text("b/1")]])
        try write { try $0.forgetSource(named: "docs", owner: .source("docs"), checkpoint: "docs") }
        #expect(try query("SELECT count(*) FROM replica.source_entries").int(0, 0) == 0)
        #expect(try identifiers() == [])
        #expect(try write { try $0.checkpoint("docs") } == nil)
    }

    /// Every statement names its account and index: one index's writes never reach another's rows,
    /// of the same account or of another.
    @Test func writesStayInTheirAccountAndIndex() throws {
        for (account, index) in [("alice", "default"), ("alice", "other"), ("bob", "default")] as [(AccountID, String)]
        {
            try write(account: account, index: index) { writer in
                try writer.index(item("n1", text: "shared identifier", domain: "d"), origin: .api)
                try writer.setMeta("k", index)
            }
        }
        #expect(try write { try $0.deleteAll(owner: nil) } == 1)
        #expect(try identifiers(index: "other") == ["n1"])
        #expect(try identifiers(account: "bob") == ["n1"])
        #expect(try write(index: "other") { try $0.meta("k") } == "other")
        #expect(try write(index: "other") { try $0.delete(domains: ["d"], owner: nil) } == 1)
        #expect(try identifiers(account: "bob") == ["n1"])
        try expectExactStatistics(account: "bob")
        try expectExactStatistics(index: "other")
    }
}
