import Foundation
import ReplicaTestSupport
import Synchronization
import Testing

@testable import Replica
@testable import ReplicaEmbedding
@testable import ReplicaIndex

/// A damaged model, or one that misbehaves, is an error the store reports and searches around: never a
/// crash, never a hang, never a vector that is not numbers in the index.
@Suite(.serialized) struct ModelDamageTests {
    /// A store whose embedder is `embedder`, with one item indexed; events go to `events`.
    static func store(in directory: TemporaryDirectory, embedder: any Embedder, events: Recorder<StoreEvent>)
        async throws -> Store
    {
        var configuration = Store.Configuration()
        configuration.embedder = embedder
        configuration.events = { events.append($0) }
        let store = try Store(directory: directory.appending("store"), configuration: configuration)
        try await store.signIn("a")
        try await store.index(account: "a").indexItems([
            Fixtures.item("cat", title: "Afternoon", text: "The feline dozed on the rug all afternoon.")
        ])
        return store
    }

    /// Each damage to a copy of the installed model is a thrown `ReplicaError` (at load, or at the first
    /// embedding), never a crash: embedding stores nothing, and a search answers by the words and says
    /// once why it did not search by meaning.
    @Test(arguments: [ModelCopy.Damage.headerLength, .dataOffsets, .hugeShape, .wrongShape, .notANumber, .infinity])
    func aDamagedModelIsAnErrorAndSearchAnswersByTheWords(_ damage: ModelCopy.Damage) async throws {
        let scratch = try TemporaryDirectory()
        let folder = try ModelCopy.make(damage, in: scratch.url)
        #expect(throws: ReplicaError.self, "loading, or else embedding, fails") {
            let model = try MiniLMEmbedder(directory: folder)
            _ = try model.embed(documents: ["The feline dozed on the rug all afternoon."])
        }

        let events = Recorder<StoreEvent>()
        let store = try await Self.store(
            in: scratch, embedder: try LazyMiniLMEmbedder(directory: folder), events: events)
        await #expect(throws: ReplicaError.self) { try await store.embedPendingItems() }
        let status = try #require(try await store.embeddingStatus(of: store.index(account: "a")))
        #expect(status.items == 0 && status.passages == 0 && status.backlog == 1)

        let found = try await store.search(SearchQuery("feline"))
        #expect(found.map(\.item.uniqueIdentifier) == ["cat"] && found.first?.match == .lexical)
        let failures = events.all.filter { $0.kind == .embeddingFailed }
        #expect(
            failures.count == 1 && failures[0].message.contains("semantic search is off for this query"),
            "\(events.all)")
    }

    /// The file's numbers are checked before any arithmetic: lengths, offsets and shapes that do not fit
    /// the file (or 64 bits) are refused with what was wrong.
    @Test func safeTensorsRefusesLengthsOffsetsAndShapesThatDoNotFit() throws {
        let directory = try TemporaryDirectory()
        func file(_ header: String, declaring length: UInt64? = nil, data: Int = 16) throws -> String {
            let json = Array(header.utf8)
            let bytes =
                withUnsafeBytes(of: (length ?? UInt64(json.count)).littleEndian) { Array($0) } + json
                + [UInt8](repeating: 0, count: data)
            let path = directory.url.appendingPathComponent(UUID().uuidString).path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return path
        }
        let good = #"{"t":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}"#
        #expect(try SafeTensors(path: file(good)).tensor("t", shape: [2, 2]).array == [0, 0, 0, 0])
        let refused: [(String, UInt64?, String)] = [
            (good, UInt64(Int64.max), "header"),
            (good, UInt64.max, "header"),
            (good, 0, "header"),
            (
                #"{"t":{"dtype":"F32","shape":[2,2],"data_offsets":[9223372036854775807,9223372036854775807]}}"#, nil,
                "tensor t"
            ),
            (#"{"t":{"dtype":"F32","shape":[2,2],"data_offsets":[0,9223372036854775807]}}"#, nil, "tensor t"),
            (#"{"t":{"dtype":"F32","shape":[2,2],"data_offsets":[16,0]}}"#, nil, "tensor t"),
            (#"{"t":{"dtype":"F32","shape":[2,2],"data_offsets":[-16,0]}}"#, nil, "tensor t"),
            (#"{"t":{"dtype":"F32","shape":[4294967296,4294967296,4],"data_offsets":[0,16]}}"#, nil, "tensor t"),
            (#"{"t":{"dtype":"F32","shape":[2305843009213693952,2],"data_offsets":[0,16]}}"#, nil, "tensor t"),
            (#"{"t":{"dtype":"F32","shape":[-2,-2],"data_offsets":[0,16]}}"#, nil, "tensor t"),
            (#"{"t":{"dtype":"F32","shape":[2,"2"],"data_offsets":[0,16]}}"#, nil, "tensor t"),
            (#"{"t":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16,32]}}"#, nil, "tensor t"),
            (#"{"t":{"dtype":"F32","shape":[2,2.5],"data_offsets":[0,16]}}"#, nil, "tensor t"),
        ]
        for (header, length, mentioned) in refused {
            let path = try file(header, declaring: length)
            let error = #expect(throws: ReplicaError.self, "\(header) declared \(length.map(String.init) ?? "as is")") {
                try SafeTensors(path: path)
            }
            #expect(
                error?.message.contains("not a safetensors file") == true && error?.message.contains(mentioned) == true,
                "\(String(describing: error))")
        }
    }

    /// Values that are not finite numbers are found where they would be read: a layer's at load, the
    /// word table's row when a word uses it.
    @Test func nonFiniteWeightsAreFoundAtLoadOrWhenTheirWordIsRead() throws {
        func allFinite(_ values: [Float]) -> Bool { values.withUnsafeBufferPointer(SafeTensors.allFinite) }
        var values: [Float] = (0..<1000).map { Float($0) / 1000 }
        #expect(allFinite(values))
        for position in [0, 1, 7, 8, 15, 16, 500, 991, 998, 999] {
            for bad in [Float.nan, .infinity, -.infinity, .signalingNaN] {
                let saved = values[position]
                values[position] = bad
                #expect(!allFinite(values), "\(bad) at \(position)")
                values[position] = saved
            }
        }
        #expect(
            !allFinite([Float.greatestFiniteMagnitude, .greatestFiniteMagnitude]),
            "values whose squares overflow are refused too")
        #expect(allFinite([]))
    }

    /// An embedder that gives numbers that are not finite (a host's, or a damaged model's) has nothing
    /// stored: the embedding fails with a `ReplicaError`, and the query is answered by the words.
    @Test func aVectorThatIsNotFiniteIsNeverStored() async throws {
        struct NotANumber: Embedder {
            let modelIdentifier = "not-a-number"
            let dimensions = 4
            func embed(query: String) throws -> [Float] { [.nan, 0, 0, 0] }
            func embed(documents: [String]) throws -> [[[Float]]] {
                documents.map { _ in [[0.5, 0.5, 0.5, 0.5], [.infinity, 0, 0, 0]] }
            }
        }
        let scratch = try TemporaryDirectory()
        let events = Recorder<StoreEvent>()
        let store = try await Self.store(in: scratch, embedder: NotANumber(), events: events)
        let error = await #expect(throws: ReplicaError.self) { try await store.embedPendingItems() }
        #expect(error?.message.contains("not a finite number") == true, "\(String(describing: error))")
        let status = try #require(try await store.embeddingStatus(of: store.index(account: "a")))
        #expect(status.items == 0 && status.passages == 0 && status.backlog == 1)
        let found = try await store.search(SearchQuery("feline"))
        #expect(found.map(\.item.uniqueIdentifier) == ["cat"] && found.first?.match == .lexical)
        #expect(events.all.filter { $0.kind == .embeddingFailed }.count == 1, "\(events.all)")
    }

    /// Model files that are FIFOs (or other special files) are refused at once: opening one for reading
    /// would wait for a writer that never comes.
    @Test(arguments: [ModelCopy.Damage.weightsFIFO, .vocabularyFIFO])
    func aFIFOInsteadOfAModelFileIsRefusedAtOnce(_ damage: ModelCopy.Damage) async throws {
        let scratch = try TemporaryDirectory()
        let folder = try ModelCopy.make(damage, in: scratch.url)
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        Thread.detachNewThread {
            let result = Result { _ = try MiniLMEmbedder(directory: folder) }
            outcome.withLock { $0 = result }
        }
        let finished = await eventually { outcome.withLock { $0 != nil } }
        if !finished {
            // Free the thread blocked in open(): a writer that opens and closes gives the reader its end of file.
            for name in ["model.safetensors", "vocab.txt"] {
                let writer = open(folder.appendingPathComponent(name).path, O_WRONLY | O_NONBLOCK)
                if writer >= 0 { close(writer) }
            }
        }
        #expect(
            finished,
            "loading a model whose \(damage == .weightsFIFO ? "weights are" : "vocabulary is") a FIFO did not finish")
        let error = outcome.withLock { result -> (any Error)? in
            if case .failure(let error) = result { return error }
            return nil
        }
        #expect(
            (error as? ReplicaError)?.message.contains("not a regular file") == true, "\(String(describing: error))")
    }

    /// Work on the model is abandoned when its task is cancelled: `replica watch` stops at once even if the
    /// model is slow to load or to answer (its thread finishes, or not, on its own).
    @Test func embeddingIsAbandonedWhenItsTaskIsCancelled() async throws {
        final class Stuck: Embedder, @unchecked Sendable {
            let modelIdentifier = "stuck"
            let dimensions = 4
            let entered = Mutex(false)
            let release = DispatchSemaphore(value: 0)
            func embed(query: String) throws -> [Float] { [1, 0, 0, 0] }
            func embed(documents: [String]) throws -> [[[Float]]] {
                entered.withLock { $0 = true }
                release.wait()
                return documents.map { _ in [[1, 0, 0, 0]] }
            }
        }
        let scratch = try TemporaryDirectory()
        let embedder = Stuck()
        let store = try await Self.store(in: scratch, embedder: embedder, events: Recorder())
        let ended = Mutex<Result<Int, any Error>?>(nil)
        let task = Task {
            let result = await Result { try await store.embedPendingItems() }
            ended.withLock { $0 = result }
        }
        #expect(await eventually { embedder.entered.withLock { $0 } })
        task.cancel()
        let stopped = await eventually { ended.withLock { $0 != nil } }
        embedder.release.signal()
        #expect(stopped, "the cancelled task waited for the model")
        let wasCancelled = ended.withLock { result in
            if case .failure(let error) = result { return error is CancellationError }
            return false
        }
        #expect(wasCancelled)
        await task.value
        let status = try #require(try await store.embeddingStatus(of: store.index(account: "a")))
        #expect(status.items == 0 && status.backlog == 1, "nothing is stored from abandoned work")
    }
}

extension Result where Failure == any Error {
    /// The result of an async throwing body.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
