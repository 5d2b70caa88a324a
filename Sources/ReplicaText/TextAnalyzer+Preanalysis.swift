import CAnalyzer

extension TextAnalyzer {
    /// A document's columns analyzed ahead of their indexing, on the thread that prepares rows, so that
    /// the writer's thread, where FTS5 calls its tokenizer, replays their tokens instead of analyzing
    /// the text itself: on two cores, analysis and writing overlap. The tokenizer checks that each text
    /// and its language are the ones it is given, and analyzes any that are not (the writer settled the
    /// item's language to another, say): a replay makes exactly the tokens an analysis would.
    public final class Preanalysis: @unchecked Sendable {
        // Owned until queued; the C queue owns them after, and they are forgotten here (by the writer's thread).
        private var analyses: [OpaquePointer?]

        /// Analyzes `columns` (each as FTS5 is given it, in column order) stemmed for `language`.
        public init(_ columns: [String], language: String?) {
            analyses = columns.map { column in
                var column = column
                return column.withUTF8 { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { text in
                        replica_preanalyze(text.baseAddress, text.count, language)
                    }
                }
            }
        }

        /// How many texts FTS5's tokenizer has replayed on the calling thread so far (for tests).
        public static var replayedOnThisThread: Int { Int(replica_preanalysis_replayed()) }

        /// How many threads' working tables, which the analysis keeps from one text to the next, have been
        /// freed as their threads ended, in the whole process (for tests).
        public static var tablesFreedAtThreadEnd: Int { Int(replica_preanalysis_tables_freed()) }

        deinit {
            analyses.forEach { replica_preanalysis_free($0) }
        }

        /// Runs `body`, which has FTS5 index the columns on this thread (once), with their tokens queued
        /// for the tokenizer to replay; drops what it did not replay. Called a second time, it runs
        /// `body` alone: the tokens were given away.
        public func replaying<Result>(_ body: () throws -> Result) rethrows -> Result {
            guard !analyses.isEmpty else { return try body() }
            analyses.forEach { replica_preanalysis_queue($0) }
            analyses = []
            defer { replica_preanalysis_discard() }
            return try body()
        }
    }
}
