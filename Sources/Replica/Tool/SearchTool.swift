import Foundation
import Synchronization

/// Where the search tool looks.
public enum SearchSource: Sendable {
    /// Items apps indexed, records projected from the record store, and git and plugin sources' items.
    case index(IndexSource)
    /// Items of file-tree sources, optionally only under some folders.
    case files(FileSource)

    /// The index with default options: every named index, no extra attributes, no cap of its own.
    public static var index: SearchSource { .index(IndexSource()) }
    /// File-tree sources' items with default options: every watched folder, no extra attributes, no cap of its own.
    public static var files: SearchSource { .files(FileSource()) }
}

/// Options of the index source.
public struct IndexSource: Sendable {
    /// Attributes shown with each result besides its title, snippet, type, dates and provenance.
    public var fetchAttributes: [AttributeKey]
    /// The most results this source contributes to a query (`nil`: no cap beyond the query's).
    public var maximumResultCount: Int?
    /// The named indexes searched (`nil`: all of them).
    public var indexNames: [String]?

    /// Makes index source options; by default no extra attributes, no cap of its own, and every named index.
    public init(fetchAttributes: [AttributeKey] = [], maximumResultCount: Int? = nil, indexNames: [String]? = nil) {
        self.fetchAttributes = fetchAttributes
        self.maximumResultCount = maximumResultCount
        self.indexNames = indexNames
    }
}

/// Options of the file source.
public struct FileSource: Sendable {
    /// Folders (absolute) whose files are searched; empty: every watched folder.
    public var scopes: [String]
    /// Attributes shown with each result besides its title, snippet, type, dates and provenance.
    public var fetchAttributes: [AttributeKey]
    /// The most results this source contributes to a query (`nil`: no cap beyond the query's).
    public var maximumResultCount: Int?

    /// Makes file source options; by default every watched folder, no extra attributes, and no cap of its own.
    public init(scopes: [String] = [], fetchAttributes: [AttributeKey] = [], maximumResultCount: Int? = nil) {
        self.scopes = scopes
        self.fetchAttributes = fetchAttributes
        self.maximumResultCount = maximumResultCount
    }
}

/// What a tool call gives back: the text the model reads, and whether it reports an error.
public struct ToolResult: Sendable, Equatable {
    /// The text the model reads: the results, or what went wrong.
    public var text: String
    /// Whether the call failed (arguments that could not be read, or a failed search); ``text`` then says why.
    public var isError: Bool
}

/// A search tool a host hands to its language model: OS 27's SpotlightSearchTool for everyone else.
///
/// The model sees ``name``, ``description`` and the JSON Schema ``parameters``, and calls the tool with
/// arguments as JSON; `call(arguments:)` returns the text it reads. The simplest call,
/// `{"query": "some words"}`, works at every guidance level. Before anything reaches the model, each
/// item's owner is asked about it (hydration): what is gone, no longer readable by a signed-in account,
/// stale, or cannot be checked in time is dropped and queued for removal. Indexed text is returned as
/// quoted data. The host can follow what the tool does through ``replies``.
///
/// For example:
/// ```swift
/// var configuration = SearchTool.Configuration()
/// configuration.guide = .focused(.communications)
/// configuration.contactResolver = FixedContactResolver(ResolvedContact(displayName: "Ada", emailAddresses: ["ada@example.com"]))
/// let tool = SearchTool(store: store, configuration: configuration)
/// let result = await tool.call(arguments: #"{"query": "launch risk", "from": "me"}"#)
/// ```
public final class SearchTool: Sendable {
    /// How a search tool is set up: where it looks, what the model is shown, and whose data it searches.
    public struct Configuration: Sendable {
        /// The tool's name as the model sees it.
        public var name = "search"
        /// Where the tool looks, each searched on its own and the results merged by score; the index and files by
        /// default.
        public var sources: [SearchSource] = [.index, .files]
        /// How much of the tool the model is shown and how results are written; everything by default.
        public var guide: Guide = .complete
        /// Who "me", "I" and "my" are in people fields; without it such a call is refused with a message saying so.
        public var contactResolver: (any ContactResolver)?
        /// The host's own pipeline stages, offered to the model beside the built-in ones.
        public var customStages: [any CustomStage] = []
        /// How each result is checked with its owner before the model sees it; its projections, when set,
        /// also catch the index up with the record store before each call.
        public var hydration = Hydration()
        /// The accounts searched, of those signed in; empty: all of them.
        public var accounts: [AccountID] = []
        /// The languages the person types in, as BCP 47 tags (Core Spotlight's `keyboardLanguage`): the
        /// model's words are stemmed for the first with stems (``SearchQuery/languages``); empty: the
        /// language of each query when it is clear, else English.
        public var languages: [String] = []
        /// Whether the model's words also find the index's words a typo in them may have meant
        /// (``SearchQuery/typoTolerance``).
        public var typoTolerance = true

        /// Makes a configuration; the name, hydration and accounts keep their defaults and can be set afterwards.
        ///
        /// - Parameters:
        ///   - sources: Where the tool looks.
        ///   - guide: How much of the tool the model is shown.
        ///   - contactResolver: Who "me" is in the model's arguments.
        ///   - customStages: The host's own pipeline stages.
        public init(
            sources: [SearchSource] = [.index, .files], guide: Guide = .complete,
            contactResolver: (any ContactResolver)? = nil,
            customStages: [any CustomStage] = []
        ) {
            self.sources = sources
            self.guide = guide
            self.contactResolver = contactResolver
            self.customStages = customStages
        }
    }

    /// The store searched.
    public let store: Store
    /// How the tool is set up.
    public let configuration: Configuration
    private let stream: (stream: AsyncStream<SearchReply>, continuation: AsyncStream<SearchReply>.Continuation)
    private let queryCounter = Atomic<Int>(0)

    /// Candidates an aggregate (count, group, statistic, table) looks at, at most.
    public static let aggregateLimit = 5_000

    /// Makes a tool that searches `store`.
    ///
    /// - Parameters:
    ///   - store: The store searched.
    ///   - configuration: How the tool is set up; the defaults search every signed-in account's index and files.
    public init(store: Store, configuration: Configuration = Configuration()) {
        self.store = store
        self.configuration = configuration
        stream = AsyncStream.makeStream(of: SearchReply.self, bufferingPolicy: .bufferingNewest(1_000))
    }

    deinit { stream.continuation.finish() }

    /// The tool's name as the model sees it.
    public var name: String { configuration.name }

    private var schema: ToolSchema {
        var searched: [String] = []
        for source in configuration.sources {
            switch source {
            case .index: searched.append("the user's notes, records and messages")
            case .files(let files):
                searched.append(
                    files.scopes.isEmpty ? "indexed files" : "files in " + files.scopes.joined(separator: ", "))
            }
        }
        return ToolSchema(
            guide: configuration.guide, customStages: configuration.customStages,
            me: configuration.contactResolver?.userIdentity(), searched: searched.joined(separator: " and "))
    }

    /// Tells the model what the tool does and how to call it.
    public var description: String { schema.description }

    /// The JSON Schema of the arguments.
    public var parameters: JSON { schema.parameters }

    /// The tool as `replica tool schema` prints it: `{"name", "description", "inputSchema"}`.
    public var definitionJSON: JSON {
        .object([("name", .string(name)), ("description", .string(description)), ("inputSchema", parameters)])
    }

    /// What the tool produces, query by query and stage by stage, while it runs. Read it from one task.
    public var replies: AsyncStream<SearchReply> { stream.stream }

    /// Runs a call with arguments as JSON text.
    public func call(arguments: String) async -> ToolResult {
        do {
            return await call(arguments: try JSON.parse(arguments))
        } catch let error as JSONParseError {
            return fail("the arguments are not valid JSON (\(error))", token: nextToken())
        } catch {
            return fail("the arguments could not be read", token: nextToken())
        }
    }

    /// Runs a call.
    public func call(arguments: JSON) async -> ToolResult {
        let now = store.configuration.index.clock()
        let reader = ToolRequestReader(
            guide: configuration.guide, customStages: configuration.customStages,
            me: configuration.contactResolver?.userIdentity(), now: now)
        let queries: [ToolQuery]
        do {
            queries = try reader.read(arguments)
        } catch let error as ToolError {
            return fail(error.description, token: nextToken())
        } catch {
            return fail("the arguments could not be read", token: nextToken())
        }
        // Counts, groups and statistics must reflect every committed change: with projections, the
        // accounts searched are brought up to date first (without, the host keeps them fresh). A failure is the host's to hear of (hydration still drops anything
        // stale); it is never swallowed.
        await catchUp()
        var outcomes: [QueryOutcome] = []
        for query in queries {
            let token = nextToken()
            do {
                outcomes.append(try await run(query, token: token, now: now))
            } catch let error as ToolError {
                return fail(error.description, token: token)
            } catch let error as ReplicaError where error.code == .invalidQuery {
                return fail(error.message, token: token)
            } catch {
                return fail(
                    "the search failed: \((error as? ReplicaError)?.message ?? "an internal error")", token: token)
            }
        }
        return ToolResult(text: ToolOutput.render(outcomes, format: configuration.guide.format), isError: false)
    }

    /// Applies the record store's and followed tables' changes to the accounts this tool searches, into
    /// the index the hydration's projections name; without projections, that is the host's job.
    private func catchUp() async {
        guard let projections = configuration.hydration.projections else { return }
        let engine = ProjectionEngine(
            store: store, projections: projections,
            followedTables: configuration.hydration.followedTables)
        let accounts: [AccountID]
        do {
            let signedIn = try await store.signedInAccounts().map(\.id)
            accounts = configuration.accounts.isEmpty ? signedIn : signedIn.filter(configuration.accounts.contains)
        } catch {
            return reportCatchUp(failure: error, account: nil)
        }
        for account in accounts {
            do {
                // Problems with a followed table do not stop the others; each is reported all the same.
                for problem in try await engine.catchUp(account: account).problems {
                    reportCatchUp(failure: ReplicaError(.storage, problem), account: account)
                }
            } catch {
                reportCatchUp(failure: error, account: account)
            }
        }
    }

    private func reportCatchUp(failure error: any Error, account: AccountID?) {
        let reason = ReplicaError.message(of: error)
        store.configuration.events(
            StoreEvent(
                kind: .catchUpFailed, account: account, indexName: nil,
                message: "the search tool could not bring " + (account.map { "account '\($0)'" } ?? "the accounts")
                    + " up to date before answering: \(reason)"))
    }

    private func nextToken() -> String {
        "q\(queryCounter.add(1, ordering: .relaxed).newValue)"
    }

    private func fail(_ message: String, token: String) -> ToolResult {
        stream.continuation.yield(
            SearchReply(
                queryToken: token, stageToken: token + ".0", label: "error", content: .error(message), status: .complete
            ))
        return ToolResult(text: ToolOutput.errorText(message), isError: true)
    }

    // MARK: Running a query

    private func run(_ query: ToolQuery, token: String, now: Date) async throws -> QueryOutcome {
        let aggregate = !query.stages.isEmpty
        let wanted = aggregate ? Self.aggregateLimit : query.limit
        var candidates = try await retrieve(
            query, limit: aggregate ? Self.aggregateLimit + 1 : max(query.limit * 2, query.limit + 10))
        candidates = candidates.filter { result in query.predicates.allSatisfy { $0.matches(result) } }

        let hydrator = try await Hydrator(
            store: store, accounts: configuration.accounts, hydration: configuration.hydration)
        // One more than wanted, so that whether the limit was reached is told by readable items alone: the
        // model learns nothing of items the account may not read, not even that they exist.
        var (kept, dropped) = await hydrator.hydrate(
            candidates, wanting: wanted + 1, includingContent: fetchAttributes.contains(.textContent))
        let limitReached = kept.count > wanted
        kept = Array(kept.prefix(wanted))
        report(dropped)

        let label = query.label ?? "search \(query.summary)"
        var data = PipelineData.items(kept)
        stream.continuation.yield(
            SearchReply(
                queryToken: token, stageToken: token + ".0", label: label, content: .data(data),
                status: query.stages.isEmpty ? .complete : .partial))
        for (index, stage) in query.stages.enumerated() {
            do {
                data = try await stage.run(data, now: now)
            } catch {
                let message =
                    "stage \(index + 1) (\(stage.name)) failed: \((error as? ToolError)?.description ?? "\(error)")"
                stream.continuation.yield(
                    SearchReply(
                        queryToken: token, stageToken: "\(token).\(index + 1)", label: stage.label,
                        content: .error(message), status: .complete))
                throw ToolError(message)
            }
            stream.continuation.yield(
                SearchReply(
                    queryToken: token, stageToken: "\(token).\(index + 1)", label: stage.label,
                    content: .data(data), status: index == query.stages.count - 1 ? .complete : .partial))
        }
        return QueryOutcome(
            query: query, token: token, data: data, found: kept.count, limitReached: limitReached,
            fetchAttributes: fetchAttributes)
    }

    /// Tells the host (its log) what hydration left out and why, by account and reason, never by content.
    private func report(_ dropped: [DroppedItem]) {
        guard !dropped.isEmpty else { return }
        for (account, items) in Dictionary(grouping: dropped, by: \.account).sorted(by: { $0.key < $1.key }) {
            let reasons = Dictionary(grouping: items, by: \.reason).map { "\($0.value.count) \($0.key)" }.sorted()
            store.configuration.events(
                StoreEvent(
                    kind: .resultsWithheld, account: account, indexName: nil,
                    message:
                        "the search tool left out \(items.count) result(s) of account '\(account)' that hydration did not pass: \(reasons.joined(separator: "; "))"
                ))
        }
    }

    /// The attributes every result shows beyond the defaults (from all sources).
    private var fetchAttributes: [AttributeKey] {
        var keys: [AttributeKey] = []
        for source in configuration.sources {
            switch source {
            case .index(let index): keys += index.fetchAttributes
            case .files(let files): keys += files.fetchAttributes
            }
        }
        var seen = Set<AttributeKey>()
        return keys.filter { seen.insert($0).inserted }
    }

    /// Searches each source separately and merges the results by score.
    private func retrieve(_ query: ToolQuery, limit: Int) async throws -> [SearchResult] {
        let fileOwners = try await store.sources().filter { $0.kind == .files }.map(\.owner)
        var merged: [SearchResult] = []
        for source in configuration.sources {
            var search = SearchQuery(query.text, limit: limit)
            search.requiresAllWords = query.requiresAllWords
            search.contentTypes = query.contentTypes
            search.created = query.created
            search.modified = query.modified
            search.authors = query.authors
            search.recipients = query.recipients
            search.accounts = configuration.accounts
            search.languages = configuration.languages
            search.typoTolerance = configuration.typoTolerance
            var indexNames: [String]?
            var cap: Int?
            var scopes: [String] = []
            switch source {
            case .index(let index):
                search.excludedOwners = fileOwners
                indexNames = index.indexNames
                cap = index.maximumResultCount
            case .files(let files):
                guard !fileOwners.isEmpty else { continue }
                search.owners = fileOwners
                cap = files.maximumResultCount
                scopes = files.scopes.map { $0.hasSuffix("/") ? $0 : $0 + "/" }
            }
            var found = try await store.search(search, indexNames: indexNames)
            if !scopes.isEmpty {
                found = found.filter { result in scopes.contains { (result.item.attributeSet.path ?? "").hasPrefix($0) }
                }
            }
            merged += found.prefix(cap ?? .max)
        }
        var seen = Set<String>()
        let close = Ranking.closeEnoughByMeaning(merged.sorted(by: Store.ranking), score: \.score, match: \.match)
        return close.filter { seen.insert($0.account.rawValue + "\u{0}" + $0.item.uniqueIdentifier.rawValue).inserted }
    }
}
