public import Foundation
import ReplicaText

/// What a store holds, for `replica status`.
public struct StoreStatus: Sendable {
    /// One named index of one account.
    public struct IndexStatus: Sendable {
        /// The index's name within its account.
        public var name: String
        /// How many items are searchable now (expired ones left out).
        public var itemCount: Int
        /// The size of the index file and its write-ahead log, in bytes.
        public var bytes: Int
        /// The client state stored by the last batch that ended, or `nil` if none has.
        public var lastClientState: Data?
        /// Semantic search's vectors and backlog; `nil` without an embedder.
        public var embedding: EmbeddingStatus?
        /// Summaries and priority: items enriched, waiting, failing, and skipped by reason.
        public var enrichment: EnrichmentStatus?
        /// Whether the words searches read are this version's analyzer's, and how far making them again
        /// has gone when they are not (``Store/remakeStaleWords(accounts:progress:)``).
        public var words: WordsStatus? = nil
    }

    /// An account's record store and how far its index follows it.
    public struct RecordsStatus: Sendable {
        /// Records held (tombstones left out).
        public var recordCount: Int
        /// Change-log entries not yet applied to the index.
        public var pendingChanges: Int
        /// Deliveries ignored because a newer version was held.
        public var ignoredOlder: Int
        /// Deletions that failed and wait to be retried.
        public var pendingDeletions: [PendingDeletion]
        /// Records that could not be projected.
        public var quarantined: [QuarantinedRecord]
        /// Kinds being rebuilt for a new projection version.
        public var rebuilding: [String]
        /// Kinds projected into the index for the first time, not done yet (a `records import` or `sync`
        /// stopped before it finished): the next `sync` or `watch` projects them.
        public var waitingForFirstSync: [String] = []
        /// Why the record store cannot be read (a damaged file), when it cannot; the counts above are 0.
        public var problem: String? = nil
    }

    /// One account.
    public struct AccountStatus: Sendable {
        /// The account's identifier.
        public var id: AccountID
        /// Whether the account is signed in or being signed out.
        public var state: AccountRecord.State
        /// When the account was signed in.
        public var signedInAt: Date
        /// The account's named indexes.
        public var indexes: [IndexStatus]
        /// `nil` when the account has no record store.
        public var records: RecordsStatus?
        /// The languages of a sample of the account's items (up to ``Store/languageSample`` of each index),
        /// by how many of them CLD2 is sure are in each (BCP 47 codes: `en`, `zh`, `ja`…); items whose
        /// language cannot be told are not counted.
        public var languages: [String: Int] = [:]

        /// How many items are searchable now, over all the account's indexes.
        public var itemCount: Int { indexes.reduce(0) { $0 + $1.itemCount } }
        /// The size of all the account's index files and their write-ahead logs, in bytes.
        public var indexBytes: Int { indexes.reduce(0) { $0 + $1.bytes } }
        /// The client state of the default index, or of the only index when there is one.
        public var lastClientState: Data? {
            (indexes.first { $0.name == Store.defaultIndexName } ?? (indexes.count == 1 ? indexes.first : nil))?
                .lastClientState
        }
    }

    /// The store's directory.
    public var directory: URL
    /// The database the accounts' content is in (role, server, database; never a password); `nil` when
    /// it is in SQLite files in ``directory``.
    public var database: String?
    /// The signed-in accounts.
    public var accounts: [AccountStatus]
    /// The embedding model semantic search uses, or why it is off.
    public var semanticSearch: String?
    /// Why the model cannot be used (a damaged or unreadable weights file), so that searches answer by
    /// the words alone; `nil` when it embeds, or when there is none.
    public var semanticSearchProblem: String? = nil
    /// The read database (a standby), asked now, when the store has one.
    public var standby: StandbyStatus? = nil
    /// A model that would read the accounts' items better, and why: with a model that reads only some
    /// languages (all-MiniLM-L6-v2 reads English), multilingual-e5-small when an account's items are mostly
    /// in others (``AccountStatus/languages``); `nil` otherwise.
    public var modelSuggestion: String? = nil

    /// A standby that serves reads (``Store/Configuration/readDatabase``), as it was found when asked.
    public struct StandbyStatus: Sendable {
        /// Whether it serves reads.
        public enum State: String, Sendable {
            /// It serves reads: it replays the database's log, within its maximum lag.
            case serving
            /// Its reads go to the database: its replay is paused, it is behind past its maximum lag, or it
            /// receives no log.
            case stale
            /// Its reads go to the database: it cannot be reached or used (``reason`` says why).
            case unavailable
        }
        /// Whether it serves reads.
        public var state: State
        /// How far behind the database it is, when that can be told: how long it has held log it received
        /// and has not replayed; zero when it has replayed all it received; `nil` when it receives none.
        public var lag: Duration?
        /// Why it does not serve reads; `nil` while it does.
        public var reason: String?
        /// Where this process's reads went so far.
        public var routing: Store.ReadRouting

        package init(state: State, lag: Duration?, reason: String?, routing: Store.ReadRouting) {
            self.state = state
            self.lag = lag
            self.reason = reason
            self.routing = routing
        }
    }
}

extension Store {
    /// Accounts, their indexes, item counts, sizes and last client states.
    public func status() async throws -> StoreStatus {
        var accounts: [StoreStatus.AccountStatus] = []
        for record in try await signedInAccounts() {
            var indexes: [StoreStatus.IndexStatus] = []
            var languages: [String: Int] = [:]
            for name in try await indexNames(for: record.id) {
                guard let index = try await existingIndex(named: name, account: record.id) else { continue }
                languages.merge(try await Self.sampledLanguages(of: index)) { $0 + $1 }
                indexes.append(
                    StoreStatus.IndexStatus(
                        name: name,
                        itemCount: try await index.itemCount(),
                        bytes: index.fileSize(),
                        lastClientState: try await index.fetchLastClientState(),
                        embedding: try await embeddingStatus(of: index),
                        enrichment: try await enrichmentStatus(of: index),
                        words: try await index.wordsStatus()))
            }
            // A damaged record store is reported with its account, not as the failure of the whole status.
            let records: StoreStatus.RecordsStatus?
            do {
                records = try await recordsStatus(record.id)
            } catch let error as ReplicaError where error.code == .storage {
                records = StoreStatus.RecordsStatus(
                    recordCount: 0, pendingChanges: 0, ignoredOlder: 0, pendingDeletions: [],
                    quarantined: [], rebuilding: [], problem: error.message)
            }
            accounts.append(
                StoreStatus.AccountStatus(
                    id: record.id, state: record.state, signedInAt: record.signedInAt, indexes: indexes,
                    records: records, languages: languages))
        }
        // The model is tried on a query, as a search would: a damaged one is said, not shown as working.
        var modelProblem: String?
        if let embedder = configuration.embedder {
            do {
                _ = try await Self.queryVector("status", by: embedder)
            } catch {
                modelProblem =
                    "the model cannot be used (\(ReplicaError.message(of: error))): searches answer by the words alone"
            }
        }
        return StoreStatus(
            directory: directory, database: home.databaseDescription, accounts: accounts,
            semanticSearch: configuration.embedder?.modelIdentifier, semanticSearchProblem: modelProblem,
            standby: await standbyStatus(),
            modelSuggestion: configuration.embedder.flatMap { Self.modelSuggestion(reads: $0.languages, accounts) })
    }

    /// How many items of each index ``StoreStatus/AccountStatus/languages`` reads.
    public static let languageSample = 200

    /// The languages CLD2 is sure of among up to ``languageSample`` of the index's items (the first of a
    /// listing), by count: their title and the start of their text.
    static func sampledLanguages(of index: SearchableIndex) async throws -> [String: Int] {
        var listing = SearchQuery(nil, limit: languageSample)
        listing.disablesSemanticSearch = true
        let listed = try await index.search(listing).map(\.item.uniqueIdentifier)
        var counts: [String: Int] = [:]
        for item in try await index.items(withIdentifiers: listed) {
            let text = [item.attributeSet.title, item.attributeSet.textContent.map { String($0.prefix(2_000)) }]
                .compactMap { $0 }.joined(separator: "\n")
            guard let told = TextAnalyzer.language(of: text), told.isReliable else { continue }
            counts[TextAnalyzer.languageCode(ofTag: told.code), default: 0] += 1
        }
        return counts
    }

    /// The multilingual model, suggested with a model that reads only some languages (``Embedder/languages``:
    /// all-MiniLM-L6-v2 reads English) when more than half of the items of an account whose language could
    /// be told, at least ten, are in languages it does not read.
    static func modelSuggestion(reads: [String]?, _ accounts: [StoreStatus.AccountStatus]) -> String? {
        guard let reads else { return nil }
        let mostlyOthers = accounts.compactMap { account -> String? in
            let told = account.languages.values.reduce(0, +)
            let others = account.languages.filter { !reads.contains($0.key) }
                .sorted { ($0.value, $1.key) > ($1.value, $0.key) }
            guard told >= 10, 2 * others.reduce(0, { $0 + $1.value }) > told else { return nil }
            let counts = others.prefix(3).map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            return "\(account.id) (\(counts) of \(told) items sampled)"
        }
        guard !mostlyOthers.isEmpty else { return nil }
        return "most items of "
            + (mostlyOthers.count == 1 ? "account " : "accounts ") + mostlyOthers.joined(separator: "; ")
            + " are in languages the model does not read (it reads \(reads.joined(separator: ", "))): "
            + "\(EmbeddingModel.multilingualE5.rawValue) reads about a hundred (REPLICA_MODEL or the configuration "
            + "file's model names it; every item is then embedded again, and found by its words meanwhile)"
    }

    /// The standby's state, asked of it now; `nil` without one.
    public func standbyStatus() async -> StoreStatus.StandbyStatus? {
        guard let routing = readRouting else { return nil }
        return (try? await Blocking.run { [home] in home.standbyStatus() })
            ?? StoreStatus.StandbyStatus(
                state: .unavailable, lag: nil, reason: "the standby could not be asked", routing: routing)
    }

    private func recordsStatus(_ account: AccountID) async throws -> StoreStatus.RecordsStatus? {
        guard let records = try await recordStorage(for: account, creating: false) else { return nil }
        // The index that follows the change log is the one holding its checkpoint.
        var checkpoint: Int64?
        var quarantined: [QuarantinedRecord] = []
        var rebuilding: [String] = []
        var firstSync: [String] = []
        for name in try await indexNames(for: account) {
            guard let index = try await existingIndex(named: name, account: account) else { continue }
            let found = try await index.read { reader in
                (
                    try reader.checkpoint(ProjectionEngine.consumer), try reader.quarantined(account: account),
                    try reader.rebuildsInProgress()
                )
            }
            if let position = found.0 {
                checkpoint = Int64(position)
                quarantined = found.1
                // A kind at version 0 has never been projected: its first projection, not a rebuild.
                rebuilding = found.2.filter { $0.from > 0 }.map(\.kind)
                firstSync = found.2.filter { $0.from == 0 }.map(\.kind)
            }
        }
        let (position, quarantinedRecords, rebuildingKinds, firstSyncKinds) = (
            checkpoint ?? 0, quarantined, rebuilding, firstSync
        )
        return try await Blocking.run {
            let pending = try records.changeCount(after: position)
            return StoreStatus.RecordsStatus(
                recordCount: try records.liveRecordCount(), pendingChanges: pending,
                ignoredOlder: try records.counter("ignoredOlder"), pendingDeletions: try records.pendingDeletions(),
                quarantined: quarantinedRecords, rebuilding: rebuildingKinds, waitingForFirstSync: firstSyncKinds)
        }
    }
}

extension StoreStatus {
    /// A client state for display: its text when it is UTF-8, otherwise `base64:` and its bytes.
    public static func describe(clientState: Data?) -> JSON {
        guard let clientState else { return .null }
        if let text = String(data: clientState, encoding: .utf8) { return .string(text) }
        return .string("base64:" + clientState.base64EncodedString())
    }

    /// The status as `replica status --json` prints it.
    public var json: JSON {
        .object([
            ("store", .string(directory.path)),
            ("database", database.map(JSON.string) ?? .null),
            (
                "semanticSearch",
                semanticSearch.map {
                    .object(omittingNil: [
                        ("model", .string($0)), ("problem", semanticSearchProblem.map(JSON.string)),
                        ("suggestion", modelSuggestion.map(JSON.string)),
                    ])
                } ?? .null
            ),
            (
                "standby",
                standby.map { standby in
                    .object([
                        ("state", .string(standby.state.rawValue)),
                        ("lagSeconds", standby.lag.map { .number($0.seconds) } ?? .null),
                        ("reason", standby.reason.map(JSON.string) ?? .null),
                        (
                            "reads",
                            .object([
                                ("standby", .number(Double(standby.routing.servedByStandby))),
                                ("primaryAfterWaiting", .number(Double(standby.routing.servedByPrimaryAfterWaiting))),
                                ("primaryStandbyStale", .number(Double(standby.routing.servedByPrimaryStandbyStale))),
                                (
                                    "primaryStandbyUnavailable",
                                    .number(Double(standby.routing.servedByPrimaryStandbyUnavailable))
                                ),
                            ])
                        ),
                    ])
                } ?? .null
            ),
            (
                "accounts",
                .array(
                    accounts.map { account in
                        .object([
                            ("id", .string(account.id.rawValue)),
                            ("itemCount", .number(Double(account.itemCount))),
                            ("indexBytes", .number(Double(account.indexBytes))),
                            ("lastClientState", Self.describe(clientState: account.lastClientState)),
                            ("signedInAt", .string(ISO8601.string(from: account.signedInAt))),
                            (
                                "languages",
                                .object(
                                    account.languages.sorted { $0.key < $1.key }.map {
                                        ($0.key, .number(Double($0.value)))
                                    })
                            ),
                            (
                                "records",
                                account.records.map { records in
                                    .object([
                                        ("recordCount", .number(Double(records.recordCount))),
                                        ("pendingChanges", .number(Double(records.pendingChanges))),
                                        ("ignoredOlder", .number(Double(records.ignoredOlder))),
                                        (
                                            "pendingDeletions",
                                            .array(
                                                records.pendingDeletions.map { deletion in
                                                    let (kind, target) = deletion.target.storedParts
                                                    return .object(omittingNil: [
                                                        ("index", .string(deletion.indexName)), (kind, .string(target)),
                                                        ("attempts", .number(Double(deletion.attempts))),
                                                        (
                                                            "nextAttempt",
                                                            .string(ISO8601.string(from: deletion.nextAttempt))
                                                        ),
                                                        ("lastError", deletion.lastError.map(JSON.string)),
                                                    ])
                                                })
                                        ),
                                        (
                                            "quarantined",
                                            .array(
                                                records.quarantined.map { entry in
                                                    .object([
                                                        ("kind", .string(entry.kind)), ("id", .string(entry.id)),
                                                        ("version", .number(Double(entry.version))),
                                                        ("reason", .string(entry.reason)),
                                                    ])
                                                })
                                        ),
                                        ("rebuilding", .array(records.rebuilding.map(JSON.string))),
                                        ("waitingForFirstSync", .array(records.waitingForFirstSync.map(JSON.string))),
                                        ("problem", records.problem.map(JSON.string) ?? .null),
                                    ])
                                } ?? .null
                            ),
                            ("indexes", .array(account.indexes.map(Self.json))),
                        ])
                    })
            ),
        ])
    }

    /// One index as `replica status --json` prints it.
    static func json(_ index: IndexStatus) -> JSON {
        let vectors: JSON =
            index.embedding.map { embedding in
                .object([
                    ("items", .number(Double(embedding.items))), ("passages", .number(Double(embedding.passages))),
                    ("bytes", .number(Double(embedding.bytes))), ("backlog", .number(Double(embedding.backlog))),
                ])
            } ?? .null
        let enrichment: JSON =
            index.enrichment.map { status in
                let skipped: [(String, JSON)] = status.skipped.sorted { $0.key < $1.key }.map {
                    ($0.key, .number(Double($0.value)))
                }
                return .object([
                    ("enriched", .number(Double(status.enriched))), ("pending", .number(Double(status.pending))),
                    ("failing", .number(Double(status.failing))), ("skipped", .object(skipped)),
                ])
            } ?? .null
        return .object([
            ("name", .string(index.name)),
            ("itemCount", .number(Double(index.itemCount))),
            ("bytes", .number(Double(index.bytes))),
            ("lastClientState", describe(clientState: index.lastClientState)),
            ("vectors", vectors),
            ("enrichment", enrichment),
            (
                "words",
                index.words.map { words in
                    .object([
                        ("analyzer", words.analyzer.map(JSON.string) ?? .null), ("current", .bool(words.isCurrent)),
                        ("remade", words.remade.map { .number(Double($0)) } ?? .null),
                    ])
                } ?? .null
            ),
        ])
    }
}

extension Store {
    /// Where the indexes' reads went so far, when the store has a standby (``Configuration/readDatabase``);
    /// `nil` without one.
    public var readRouting: ReadRouting? { home.readRouting }
}
