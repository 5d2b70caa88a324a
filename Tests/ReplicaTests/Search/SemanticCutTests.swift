import Foundation
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaEmbedding
@testable import ReplicaIndex

/// How far meaning reaches, with the real model: an item found by meaning alone must be close in absolute
/// terms and against the query's best evidence, so that an exact match is not padded with look-alikes and
/// a question with no word in common still finds its one close item.
@Suite struct SemanticCutTests {
    static let customers = [
        "Acme Hardware", "Blue River Bakery", "Northwind Traders", "Greenleaf Florist", "Harbor Marine Supply",
        "Summit Dental", "Oakwood Library", "Pine Street Cafe", "Riverside Garage", "Maple Print Shop",
    ]
    static let lines = [
        "consulting hours", "replacement parts", "annual maintenance", "software licence", "delivery and installation",
        "printing of brochures", "cleaning services", "hardware upgrade", "training workshop", "spare tyres",
    ]

    /// Fifty invoices, alike but for their number, customer, date, line and amount.
    static let invoices: [SearchableItem] = (0..<50).map { number in
        let invoice = String(format: "INV-2024-%04d", 901 + number)
        let text = """
            Invoice \(invoice)
            Billed to: \(customers[number % 10])
            Date: 2024-\(String(format: "%02d", number % 12 + 1))-\(String(format: "%02d", number % 27 + 1))
            Description: \(lines[number * 3 % 10])
            Amount due: \(120 + number * 173).00 EUR, payable within 30 days.
            Thank you for your business.
            """
        return Fixtures.item("invoice-\(901 + number)", title: "Invoice \(invoice)", text: text)
    }

    static let notes: [SearchableItem] = [
        Fixtures.item(
            "sourdough", title: "Sourdough starter",
            text:
                "Feed the sourdough starter twice a day with equal weights of flour and water. The loaf needs a long cold proof overnight."
        ),
        Fixtures.item(
            "garage", title: "Garage",
            text: "Booked the garage for Friday: the winter tyres go on the car and the brakes get checked."),
        Fixtures.item(
            "vet", title: "Vet visit for Biscuit",
            text: "Took the dog to the vet on Monday: vaccinations done, weight is fine, next check-up in spring."),
        Fixtures.item(
            "taxes", title: "Tax return",
            text:
                "Gather the receipts for the tax return before the end of April; the accountant needs the payslips too."
        ),
        Fixtures.item(
            "holiday", title: "Summer holiday",
            text: "Train tickets to Lisbon are booked for the second week of August, hotel near the river."),
        Fixtures.item(
            "meeting", title: "Team meeting notes",
            text: "Discussed the release schedule, the open bugs in the importer and who reviews the new design."),
        Fixtures.item(
            "soup", title: "Lentil soup",
            text: "Red lentils, onion, carrot and cumin; simmer for twenty minutes and blend half of it."),
        Fixtures.item(
            "books", title: "Books to read",
            text: "A novel by Ishiguro, the history of the Hanseatic league, and a field guide to mushrooms."),
        Fixtures.item(
            "running", title: "Running plan",
            text: "Three short runs a week and one long run on Sunday, building up to ten kilometres by June."),
        Fixtures.item(
            "plumber", title: "Plumber",
            text: "The kitchen tap drips; the plumber comes on Tuesday morning between eight and ten."),
    ]

    let directory: TemporaryDirectory
    let store: Store

    init() async throws {
        directory = try TemporaryDirectory()
        var configuration = Store.Configuration()
        configuration.embedder = try #require(
            EmbedderTests.embedder, "the embedding model is not installed: run scripts/setup-model.sh")
        store = try Store(directory: directory.url, configuration: configuration)
        try await store.signIn("a")
    }

    func search(_ text: String, byMeaningAlone: Bool = false) async throws -> [(
        id: String, score: Double, match: SearchMatch
    )] {
        var query = SearchQuery(text, limit: 100)
        query.disablesLexicalSearch = byMeaningAlone
        return try await store.search(query).map { ($0.item.uniqueIdentifier.rawValue, $0.score, $0.match) }
    }

    /// An exact invoice number among 50 invoices: the one invoice, not the 49 others that are as close in
    /// meaning (their cosine with the number is about that of the invoice it names).
    @Test func anExactMatchIsNotPaddedWithLookAlikesByMeaning() async throws {
        try await store.index(account: "a").indexItems(Self.invoices + Self.notes)
        #expect(try await store.embedPendingItems() == 60)
        let found = try await search("INV-2024-0917")
        #expect(found.first?.id == "invoice-917" && found.first?.match == .both, "\(found.prefix(3))")
        #expect(found.count == 1, "\(found.count) results: \(found.prefix(5))")
        // By meaning alone the invoices are alike, but the notes, far from an invoice number, are not listed.
        let byMeaning = try await search("INV-2024-0917", byMeaningAlone: true)
        #expect(!byMeaning.isEmpty && byMeaning.allSatisfy { $0.id.hasPrefix("invoice-") }, "\(byMeaning.suffix(5))")
        #expect(byMeaning.allSatisfy { $0.score >= 0.2 }, "the floor by meaning alone")
    }

    /// "pet health" shares no word with the vet's note, and its cosine (0.33) is under the old fixed
    /// floor of 0.35; it is by far the closest item, so it is found, alone.
    @Test func aQuestionWithNoWordInCommonFindsItsOneCloseItem() async throws {
        try await store.index(account: "a").indexItems(Self.notes)
        #expect(try await store.embedPendingItems() == 10)
        let found = try await search("pet health")
        #expect(found.map(\.id) == ["vet"], "\(found)")
        #expect(found.first?.match == .semantic)
        #expect(try await search("pet health", byMeaningAlone: true).map(\.id) == ["vet"])
        // Nothing is close to nonsense: no result rather than the least far items.
        #expect(try await search("zebra quantum").isEmpty)
    }
}

/// Where a model's floor stands among the cosines of an index's passages (``MeaningFloor``).
@Suite struct MeaningFloorTests {
    /// Ten cosines around 0.80, one of them 0.84: median 0.80, spread 0.01.
    static let scores: [Float] = [0.79, 0.80, 0.81, 0.80, 0.79, 0.81, 0.80, 0.84, 0.80, 0.79]

    @Test func anItemMustStandOutBelowWhereUnrelatedTextsReach() {
        let floor = MeaningFloor(cosine: 0.76, unrelated: 0.805)
        // Three spreads above the median (0.83) is above where unrelated texts reach: that caps it.
        #expect(abs(floor.threshold(among: Self.scores) - 0.805) < 1e-6)
        let higher = MeaningFloor(cosine: 0.76, unrelated: 0.90)
        #expect(abs(higher.threshold(among: Self.scores) - 0.83) < 1e-6)
        // Far below every passage, the background is under the floor, which holds.
        #expect(abs(higher.threshold(among: Self.scores.map { $0 - 0.3 }) - 0.76) < 1e-6)
    }

    @Test func theFloorAloneHoldsWithoutABackground() {
        #expect(MeaningFloor(cosine: 0.2).threshold(among: Self.scores) == 0.2)
        let floor = MeaningFloor(cosine: 0.76, unrelated: 0.90)
        #expect(floor.threshold(among: Array(Self.scores.prefix(MeaningFloor.fewestForBackground - 1))) == 0.76)
        #expect(MeaningFloor.none.threshold(among: Self.scores) == -1)
    }
}

/// The meaning's share of a hybrid score (``Ranking/meaningShare(_:closest:farthest:)``): counted over
/// the candidates' own span, so that e5's cosines, which lie between 0.7 and 1, weigh as MiniLM's do.
@Suite struct MeaningShareTests {
    @Test func theShareRunsFromTheLeastCloseCandidateToTheClosest() {
        // e5-like closenesses: 0.30 to 0.60. The closest counts in full, the least close not at all.
        #expect(Ranking.meaningShare(0.60, closest: 0.60, farthest: 0.30) == 1)
        #expect(Ranking.meaningShare(0.30, closest: 0.60, farthest: 0.30) == 0)
        #expect(abs(Ranking.meaningShare(0.45, closest: 0.60, farthest: 0.30) - 0.5) < 1e-12)
        // Measured from the model's baseline instead, 0.45 would have counted 0.75 of the closest.
    }

    @Test func candidatesAboutAsCloseAsEachOtherAreNotSetApart() {
        // Three notes within 0.02 of each other: the span counts as 0.2, so they stay within a tenth.
        #expect(Ranking.meaningShare(0.50, closest: 0.50, farthest: 0.48) == 1)
        #expect(abs(Ranking.meaningShare(0.48, closest: 0.50, farthest: 0.48) - 0.9) < 1e-12)
        // One candidate alone is the closest: it counts in full.
        #expect(Ranking.meaningShare(0.22, closest: 0.22, farthest: 0.22) == 1)
    }
}
