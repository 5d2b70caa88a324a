import Foundation
import Replica
import ReplicaSQLite
import ReplicaTestSupport
import ReplicaText
import Testing

@testable import ReplicaIndex

/// Issue 45, typos forgiven, on both backends: the vocabulary each writer keeps, and the words a typo
/// may have meant searched beside the typed word, ranked below it.
struct TyposTests {
    static func found(_ store: Store, _ text: String, exact: Bool = false) async throws -> [String] {
        var query = SearchQuery(text)
        query.disablesSemanticSearch = true
        query.typoTolerance = !exact
        return try await store.search(query).map(\.item.uniqueIdentifier.rawValue)
    }

    /// Every first letter of the tokens of the texts the tests index.
    static let letters = Set("abcdefghijklmnopqrstuvwxyz電".map(String.init))

    /// The vocabulary of an index, by token: every token that begins with one of `letters`.
    static func vocabulary(_ index: SearchableIndex) async throws -> [String: Int64] {
        try await index.read { reader in
            var words: [String: Int64] = [:]
            for letter in letters {
                for (word, documents) in try reader.vocabulary(
                    beginningWith: letter, lengths: 1...64, heldByMoreThan: 0)
                {
                    words[word] = documents
                }
            }
            return words
        }
    }

    /// What the vocabulary of these texts must be: for each token the analyzer makes of an item's
    /// columns (stemmed for English, the language CLD2 cannot tell of such short texts), the items that have it.
    static func expectedVocabulary(_ texts: [String: String]) -> [String: Int64] {
        var counts: [String: Int64] = [:]
        for text in texts.values {
            let tokens = Set(
                TextAnalyzer.tokens(in: text, language: "en").map(\.text).filter(TextAnalyzer.Vocabulary.holds))
            for token in tokens { counts[token, default: 0] += 1 }
        }
        return counts
    }

    @Test(arguments: TestBackend.available)
    func theVocabularyFollowsEveryWrite(_ backend: TestBackend) async throws {
        let fixture = try await backend.makeStore(signingIn: "alice")
        let index = try await fixture.store.index(account: "alice")
        // Words of more than 16 bytes too (a writer keeps shorter ones in its table's entries).
        var texts = [
            "a": "Launch the batteries before the launch window closes; internationalization pending",
            "b": "The supplier launched 12345 batteries, 電池 and all",
            "c": "Battery supplier meeting on internationalization, interoperability and Straßenbahnhaltestellen",
        ]
        try await index.indexItems(
            texts.map { Fixtures.item($0.key, text: $0.value, domain: $0.key == "c" ? "work" : nil) })
        #expect(try await Self.vocabulary(index) == Self.expectedVocabulary(texts))
        #expect(try await Self.vocabulary(index)["launch"] == 2, "counted once an item, however often it has the word")
        #expect(try await Self.vocabulary(index)["internationalization"] == 2)
        let words = try await Self.vocabulary(index)
        #expect(words["12345"] == nil && words["電池"] == nil)

        // A text changed, an item deleted, a domain deleted: the counts follow, and a token no item holds goes.
        texts["a"] = "Harbour inspection notes"
        try await index.indexItems([Fixtures.item("a", text: texts["a"]!)])
        #expect(try await Self.vocabulary(index) == Self.expectedVocabulary(texts))
        _ = try await index.deleteItems(withIdentifiers: ["b"])
        texts["b"] = nil
        #expect(try await Self.vocabulary(index) == Self.expectedVocabulary(texts))
        _ = try await index.deleteItems(withDomainIdentifiers: ["work"])
        texts["c"] = nil
        #expect(try await Self.vocabulary(index) == Self.expectedVocabulary(texts))
        #expect(try await Self.vocabulary(index)["supplier"] == nil)
    }

    /// Issue 48: in a load (a sync, an import), SQLite holds each transaction's vocabulary changes back and
    /// adds them up when the load ends, or at the index's next write outside a load if the load was
    /// killed; the counts come out as if each write had kept them, removals included. PostgreSQL keeps
    /// them in every transaction, load or not.
    @Test(arguments: TestBackend.available)
    func aLoadsVocabularyIsCountedWhenItEnds(_ backend: TestBackend) async throws {
        let fixture = try await backend.makeStore(signingIn: "alice")
        let index = try await fixture.store.index(account: "alice")
        var texts = ["a": "Launch the batteries before the launch window closes"]
        try await index.indexItems([Fixtures.item("a", text: texts["a"]!)])
        let before = try await Self.vocabulary(index)
        #expect(before == Self.expectedVocabulary(texts))

        try await fixture.store.load(accounts: ["alice"]) {
            texts["b"] = "The supplier launched batteries, harbour inspection pending"
            texts["c"] = "Battery supplier meeting on interoperability"
            try await index.indexItems(["b", "c"].map { Fixtures.item($0, text: texts[$0]!) })
            texts["a"] = "Harbour inspection notes"
            try await index.indexItems([Fixtures.item("a", text: texts["a"]!)])
            _ = try await index.deleteItems(withIdentifiers: ["c"])
            texts["c"] = nil
            // What the load wrote is found by its words at once; the vocabulary waits for the load's end.
            #expect(try await Self.found(fixture.store, "harbour", exact: true).sorted() == ["a", "b"])
            let during = try await Self.vocabulary(index)
            #expect(during == (backend == .sqlite ? before : Self.expectedVocabulary(texts)), "on \(backend)")
        }
        #expect(try await Self.vocabulary(index) == Self.expectedVocabulary(texts), "on \(backend)")
        #expect(try await Self.found(fixture.store, "inspektion").sorted() == ["a", "b"], "on \(backend)")

        // A load that ends without settling (a killed `sync`): the index's next write outside a load adds
        // up what it held back.
        try await IndexLoad.withLoad {
            texts["d"] = "Quarterly interoperability review"
            try await index.indexItems([Fixtures.item("d", text: texts["d"]!)])
        }
        #expect(try await Self.vocabulary(index)["quarterly"] == (backend == .sqlite ? nil : 1), "on \(backend)")
        texts["e"] = "Harbour pilots"
        try await index.indexItems([Fixtures.item("e", text: texts["e"]!)])
        #expect(try await Self.vocabulary(index) == Self.expectedVocabulary(texts), "on \(backend)")
    }

    /// An SQLite index made before its vocabulary was kept in the order a search reads it (migration
    /// 0018: by letter, length and token, with no index beside it) keeps every count when it opens, and
    /// goes on counting.
    @Test func aVocabularyKeptBeforeItWasOrderedByReachKeepsItsCounts() async throws {
        let fixture = try await TestBackend.sqlite.makeStore(signingIn: "alice")
        var texts = [
            "a": "Launch the batteries before the launch window closes", "b": "Battery supplier in Zürich",
        ]
        try await fixture.store.index(account: "alice").indexItems(texts.map { Fixtures.item($0.key, text: $0.value) })
        let path = fixture.directory.url.appendingPathComponent("accounts/alice/indexes/default.sqlite").path
        let connection = try Connection(path: path)
        try connection.execute(
            """
            CREATE TABLE earlier (word TEXT PRIMARY KEY, documents INTEGER NOT NULL) WITHOUT ROWID;
            INSERT INTO earlier SELECT word, documents FROM vocabulary;
            DROP TABLE vocabulary;
            ALTER TABLE earlier RENAME TO vocabulary;
            CREATE INDEX vocabulary_reach ON vocabulary(substr(word, 1, 1), length(word), documents);
            DELETE FROM replica_migrations WHERE version >= 18;
            PRAGMA user_version = 17;
            """)
        let store = try fixture.open()
        let index = try await store.index(account: "alice")
        #expect(try await Self.vocabulary(index) == Self.expectedVocabulary(texts))
        #expect(try await Self.found(store, "suplier") == ["b"], "a typo corrected through the vocabulary")
        texts["c"] = "Launch review for the supplier"
        try await index.indexItems([Fixtures.item("c", text: texts["c"]!)])
        _ = try await index.deleteItems(withIdentifiers: ["b"])
        texts["b"] = nil
        #expect(try await Self.vocabulary(index) == Self.expectedVocabulary(texts))
        #expect(try await Self.vocabulary(index)["zurich"] == nil, "a token no item holds any more is gone")
    }

    @Test(arguments: TestBackend.available)
    func aTypoFindsTheWordItMissed(_ backend: TestBackend) async throws {
        let fixture = try await backend.makeStore(signingIn: "alice")
        let index = try await fixture.store.index(account: "alice")
        try await index.indexItems([
            Fixtures.item("launch", text: "The rocket launch was moved to Friday"),
            Fixtures.item("battery", text: "Each battery was charged overnight"),
            Fixtures.item("supplier", text: "Our supplier sent the invoice late"),
            Fixtures.item("connection", text: "The connection to the harbour was checked"),
            Fixtures.item("build", text: "Where the nightly build failed"),
        ])
        // Deleted, inserted, replaced and swapped letters; two edits in a long word; a typo in the stem's
        // part finds the word's other forms ("batery" for "batteries").
        for (typo, expected) in [
            ("lanch", "launch"), ("launh", "launch"), ("luanch", "launch"), ("batery", "battery"),
            ("suplier", "supplier"), ("conection", "connection"), ("conectoin", "connection"),
            ("connectoins", "connection"), ("buld", "build"),
        ] {
            #expect(try await Self.found(fixture.store, typo) == [expected], "\(typo) on \(backend)")
            #expect(try await Self.found(fixture.store, typo, exact: true) == [], "\(typo) exactly on \(backend)")
        }
        // A correction counts beside its stem as a word typed does: a fraction of it (FTSPattern.typedFormWeight).
        let corrected = try await index.read { reader in
            var query = SearchQuery("conection")
            query.languages = ["en"]
            let pattern = try #require(try reader.pattern(of: query))
            let term = try #require(try reader.correctingTypos(pattern).meaningfulTerms.first)
            return Dictionary(uniqueKeysWithValues: zip(term.alternatives.map(\.text), term.alternativeWeights()))
        }
        let typed = FTSPattern.typedFormWeight
        #expect(corrected == ["conection": typed, "conect": 1, "connection": typed, "connect": 1], "on \(backend)")
        // The first letter is kept; a word of four letters is corrected only to one of five (a letter
        // dropped), and a word two edits off below 9 letters not at all.
        #expect(try await Self.found(fixture.store, "kaunch") == [])
        #expect(try await Self.found(fixture.store, "lnch") == [])
        #expect(try await Self.found(fixture.store, "lanh") == [])
        #expect(try await Self.found(fixture.store, "lnuach") == [])
        // A function word meant is that function word, which finds nothing on its own beside another word.
        #expect(try await Self.found(fixture.store, "wehre nightly") == ["build"])
        #expect(try await Self.found(fixture.store, "wehre rocket") == ["launch"])
        // Nor is a phrase, a prefix or a search of every word.
        #expect(try await Self.found(fixture.store, "\"rocket lanch\"") == [])
        #expect(try await Self.found(fixture.store, "lanch*") == [])
        var all = SearchQuery("rocket lanch")
        all.requiresAllWords = true
        all.disablesSemanticSearch = true
        #expect(try await fixture.store.search(all).isEmpty)
    }

    /// A word the index holds in a few items and a neighbour in ten times as many: both are searched,
    /// and the word as typed ranks first.
    @Test(arguments: TestBackend.available)
    func theWordAsTypedRanksAboveACorrection(_ backend: TestBackend) async throws {
        let fixture = try await backend.makeStore(signingIn: "alice")
        let index = try await fixture.store.index(account: "alice")
        var items = (0..<12).map { Fixtures.item("launch-\($0)", text: "The launch of product \($0) went well") }
        items.append(Fixtures.item("lanch", text: "Lanch is a village by the river"))
        try await index.indexItems(items)
        let found = try await Self.found(fixture.store, "lanch")
        #expect(found.first == "lanch", "\(found)")
        #expect(found.count == 13)
        // A word held often enough is never corrected.
        #expect(try await Self.found(fixture.store, "launch").count == 12)
    }

    /// `suggest` completes a prefix with a typo in it, when nothing completes it as typed.
    @Test(arguments: TestBackend.available)
    func suggestionsCompleteAPrefixWithATypo(_ backend: TestBackend) async throws {
        let fixture = try await backend.makeStore(signingIn: "alice")
        try await fixture.store.index(account: "alice").indexItems([
            Fixtures.item("launch", text: "The rocket launch was moved to Friday"),
            Fixtures.item("lantern", text: "A lantern by the door"),
        ])
        #expect(try await fixture.store.suggestions(for: "launc") == ["launch"])
        #expect(try await fixture.store.suggestions(for: "lanuc") == ["launch"], "a swap")
        #expect(try await fixture.store.suggestions(for: "rokce") == ["rocket"], "a swap")
        #expect(try await fixture.store.suggestions(for: "lnt").isEmpty, "three letters: not corrected")
        #expect(try await fixture.store.suggestions(for: "xyzzy").isEmpty)
    }

    @Test func editsAreCountedAsTheRuleSays() {
        func distance(_ a: String, _ b: String, limit: Int = 3) -> Int {
            Typos.distance(Array(a.unicodeScalars), Array(b.unicodeScalars), limit: limit)
        }
        #expect(distance("launch", "launch") == 0)
        #expect(distance("lanch", "launch") == 1)
        #expect(distance("luanch", "launch") == 1, "a swap of neighbours is one edit")
        #expect(distance("lnuach", "launch") == 2)
        #expect(distance("hauser", "häuser") == 1)
        #expect(distance("abcdef", "uvwxyz", limit: 2) == 3, "past the limit: the limit and one")
        #expect(Typos.edits(forLength: 8) == 1 && Typos.edits(forLength: 9) == 2)
        let neighbours: [(word: String, documents: Int64)] = [
            ("launch", 40), ("lunch", 5), ("laundry", 9), ("lanch", 3),
        ]
        #expect(Typos.corrections(of: "lanch", among: neighbours) == ["launch", "lunch"])
        #expect(
            Typos.corrections(of: "lanch", among: [("launch", 20), ("lanch", 3)]) == [],
            "held in more than a tenth of its neighbour's items: not a typo")
    }

    /// A writer's changes come out of its thread's count in the order of the SQLite vocabulary's key
    /// (first character, length in characters, then UTF-8 bytes), which its upserts then follow
    /// through the table; each with the documents that had it.
    @Test func theCountedChangesComeOutInTheVocabularysOrder() throws {
        let connection = try Connection(path: ":memory:")
        try connection.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'replica en')")
        let texts = [
            "Zebra crossings and apple orchards", "Äpfel und Birnen, apple again", "zebra Zürich Apfel 12345",
            "internationalization überall", "Mango mango MANGO", "Москва и Мурманск", "Ελλάδα",
        ]
        TextAnalyzer.Vocabulary.discard()
        for text in texts {
            try TextAnalyzer.withDocumentLanguage(nil, counting: .adding) {
                try connection.cached("INSERT INTO t(body) VALUES (?)").run([.text(text)])
            }
        }
        let changes = TextAnalyzer.Vocabulary.drain()
        let tokens = changes.map(\.token)
        #expect(tokens.count > 10)
        func key(_ token: String) -> (first: String.UTF8View, length: Int, bytes: String.UTF8View) {
            (String(token.unicodeScalars.first!).utf8, token.unicodeScalars.count, token.utf8)
        }
        #expect(
            tokens
                == tokens.sorted {
                    let (a, b) = (key($0), key($1))
                    if !a.first.elementsEqual(b.first) { return a.first.lexicographicallyPrecedes(b.first) }
                    if a.length != b.length { return a.length < b.length }
                    return a.bytes.lexicographicallyPrecedes(b.bytes)
                })
        #expect(tokens.firstIndex(of: "appl")! < tokens.firstIndex(of: "again")!, "a shorter token first")
        #expect(
            tokens.contains("москва") && tokens.contains { $0.hasPrefix("ελλ") }, "other scripts, by their bytes")
        #expect(Set(tokens).count == tokens.count, "each token once")
        let counted = Dictionary(uniqueKeysWithValues: changes.map { ($0.token, $0.change) })
        #expect(counted["zebra"] == 2 && counted["mango"] == 1 && counted["apple"] == 2)
        #expect(TextAnalyzer.Vocabulary.drain().isEmpty, "a drain forgets what it gave")
    }
}
