/// A load: many write transactions in a row into the same indexes (a folder's first sync, an import),
/// whose caller settles each index's vocabulary once at its end (``SearchableIndex/settleVocabulary()``).
///
/// Within one, a SQLite index appends each transaction's vocabulary changes (``TextAnalyzer/Vocabulary``)
/// to a table of their own, a row a token, instead of counting them into the vocabulary token by token:
/// that upsert, with the move of the token's entry in the index typos are found by, cost 1.4 s of an 11 s
/// sync of the linux-doc tree (`docs/benchmarks/indexing.md`, 2026-12-06). The settling, or the index's
/// next write outside a load, adds them up in one statement, in its transaction; a load that was killed
/// leaves its rows to that next write. Until then, a typo is corrected only towards the tokens the index
/// held before the load; every item the load wrote is found by its words as soon as its transaction
/// commits, as always. PostgreSQL counts the vocabulary in each transaction, in a load or not.
///
/// A SQLite index's transactions in a load also leave FTS5's segments unmerged (up to 64 a level), for
/// the ranking lists' build after the load to merge once (`SQLiteIndexWriter.withoutMergingSegments`).
package enum IndexLoad {
    /// Whether the current task is in a load (``withLoad(_:)``).
    @TaskLocal package static var isRunning = false

    /// Runs `body` as a load. The caller settles the vocabulary of the indexes it wrote afterwards.
    package static func withLoad<T>(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
    ) async rethrows -> T {
        try await $isRunning.withValue(true) { try await body() }
    }

    /// `body`, to run on a thread of its own (`Blocking.run`) in the load the caller is in, if it is in
    /// one: a task's locals do not follow work handed to a dispatch queue, so the projection engine's
    /// writes in `sync` and `records import` were written as if outside their load.
    package static func carried<T>(_ body: @escaping @Sendable () throws -> T) -> @Sendable () throws -> T {
        let running = isRunning
        return { try $isRunning.withValue(running) { try body() } }
    }
}
