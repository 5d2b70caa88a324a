import Foundation
import Replica
import ReplicaTestSupport
import Testing

/// Many processes (and sessions) on one store: a batch that compares the client state before it writes
/// its own lands exactly once among writers that race for the same state, on either backend.
@Suite struct SharedStoreTests {
    let directory: TemporaryDirectory
    let place: CLIPlace

    init() throws {
        directory = try TemporaryDirectory()
        place = CLIPlace(directory: directory)
    }

    /// Four `replica import --expected-client-state` processes started at once, each expecting the state
    /// the last round left: one lands, the others write nothing and say why. Three rounds.
    @Test(arguments: TestBackend.available)
    func compareAndSwapImportsFromManyProcessesLandExactlyOnce(_ backend: TestBackend) async throws {
        try await place.use(backend, signingIn: "a")
        var state = "start"
        let first = try await ReplicaProcess.running(
            place.arguments + [
                "import", "--account", "a", "--client-state", state,
                "--expect-no-client-state", try line("first"),
            ])
        #expect(first.status == 0, "\(first.standardError)")
        var winners = ["first"]
        for round in 0..<3 {
            let contenders = try (0..<4).map { number in
                try RunningProcess(
                    replica: place.arguments + [
                        "import", "--account", "a", "--client-state", "r\(round)-p\(number)",
                        "--expected-client-state", state, try line("r\(round)-p\(number)"),
                    ],
                    environment: ["REPLICA_MODEL_DIR": "off"])
            }
            var landed: [Int] = []
            for (number, contender) in contenders.enumerated() {
                let status = await contender.exit(within: 120)
                if status == 0 {
                    landed.append(number)
                } else {
                    #expect(status == 1)
                    #expect(contender.standardError.contains("not the expected one"), "\(contender.standardError)")
                }
            }
            #expect(landed.count == 1, "round \(round): \(landed.count) imports landed")
            guard let winner = landed.first else { return }
            state = "r\(round)-p\(winner)"
            winners.append(state)
        }
        let store = try place.openStore()
        let index = try await store.index(account: "a")
        #expect(try await index.fetchLastClientState() == Data(state.utf8))
        #expect(try await index.allItems().map(\.uniqueIdentifier.rawValue).sorted() == winners.sorted())
    }

    /// Eight stores of one folder or database (eight connections, as eight app servers would hold),
    /// racing twenty times for the same state from tasks started together: exactly one batch a round.
    @Test(arguments: TestBackend.available)
    func compareAndSwapBatchesFromManySessionsLandExactlyOnce(_ backend: TestBackend) async throws {
        let made = try await backend.makeStore(signingIn: "a")
        let stores = try (0..<8).map { _ in try made.open() }
        var state: Data? = nil
        for round in 0..<20 {
            let expected = state
            let outcomes = await withTaskGroup(of: (Int, Bool).self) { group in
                for (number, store) in stores.enumerated() {
                    group.addTask {
                        do {
                            let batch = try await store.index(account: "a").beginBatch()
                            try batch.indexItems([Self.item("r\(round)-s\(number)")])
                            try await batch.end(
                                expectedClientState: expected, newClientState: Data("r\(round)-s\(number)".utf8))
                            return (number, true)
                        } catch let error as ReplicaError where error.code == .clientStateMismatch {
                            return (number, false)
                        } catch {
                            Issue.record(error)
                            return (number, false)
                        }
                    }
                }
                return await group.reduce(into: [(Int, Bool)]()) { $0.append($1) }
            }
            let landed = outcomes.filter(\.1).map(\.0)
            #expect(landed.count == 1, "round \(round): \(landed.count) batches landed")
            guard let winner = landed.first else { return }
            state = Data("r\(round)-s\(winner)".utf8)
            let items = try await made.store.index(account: "a").items(
                withIdentifiers: (0..<8).map { ItemIdentifier("r\(round)-s\($0)") })
            #expect(items.map(\.uniqueIdentifier.rawValue) == ["r\(round)-s\(winner)"])
        }
        #expect(try await made.store.index(account: "a").fetchLastClientState() == state)
    }

    static func item(_ name: String) -> SearchableItem {
        var attributes = AttributeSet(contentType: .plainText)
        attributes.textContent = "a note named \(name)"
        return SearchableItem(
            uniqueIdentifier: ItemIdentifier(name), attributeSet: attributes, expirationDate: .distantFuture)
    }

    /// A file of one line: an item named `name`.
    func line(_ name: String) throws -> String {
        let path = directory.path + "/\(name).jsonl"
        try
            #"{"uniqueIdentifier": "\#(name)", "expirationDate": "2099-01-01T00:00:00Z", "attributes": {"textContent": "a note named \#(name)"}}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
