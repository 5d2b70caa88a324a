import Foundation

/// Gives the search tool the running form of a source, so it can ask the source about its items.
///
/// The library never imports the sources; a host (the `replica` command, an app) that runs them passes
/// one of these.
public protocol SourceResolver: Sendable {
    /// The running source for this stored definition, to ask about its items.
    /// Throw when this host cannot run the kind; the source's results are then withheld, not removed.
    func source(for definition: SourceDefinition) throws -> any Source
}

/// A host's answer for items it indexed directly (through `SearchableIndex` or `replica import`): do
/// they still exist, at which version, may the account read them — with full content when asked.
public protocol HydrationDelegate: Sendable {
    /// The current state of these items of the account's index `indexName`: `.gone` withholds an item and
    /// removes it from the index; an item left out, an error or a timeout withholds it and keeps it.
    func currentItems(
        _ identifiers: [ItemIdentifier], account: AccountID, indexName: String,
        includingContent: Bool
    ) async throws -> [ItemIdentifier: SourceAnswer]
}

/// An item hydration did not let through, and why (never quoting its content).
public struct DroppedItem: Sendable, Equatable {
    /// The account of the search result the item came from.
    public var account: AccountID
    /// The item's identifier.
    public var identifier: ItemIdentifier
    /// Why the item was withheld, in words.
    public var reason: String
}

/// How search results are checked with their owners before anyone is shown them (hydration).
///
/// For example:
/// ```swift
/// var hydration = Hydration()
/// hydration.projections = ProjectionSet([Projection(kind: "note")], indexName: "Notes")   // how records become items
/// hydration.delegate = nil        // or the app's HydrationDelegate, asked about items it indexed itself
/// let found = try await store.search(SearchQuery("launch plan"), hydration: hydration)
/// ```
public struct Hydration: Sendable {
    /// How records become items, and the index they go to: the projections the app's own engine (or
    /// `replica watch`) uses. With them, the search tool catches the accounts it searches up with their
    /// record stores and followed tables before each call, and a record's result is refreshed with the
    /// record's current fields. Without them (the default), keeping the index fresh is the host's job,
    /// and a record's result is shown as indexed once its record is found at that version.
    public var projections: ProjectionSet?
    /// App tables the projection engine follows; their rows are asked about their items.
    public var followedTables: [FollowedTable]
    /// Runs sources so they can be asked about their items; without it their items are withheld.
    public var sourceResolver: (any SourceResolver)?
    /// Asked about items a host indexed itself; without it they stand as stored.
    public var delegate: (any HydrationDelegate)?
    /// How long an item's owner has to answer; one that does not is taken to have said no.
    public var timeout: Duration

    /// Makes hydration settings; by default no projections (so no catch-up and no index of its own), no
    /// followed tables, no source resolver or delegate, and five seconds for an owner to answer.
    ///
    /// - Parameters:
    ///   - projections: How records become items.
    ///   - followedTables: App tables whose rows are asked about their items.
    ///   - sourceResolver: Runs sources so they can be asked about their items.
    ///   - delegate: Asked about items a host indexed itself.
    ///   - timeout: How long an item's owner has to answer.
    public init(
        projections: ProjectionSet? = nil, followedTables: [FollowedTable] = [],
        sourceResolver: (any SourceResolver)? = nil, delegate: (any HydrationDelegate)? = nil,
        timeout: Duration = .seconds(5)
    ) {
        self.projections = projections
        self.followedTables = followedTables
        self.sourceResolver = sourceResolver
        self.delegate = delegate
        self.timeout = timeout
    }
}

/// What a hydrated search found: what passed, and what was withheld and why.
public struct HydratedResults: Sendable {
    /// The results that passed, best first, with their owners' current attributes.
    public var results: [SearchResult]
    /// Results that did not pass; those gone or unreadable are queued for removal from the index.
    public var dropped: [DroppedItem]
}

extension Store {
    /// Searches like ``search(_:indexNames:)``, then asks each result's owner about it and keeps only what
    /// is still there, at the version indexed, and readable by an account searched; dropped results are
    /// replaced by the next best until `query.limit` pass or the matches run out.
    ///
    /// - Parameters:
    ///   - query: the words and filters.
    ///   - indexNames: the indexes to search in each account; `nil` searches all of them.
    ///   - hydration: how results are checked with their owners.
    ///   - includingContent: also fetch each kept item's full text into its `textContent`.
    public func search(
        _ query: SearchQuery, indexNames: [String]? = nil, hydration: Hydration,
        includingContent: Bool = false
    ) async throws -> HydratedResults {
        var candidatesQuery = query
        candidatesQuery.limit = min(SearchQuery.maximumLimit, max(query.limit * 2, query.limit + 10))
        // Hydration traces each record's item to its record by attributes a query may not fetch: they are
        // read all the same, and left out of the results afterwards.
        candidatesQuery.fetchAttributes = query.fetchAttributes.map { $0 + Hydrator.tracingKeys }
        let candidates = try await search(candidatesQuery, indexNames: indexNames)
        let hydrator = try await Hydrator(store: self, accounts: query.accounts, hydration: hydration)
        var (kept, dropped) = await hydrator.hydrate(
            candidates, wanting: query.limit, includingContent: includingContent)
        if let fetched = query.fetchAttributes {
            let wanted = Set(fetched)
            kept = kept.map { result in
                var result = result
                var attributes = AttributeSet()
                for key in wanted { attributes[key] = result.item.attributeSet[key] }
                result.item.attributeSet = attributes
                return result
            }
        }
        return HydratedResults(results: kept, dropped: dropped)
    }
}
