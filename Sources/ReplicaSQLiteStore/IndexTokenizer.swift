import ReplicaIndex
package import ReplicaSQLite

/// The tokenizer of the index's full-text table (`tokenize` in `migrations/index/0012-every-language.sql`:
/// replica's analyzer, ``TextAnalyzer``), made
/// once per process. The SQLite reader splits a query's words with it as FTS5 stored them; the
/// PostgreSQL store builds its `tsvector`s with it, so that both backends match the same items.
package enum IndexTokenizer {
    package static let specification = "replica"

    /// The tokenizer, or why it cannot be made (replica's analyzer is registered on every connection).
    package static let shared = Result { try FTS5Tokenizer(specification) }
}
