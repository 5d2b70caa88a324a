import Foundation
import ReplicaCore
import ReplicaIndex
import ReplicaPostgres
import ReplicaTestSupport
import Testing

@testable import ReplicaPostgresStore

/// Vectors held in memory by one process, kept current through `LISTEN replica_vectors` when another
/// process writes: two storages of the same index, each on a pool of its own, as two app servers are.
@Suite(.enabled(if: PostgresTestServer.isEnabled, "needs a PostgreSQL server (scripts/setup-system.sh installs one)"))
struct VectorNoticesTests {
    let database: PostgresTestDatabase
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    init() throws {
        database = try PostgresTestServer.makeMigratedDatabase()
    }

    /// Indexes an item through `storage` and stores its one vector; returns the index's vectors_version after.
    func add(_ name: String, vector: [Float], through storage: PostgresIndexStorage) async throws -> String? {
        let now = now
        return try await storage.write(now: now, defaultLifetime: 3600, prepare: {}) { writer in
            try writer.index(Fixtures.item(name, title: name, text: "text of \(name)"), origin: .api)
            let id = try #require(try writer.rowID(of: ItemIdentifier(name)))
            #expect(
                try writer.setVectors(
                    [vector], for: PendingEmbedding(rowID: id, indexed: now.timeIntervalSince1970, text: ""), model: "m"
                ))
            return try writer.meta("vectors_version")
        }
    }

    /// The items of the vectors `storage` holds (read by a search-like read: from its cache when current).
    func heldItems(_ storage: PostgresIndexStorage) async throws -> [Int64] {
        try await storage.read(now: now, prepare: {}) { reader in
            try (reader as! PostgresIndexReader).matrix(model: "m").items
        }
    }

    /// alice's index through a pool of its own.
    func storage(_ notices: VectorNotices? = nil) async throws -> PostgresIndexStorage {
        let url = database.url
        return try await Blocking.run {
            try PostgresIndexStorage(
                pool: PostgresPool(url: url, maximumConnections: 1), account: "alice", indexName: "default",
                vectorNotices: notices)
        }
    }

    @Test func anotherProcessesVectorsReachTheHeldOnesBeforeTheNextSearch() async throws {
        let writer = try await storage()
        let searcher = try await storage(VectorNotices(url: database.url))
        _ = try await add("first", vector: [1, 0], through: writer)
        #expect(try await heldItems(searcher).count == 1)
        #expect(searcher.vectorCache.readCount == 1)

        // Another process stores vectors: the searcher's listener hears it and reads them, not its next search.
        let version = try await add("second", vector: [0, 1], through: writer)
        #expect(
            await eventually { searcher.vectorCache.held?.version == version },
            "the held vectors stayed at \(String(describing: searcher.vectorCache.held?.version)), the index is at \(String(describing: version))"
        )
        #expect(searcher.vectorCache.readCount == 2)
        #expect(try await heldItems(searcher).count == 2)
        #expect(searcher.vectorCache.readCount == 2, "the search read the vectors again")

        // A delete moves the version too; without a listener, a search reads them itself, as before.
        let plain = try await storage()
        #expect(try await heldItems(plain).count == 2)
        let deleted = try await writer.write(now: now, defaultLifetime: 3600, prepare: {}) { writer in
            _ = try writer.delete(identifiers: ["first"], owner: nil)
            return try writer.meta("vectors_version")
        }
        #expect(await eventually { searcher.vectorCache.held?.version == deleted })
        #expect(try await heldItems(searcher).count == 1)
        #expect(searcher.vectorCache.readCount == 3)
        #expect(try await heldItems(plain).count == 1)
        #expect(plain.vectorCache.readCount == 2)
    }
}
