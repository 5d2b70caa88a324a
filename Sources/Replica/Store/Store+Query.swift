import Foundation
import Synchronization

extension Store {
    /// Starts a query for the items that satisfy a Core Spotlight query string, as `CSSearchQuery` does.
    ///
    /// For example:
    /// ```swift
    /// let query = try store.query(#"title == "launch*"cd && contentModificationDate > $time.today(-7)"#,
    ///                             fetchAttributes: [.title, .contentModificationDate])
    /// for try await result in query.results {
    ///     print(result.item.uniqueIdentifier, result.item.attributeSet.title ?? "")
    /// }
    /// print(query.foundItemCount)
    /// ```
    ///
    /// - Parameters:
    ///   - queryString: comparisons joined with `&&`, `||`, `!` and parentheses (see `QueryPredicate`).
    ///   - fetchAttributes: the attributes each result carries; `nil` for all but the text content.
    ///   - accounts: the signed-in accounts to look in; empty for all of them.
    ///   - indexNames: the named indexes to look in; `nil` for all of them.
    ///   - limit: the most items to find.
    /// - Throws: `ReplicaError` with code `invalidQuery` naming the column of a mistake in the string.
    public func query(
        _ queryString: String, fetchAttributes: [AttributeKey]? = nil, accounts: [AccountID] = [],
        indexNames: [String]? = nil, limit: Int = SearchQuery.maximumLimit
    ) throws -> ItemQuery {
        var query = try SearchQuery(queryString: queryString, limit: limit)
        query.fetchAttributes = fetchAttributes
        query.accounts = accounts
        _ = try query.validatedPattern()
        return ItemQuery(store: self, query: query, indexNames: indexNames)
    }

    /// Starts a query for what a `SearchQuery` finds, its results delivered index by index.
    public func query(_ query: SearchQuery, indexNames: [String]? = nil) throws -> ItemQuery {
        _ = try query.validatedPattern()
        return ItemQuery(store: self, query: query, indexNames: indexNames)
    }
}

/// A running query over a store's indexes: its results as an asynchronous sequence and the number found
/// so far, as Core Spotlight's `CSSearchQuery` has them.
///
/// Results come account by account and index by index (in account and index-name order); within an
/// index, by relevance when the query has words and newest first when it has none. Reading ``results``
/// runs the query; reading it again runs it again.
public final class ItemQuery: Sendable {
    /// What is looked for.
    public let query: SearchQuery
    let store: Store
    let indexNames: [String]?
    private let found = Mutex(0)

    init(store: Store, query: SearchQuery, indexNames: [String]?) {
        self.store = store
        self.query = query
        self.indexNames = indexNames
    }

    /// How many items the last reading of ``results`` has delivered so far.
    public var foundItemCount: Int { found.withLock { $0 } }

    /// The items found, read lazily: each index is searched when the one before it is used up.
    public var results: Results { Results(query: self) }

    /// The results of a query, as an asynchronous sequence; each iteration runs the query anew.
    public struct Results: AsyncSequence, Sendable {
        /// Each element is one item found.
        public typealias Element = SearchResult
        let query: ItemQuery

        /// Starts a new run of the query.
        public func makeAsyncIterator() -> Iterator { Iterator(query: query) }

        /// Runs the query, searching one index at a time as the results before are used up.
        public struct Iterator: AsyncIteratorProtocol {
            let query: ItemQuery
            /// The indexes still to search, worked out on the first `next()`.
            var targets: [(AccountID, String)]?
            var buffer: [SearchResult] = []
            var delivered = 0
            /// The query's vector for semantic search, made once for every index.
            var semantic: SemanticQuery?

            /// The next result, or `nil` once the query's limit is reached or every index is searched.
            ///
            /// On the first call, works out the signed-in accounts (those of the query, if it names any) and their
            /// indexes, and resets the query's ``ItemQuery/foundItemCount``.
            ///
            /// - Returns: the next result, or `nil` at the end.
            /// - Throws: `CancellationError` when the task is cancelled, or the error of reading the store's accounts
            ///   or searching an index.
            public mutating func next() async throws -> SearchResult? {
                let store = query.store
                if targets == nil {
                    query.found.withLock { $0 = 0 }
                    await store.refreshIfCatalogChanged()
                    let accounts = try await store.signedInAccounts(among: query.query.accounts).map(\.id)
                    var found: [(AccountID, String)] = []
                    for account in accounts {
                        let names =
                            if let indexNames = query.indexNames { indexNames } else {
                                try await store.indexNames(for: account)
                            }
                        found += names.map { (account, $0) }
                    }
                    targets = found
                    semantic = await store.semanticQuery(for: query.query)
                }
                while buffer.isEmpty, delivered < query.query.limit, let (account, name) = targets?.first {
                    targets?.removeFirst()
                    try Task.checkCancellation()
                    guard let index = try await store.existingIndex(named: name, account: account) else { continue }
                    var remaining = query.query
                    remaining.limit = query.query.limit - delivered
                    buffer = try await index.search(remaining, semantic: semantic)
                }
                guard delivered < query.query.limit, !buffer.isEmpty else { return nil }
                delivered += 1
                query.found.withLock { $0 += 1 }
                return buffer.removeFirst()
            }
        }
    }
}
