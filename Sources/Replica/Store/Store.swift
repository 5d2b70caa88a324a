public import Foundation
import Synchronization

/// Every account's indexes, records and sources, and the catalog of accounts: in a directory of SQLite
/// files (the default, for devices), or in a PostgreSQL database that many app processes share (servers).
///
/// In a directory, each account's files live in a folder of their own (`accounts/<id>/`), so signing an
/// account out deletes every byte of its text by deleting that folder: nothing is left in shared index
/// pages, free pages or write-ahead logs. Folders are created with mode 0700 and files with 0600. In a
/// database, each account's content is in partitions of its own, dropped at sign-out, and row-level
/// security holds every transaction to one account (`docs/postgres.md`); the directory keeps only what
/// is local to the machine.
///
/// A store may be used by several processes at once: writers take turns and wait for each other.
///
/// For example:
/// ```swift
/// let store = try Store(directory: URL(fileURLWithPath: NSHomeDirectory() + "/.local/share/notes-index"))
/// try await store.signIn("alice")                  // at login: writes need a signed-in account
/// let index = try await store.index(named: "Notes", account: "alice")
/// try await index.indexItems(items)
/// let results = try await store.search(SearchQuery("launch risk"))
/// try await store.switchAccount(to: "bob")   // on logout: alice's text is gone from disk
/// ```
///
/// On a server, the same store in a PostgreSQL database (with `import ReplicaPostgresHome`):
/// ```swift
/// let store = try Store(directory: URL(fileURLWithPath: "/var/lib/notes/replica"),
///                       database: .postgres(url: "postgresql://replica_app:secret@db.internal/replica"))
/// ```
public final class Store: Sendable {
    /// Where a store keeps its accounts' content: ``sqlite``, or a PostgreSQL database
    /// (`.postgres(url:)`, which the `ReplicaPostgresHome` library adds, so that an app on SQLite alone does
    /// not link PostgreSQL's client).
    public struct Database: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
        /// Which kind of database, never its URL (which may hold a password).
        public let description: String
        /// What tells two databases of a kind apart (a URL): compared, never shown.
        private let identity: String
        /// Opens the store's home there, in the store's directory and with its configuration.
        package let openHome: @Sendable (_ directory: String, _ configuration: Configuration) throws -> any StoreHome

        /// A kind of database a module adds (`ReplicaPostgresHome` adds PostgreSQL).
        package init(
            description: String, identity: String,
            openHome: @escaping @Sendable (_ directory: String, _ configuration: Configuration) throws -> any StoreHome
        ) {
            self.description = description
            self.identity = identity
            self.openHome = openHome
        }

        /// SQLite files in the store's directory: the embedded default.
        public static let sqlite = Database(description: "SQLite files", identity: "") { directory, configuration in
            guard configuration.readDatabase == nil else {
                throw ReplicaError(
                    .invalidConfiguration,
                    "a read database (a standby) needs the store on PostgreSQL: give the primary's URL as the database too, or leave the read database out"
                )
            }
            return try FolderHome(directory: directory)
        }

        /// The same as ``description``: a URL printed by a debugger or a log would show its password.
        public var debugDescription: String { description }

        public static func == (left: Database, right: Database) -> Bool {
            left.description == right.description && left.identity == right.identity
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(description)
            hasher.combine(identity)
        }
    }

    /// How a store behaves.
    public struct Configuration: Sendable {
        /// Settings for every index the store opens.
        public var index = SearchableIndex.Configuration()
        /// Called with things a host may want to log (never with indexed content).
        public var events: @Sendable (StoreEvent) -> Void = { _ in }
        /// The model semantic search runs (`try MultilingualE5Embedder(file: MultilingualE5Embedder.locateFile())`
        /// or `try MiniLMEmbedder()` for the two replica ships); `nil`
        /// searches by the words alone. Items are embedded by ``embedPendingItems(accounts:until:progress:)``.
        public var embedder: (any Embedder)?
        /// Models the store used before ``embedder``: after a change of model, an index keeps each item's
        /// vectors from the former model until ``embedPendingItems(accounts:until:progress:)`` embeds it
        /// again, and a search by meaning asks those vectors with the query's vector by the model that
        /// made them, so the items are found by meaning all along. A model here is loaded only while an
        /// index still holds its vectors; one not given leaves such items to their words meanwhile.
        public var formerEmbedders: [any Embedder] = []
        /// Summaries and priority for the items that ask for them (``enrichPendingItems(accounts:)``).
        public var enrichment = EnrichmentConfiguration()
        /// A streaming-replication standby of the store's PostgreSQL database that serves the indexes'
        /// reads (searches, suggestions, `get`, listings), with this process's own writes always seen;
        /// `nil` reads from the database itself. Only for a store in PostgreSQL (`Database.postgres(url:)`).
        public var readDatabase: ReadDatabase?

        /// Creates the default configuration: default index settings, events ignored, no embedder,
        /// default enrichment, no standby.
        public init() {}
    }

    /// A standby that serves reads (``Configuration/readDatabase``).
    ///
    /// After this process writes, a read waits until the standby has replayed that write, up to
    /// ``replayWait``, then reads from the primary instead. Writes by other processes show on the
    /// standby once it replays them, so its staleness is bounded: a standby whose replay is paused, or
    /// that holds log it received and has not replayed for longer than ``maximumLag``, or that receives
    /// no log (cut off from the primary), is stale, and reads go to the primary until it catches up (the
    /// standby is asked, at most every quarter of a second, never the primary). A standby that cannot be reached or used (a wrong URL or password, a
    /// server that is not a standby of the database) sends reads to the primary too, and is tried again
    /// a second later. Each reason is reported once as a ``StoreEvent`` (``StoreEvent/Kind/standbyPassedOver``),
    /// and ``Store/status()`` shows the standby's state and lag.
    public struct ReadDatabase: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
        /// The standby, as a libpq URL: the same role and database as the primary's.
        public var url: String
        /// The longest a read waits for the standby to replay this process's last write: 250 ms.
        public var replayWait: Duration
        /// How long the standby may hold log it has received and not replayed before it counts as stale
        /// and reads go to the primary: a second. Measured on the standby by log position; a standby that
        /// sits on log past ``replayWait`` is also behind at once when the last transaction it replayed
        /// was committed on the primary longer ago than this (which assumes the machines' clocks agree).
        public var maximumLag: Duration

        /// A standby at `url`; reads wait up to `replayWait` for this process's writes to reach it, and go
        /// to the primary while the standby is paused or more than `maximumLag` behind.
        public init(url: String, replayWait: Duration = .milliseconds(250), maximumLag: Duration = .seconds(1)) {
            self.url = url
            self.replayWait = replayWait
            self.maximumLag = maximumLag
        }

        /// Never the URL, which may hold a password.
        public var description: String { "a PostgreSQL standby" }
        /// The same as ``description``.
        public var debugDescription: String { description }
    }

    /// Where the indexes' reads went, with a standby (``Configuration/readDatabase``); `nil` without one.
    public struct ReadRouting: Sendable {
        /// Reads the standby served.
        public var servedByStandby: Int
        /// Reads the primary served because the standby had not replayed this process's last write
        /// within ``ReadDatabase/replayWait``.
        public var servedByPrimaryAfterWaiting: Int
        /// Reads the primary served because the standby was stale: paused, or behind past
        /// ``ReadDatabase/maximumLag``.
        public var servedByPrimaryStandbyStale: Int
        /// Reads the primary served because the standby could not be reached or used, or failed.
        public var servedByPrimaryStandbyUnavailable: Int
        /// How long each standby read that followed a write of this process waited for the standby to
        /// replay it (the latest 10,000).
        public var replayWaits: [Duration]
        package init(
            servedByStandby: Int, servedByPrimaryAfterWaiting: Int, servedByPrimaryStandbyStale: Int,
            servedByPrimaryStandbyUnavailable: Int, replayWaits: [Duration]
        ) {
            self.servedByStandby = servedByStandby
            self.servedByPrimaryAfterWaiting = servedByPrimaryAfterWaiting
            self.servedByPrimaryStandbyStale = servedByPrimaryStandbyStale
            self.servedByPrimaryStandbyUnavailable = servedByPrimaryStandbyUnavailable
            self.replayWaits = replayWaits
        }
    }

    /// The name of the index used when none is given; meant for prototypes — apps name theirs.
    public static let defaultIndexName = "default"

    /// The store's directory: all of it on SQLite; with a database, what is local to this machine.
    public let directory: URL
    /// Where the accounts' content is kept.
    public let database: Database
    /// How the store behaves.
    public let configuration: Configuration
    let home: any StoreHome
    var catalog: any CatalogStorage { home.catalog }
    private let cache = Mutex(Cache())
    /// The loads running in this store (``load(accounts:isolation:_:)``): their accounts' lists wait for
    /// their end.
    private let loads = Mutex(RunningLoads())

    private struct RunningLoads {
        /// Loads of every account (`accounts` `nil`).
        var everyAccount = 0
        var byAccount: [AccountID: Int] = [:]
        /// How many have ended.
        var ended = 0
        /// Who waits for the next to end (``loadEnd(after:)``).
        var waiting: [UUID: CheckedContinuation<Void, Never>] = [:]

        func covers(_ account: AccountID) -> Bool { everyAccount > 0 || byAccount[account, default: 0] > 0 }

        mutating func add(_ accounts: [AccountID]?, _ change: Int) {
            guard let accounts else {
                everyAccount += change
                return
            }
            for account in accounts { byAccount[account, default: 0] += change }
        }
    }

    private struct Cache {
        var indexes: [IndexKey: SearchableIndex] = [:]
        var records: [AccountID: any RecordStorage] = [:]
        var catalogVersion = -1
    }

    struct IndexKey: Hashable {
        var account: AccountID
        var name: String
    }

    /// Opens (creating if needed) the store at `directory`, or in `database`, and finishes any sign-out a
    /// previous process left halfway.
    ///
    /// - Parameters:
    ///   - directory: the store's folder: everything, on SQLite; with a database, only what is local to
    ///     this machine (a file tree's scratch), never an account's content.
    ///   - database: where the accounts' content is kept; SQLite files in `directory` by default.
    ///   - configuration: how the store behaves.
    /// - Throws: `ReplicaError` when the directory cannot be created or the catalog is unreadable or
    ///   written by a newer replica, and with code `fileSystem` when the store is on a file system mounted
    ///   read-only; with a database, `storage` in words when it cannot be reached or its schema is behind
    ///   and the role may not upgrade it, and `newerSchema` for a schema a newer replica made.
    public init(directory: URL, database: Database = .sqlite, configuration: Configuration = Configuration()) throws {
        self.directory = directory.standardizedFileURL
        self.database = database
        self.configuration = configuration
        try FileSystem.makePrivateDirectory(self.directory.path)
        // Asked before SQLite is: whether SQLite can still read a read-only file depends on the write-ahead
        // log and shared-memory files some earlier process happened to leave, and its words ("unable to open
        // database file … journal_mode") would not say why it cannot.
        guard !FileSystem.isOnReadOnlyFileSystem(self.directory.path) else {
            throw Self.readOnlyFileSystem(self.directory.path)
        }
        do {
            home = try database.openHome(self.directory.path, configuration)
        } catch  where FileSystem.isOnReadOnlyFileSystem(self.directory.path) {
            throw Self.readOnlyFileSystem(self.directory.path, cause: error)
        }
        try finishInterruptedSignOuts()
    }

    private static func readOnlyFileSystem(_ directory: String, cause: (any Error)? = nil) -> ReplicaError {
        ReplicaError(
            .fileSystem,
            "the store \(directory) is on a file system mounted read-only; replica writes to its "
                + "store even to read it (its catalog and write-ahead logs). Mount it read-write and run the command again; nothing was changed",
            cause: cause)
    }

    /// The directory used when none is given: `$XDG_DATA_HOME/replica`, or `~/.local/share/replica`.
    public static var defaultDirectory: URL {
        URL(fileURLWithPath: FileSystem.defaultDataDirectory())
    }

    // MARK: Accounts

    /// The accounts that are signed in, in identifier order.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    package func signedInAccounts() throws -> [AccountRecord] {
        try catalog.accounts().filter { $0.state == .signedIn }
    }

    /// Signs an account in (a no-op if it is already).
    ///
    /// This is the only way an account comes into use: writes for an account that is not signed in are
    /// refused with `ReplicaError/Code/accountNotSignedIn`, so that a sync layer delivering late for an
    /// account that was signed out cannot bring it back.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    @discardableResult
    package func signIn(_ account: AccountID) throws -> AccountRecord {
        try account.validate()
        if let record = try catalog.account(account), record.state == .signedIn {
            return record
        }
        // A sign-out of this account that did not finish is completed first, so nothing old comes back.
        try finishInterruptedSignOuts()
        return try catalog.signIn(account)
    }

    /// The account's catalog entry when it is signed in; otherwise an error that says how to sign it in.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    func requireSignedIn(_ account: AccountID) throws -> AccountRecord {
        try account.validate()
        guard let record = try catalog.account(account), record.state == .signedIn else {
            throw ReplicaError(
                .accountNotSignedIn,
                "account '\(account)' is not signed in; nothing was written for it. Sign it in first (Store.signIn, or `replica accounts sign-in \(account)`)"
            )
        }
        return record
    }

    /// Signs an account out: destroys everything the store holds for it (its files, or its rows and
    /// partitions in the database).
    ///
    /// The sign-out is recorded first, so from that moment the account is never searched again, and a
    /// process that dies halfway leaves it to be finished by the next one that opens the store.
    ///
    /// - Returns: `false` when the store held nothing for the account.
    ///
    /// On a disk too full to record the sign-out, the account's files are deleted first (that is what
    /// frees the room), then it is recorded and finished as usual.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    @discardableResult
    package func signOut(_ account: AccountID) throws -> Bool {
        let record = { [catalog] in try catalog.markSigningOut(account) }
        let recorded: Bool
        do {
            recorded = try record()
        } catch let error as ReplicaError where error.isOutOfSpace {
            guard try freeSpace(byRemoving: account) else { throw error }
            recorded = try record()
        }
        guard recorded else { return false }
        CrashPoints.reach("signOut.recorded")
        try finishSignOut(account)
        return true
    }

    /// Signs out every signed-in account but `account`, and signs `account` in: what an app does on logout.
    ///
    /// The whole switch is recorded in one transaction before any file is deleted: every other account is
    /// marked as signing out (never searched or written again from that moment) and `account` is signed
    /// in. A process killed at any later instant leaves the rest to the next one that opens the store.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    package func switchAccount(to account: AccountID) throws {
        try account.validate()
        // Whatever an earlier switch left halfway, including a sign-out of `account` itself, ends first.
        try finishInterruptedSignOuts()
        let record = { [catalog] in try catalog.markSigningOut(allBut: account) }
        let leaving: [AccountID]
        do {
            leaving = try record()
        } catch let error as ReplicaError where error.isOutOfSpace {
            // A disk too full to record the switch: one leaving account's files go first, to make room.
            let first = try signedInAccounts().map(\.id).first { $0 != account }
            guard let first, try freeSpace(byRemoving: first) else { throw error }
            leaving = try record()
        }
        CrashPoints.reach("switch.recorded")
        for other in leaving { try finishSignOut(other) }
    }

    /// Deletes an account's files ahead of recording its sign-out, when the disk is too full to record it
    /// first. Killed right after, the account stays signed in with nothing in it: never a leak.
    private func freeSpace(byRemoving account: AccountID) throws -> Bool {
        guard let record = try catalog.account(account) else { return false }
        forget(accounts: [account])
        try home.removeContent(of: record)
        configuration.events(
            StoreEvent(
                kind: .signOutCompleted, account: account, indexName: nil,
                message:
                    "the disk was too full to record the sign-out of account '\(account)'; its files were deleted first to make room"
            ))
        return true
    }

    private func finishInterruptedSignOuts() throws {
        let pending = try catalog.accounts().filter { $0.state == .signingOut }
        for record in pending {
            try finishSignOut(record.id)
            configuration.events(
                StoreEvent(
                    kind: .signOutCompleted, account: record.id, indexName: nil,
                    message: "finished signing out account '\(record.id)', which an earlier process left halfway"))
        }
    }

    private func finishSignOut(_ account: AccountID) throws {
        guard let record = try catalog.account(account) else { return }
        forget(accounts: [account])
        try home.removeContent(of: record)
        CrashPoints.reach("signOut.filesRemoved")
        try catalog.deleteSignedOut(account)
    }

    // MARK: Indexes

    /// The named index of a signed-in account, created if it does not exist yet.
    ///
    /// - Parameters:
    ///   - name: letters, digits, `.`, `-` and `_`, up to 64 characters.
    ///   - account: a signed-in account.
    /// - Throws: `ReplicaError` with code `accountNotSignedIn` when the account is not signed in (sign it
    ///   in with `signIn(_:)` first), and for a bad name or account, or an index file written by a newer
    ///   replica.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    package func index(named name: String = Store.defaultIndexName, account: AccountID) throws -> SearchableIndex {
        try Self.validateIndexName(name)
        return try index(named: name, of: try requireSignedIn(account))
    }

    /// The named index of an account whose catalog entry, signed in, was just read.
    ///
    /// - Throws: `ReplicaError` with code `accountNotSignedIn` when an index of a later sign-in is open:
    ///   the entry is out of date (the account was signed out and in again since it was read).
    private func index(named name: String, of record: AccountRecord) throws -> SearchableIndex {
        let account = record.id
        let key = IndexKey(account: account, name: name)
        if let index = cache.withLock({ $0.indexes[key] }) {
            if index.signIn.generation == record.generation { return index }
            if index.signIn.generation > record.generation { throw ReplicaError.signedOutSinceOpened(account) }
            // Signed out and in again since it was opened (by another process, or another Store value):
            // that file is gone; open the new one.
            forget(accounts: [account])
        }
        let index = try home.openIndex(
            named: name, of: record, lease: lease(record), configuration: configuration.index,
            events: configuration.events)
        return cache.withLock { cache in
            if let existing = cache.indexes[key], existing.signIn.generation == record.generation { return existing }
            cache.indexes[key] = index
            return index
        }
    }

    private func lease(_ record: AccountRecord) -> SignInLease {
        SignInLease(
            catalog: catalog, account: record.id, generation: record.generation,
            checkedByStorage: home.storagesCheckSignIn)
    }

    /// The index if the account is signed in and the index exists; never creates either.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    package func existingIndex(named name: String, account: AccountID) throws -> SearchableIndex? {
        guard let record = try catalog.account(account), record.state == .signedIn else { return nil }
        return try searchedIndexes(of: record, named: [name]).first
    }

    /// The indexes of a signed-in account a search reads, from its catalog entry read once for the whole
    /// search: those of `names` that exist, or all of them.
    ///
    /// An index open under this sign-in exists: only one not open yet is looked for where it is kept (a
    /// folder listing, or a query of the database), and the account's indexes are listed at most once.
    @available(*, noasync, message: "it waits on SQLite; in async code run it in Blocking.run")
    func searchedIndexes(of record: AccountRecord, named names: [String]?) throws -> [SearchableIndex] {
        var listed: [String]?
        func listing() throws -> [String] {
            if let listed { return listed }
            let names = try home.indexNames(of: record)
            listed = names
            return names
        }
        return try (names ?? listing()).compactMap { name in
            let isOpen = cache.withLock {
                $0.indexes[IndexKey(account: record.id, name: name)]?.signIn.generation == record.generation
            }
            guard try isOpen || listing().contains(name) else { return nil }
            return try index(named: name, of: record)
        }
    }

    /// Reads items back whole from an account's indexes: each identifier from every index that holds it,
    /// as identifiers are per index.
    ///
    /// For example:
    /// ```swift
    /// let found = try await store.fetchItems(withIdentifiers: ["note:alice:42"], account: "alice")
    /// ```
    ///
    /// Each item is checked with its owner first, as a search's results are (hydration): one that is
    /// gone, that the account may no longer read, that changed since it was indexed, or whose owner does
    /// not answer is left out, as a missing one is (and, when gone or unreadable, queued for removal).
    /// ``SearchableIndex/fetchItems(withIdentifiers:)`` reads an index's items without asking anyone.
    ///
    /// - Parameters:
    ///   - identifiers: the items to read.
    ///   - account: a signed-in account.
    ///   - indexNames: the indexes to look in; `nil` for all of the account's.
    ///   - hydration: how the items are checked with their owners; without a source resolver, sources'
    ///     items are left out.
    /// - Returns: the items found, as their index holds them, in the order asked (an identifier held by
    ///   several indexes once per index, in name order); a missing, expired or withheld identifier is left out.
    /// - Throws: `ReplicaError` with code `accountNotSignedIn` when the account is not signed in.
    public func fetchItems(
        withIdentifiers identifiers: [ItemIdentifier], account: AccountID,
        indexNames: [String]? = nil, hydration: Hydration = Hydration()
    ) async throws -> [StoredItem] {
        try account.validate()
        await refreshIfCatalogChanged()
        _ = try await signedInAccounts(among: [account])
        var found: [ItemIdentifier: [StoredItem]] = [:]
        var seen = Set<ItemIdentifier>()
        let wanted = identifiers.filter { seen.insert($0).inserted }
        let hydrator = try await Hydrator(store: self, accounts: [account], hydration: hydration)
        let names = if let indexNames { indexNames } else { try await self.indexNames(for: account) }
        for name in Set(names).sorted() {
            guard let index = try await existingIndex(named: name, account: account) else { continue }
            let stored = try await index.fetchItems(withIdentifiers: wanted)
            let passed = Set(
                await hydrator.hydrate(
                    stored.map { item in
                        SearchResult(
                            account: account, indexName: name, item: item.item, score: 0, snippet: nil,
                            origin: item.origin, indexedAt: item.indexedAt)
                    }, includingContent: false
                ).kept.map(\.item.uniqueIdentifier))
            for item in stored where passed.contains(item.item.uniqueIdentifier) {
                found[item.item.uniqueIdentifier, default: []].append(item)
            }
        }
        return wanted.flatMap { found[$0] ?? [] }
    }

    /// The names of the indexes an account has.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    package func indexNames(for account: AccountID) throws -> [String] {
        guard let record = try catalog.account(account) else { return [] }
        return try home.indexNames(of: record)
    }

    static func validateIndexName(_ name: String) throws {
        let allowed = name.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0))
        }
        guard !name.isEmpty, name.count <= 64, allowed, !name.hasPrefix(".") else {
            throw ReplicaError(
                .invalidArgument,
                "an index name must be 1 to 64 letters, digits, '.', '-' or '_', not starting with '.'; '\(name)' is not"
            )
        }
    }

    /// Drops cached indexes of accounts that another process signed out.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    func refreshIfCatalogChanged() {
        guard let version = try? catalog.dataVersion() else { return }
        let changed = cache.withLock { cache -> Bool in
            defer { cache.catalogVersion = version }
            return cache.catalogVersion != version && cache.catalogVersion != -1
        }
        guard changed, let signedIn = try? Set(signedInAccounts().map(\.id)) else { return }
        let cached = cache.withLock { Set($0.indexes.keys.map(\.account)).union($0.records.keys) }
        forget(accounts: cached.subtracting(signedIn))
    }

    /// Closes and forgets every open file of these signed-out accounts. The files are being deleted, so
    /// their connections close without first copying their write-ahead logs into them: that copy is
    /// work thrown away, and it made switch-account wait.
    private func forget(accounts: Set<AccountID>) {
        guard !accounts.isEmpty else { return }
        let (indexes, records) = cache.withLock { cache in
            let indexes = cache.indexes.filter { accounts.contains($0.key.account) }
            let records = cache.records.filter { accounts.contains($0.key) }
            for key in indexes.keys { cache.indexes[key] = nil }
            for account in records.keys { cache.records[account] = nil }
            return (indexes.values, records.values)
        }
        // Outside the cache's lock: discarding waits for work in progress on each file's queues.
        for index in indexes { index.invalidate(discardingFile: true) }
        for storage in records { storage.close(discarding: true) }
    }

    // MARK: Record stores

    /// A signed-in account's record store, created only when `creating`.
    ///
    /// - Returns: `nil` when not `creating` and the account is not signed in or has no record store.
    /// - Throws: `ReplicaError` with code `accountNotSignedIn` when `creating` for an account that is not
    ///   signed in.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    func recordStorage(for account: AccountID, creating: Bool) throws -> (any RecordStorage)? {
        let record: AccountRecord
        if creating {
            record = try requireSignedIn(account)
        } else {
            guard let existing = try catalog.account(account), existing.state == .signedIn else { return nil }
            record = existing
        }
        if let storage = cache.withLock({ $0.records[account] }) {
            if storage.signIn.generation == record.generation { return storage }
            forget(accounts: [account])
        }
        guard let storage = try home.openRecords(of: record, lease: lease(record), creating: creating) else {
            return nil
        }
        return cache.withLock { cache in
            if let existing = cache.records[account], existing.signIn.generation == record.generation {
                return existing
            }
            cache.records[account] = storage
            return storage
        }
    }

    // MARK: Search

    /// Searches every signed-in account (or those the query names) and merges the results by score. An
    /// item found by meaning alone is kept only if it scores at least half the best result's score.
    ///
    /// - Parameters:
    ///   - query: the words and filters.
    ///   - indexNames: the indexes to search in each account; `nil` searches all of them.
    /// - Throws: `ReplicaError` with code `invalidQuery` when the text has no searchable word, and
    ///   `accountNotSignedIn` when the query names an account that is not signed in.
    public func search(_ query: SearchQuery, indexNames: [String]? = nil) async throws -> [SearchResult] {
        _ = try query.validatedPattern()
        await refreshIfCatalogChanged()
        let accounts = try await signedInAccounts(among: query.accounts)
        // The query's vector is computed while the first index looks for the words. A search that
        // cannot have one reads each index once, not in two snapshots.
        let embedding = searchesByMeaning(query) ? Task { await semanticQuery(for: query) } : nil
        var results: [SearchResult] = []
        for account in accounts {
            // An account signed out while the search ran is left out, as if it had been before.
            do {
                for index in try await Blocking.run({ [self] in try searchedIndexes(of: account, named: indexNames) }) {
                    if let embedding {
                        results += try await index.search(query, embedding: embedding)
                    } else {
                        results += try await index.search(query, semantic: nil)
                    }
                }
            } catch let error as ReplicaError where error.code == .accountNotSignedIn {
                continue
            }
        }
        // Each index cut what it found by meaning alone against its own best; the best of all accounts and
        // indexes sets the bar for the merged list too.
        let merged = Ranking.closeEnoughByMeaning(results.sorted(by: Self.ranking), score: \.score, match: \.match)
        return Array(merged.prefix(query.limit))
    }

    /// The signed-in accounts a read names, each looked up alone (a server with thousands of accounts
    /// does not list them all for every search), or every signed-in account when it names none.
    ///
    /// - Throws: `ReplicaError` with code `accountNotSignedIn` when an account named is unknown or not
    ///   signed in, as reading its items by identifier does: an empty answer would say it has none.
    func signedInAccounts(among named: some Collection<AccountID>) async throws -> [AccountRecord] {
        guard !named.isEmpty else { return try await signedInAccounts() }
        let wanted = Set(named).sorted { $0.rawValue < $1.rawValue }
        return try await Blocking.run { [self] in
            try wanted.map { account in
                guard let record = try catalog.account(account), record.state == .signedIn else {
                    throw ReplicaError(
                        .accountNotSignedIn,
                        "account '\(account)' is not signed in; sign it in first (replica accounts sign-in \(account))")
                }
                return record
            }
        }
    }

    /// Better score first; among equal scores, newer first, then by identifier for a stable order.
    static func ranking(_ a: SearchResult, _ b: SearchResult) -> Bool {
        if a.score != b.score { return a.score > b.score }
        let dateA = a.item.attributeSet.contentModificationDate ?? a.indexedAt
        let dateB = b.item.attributeSet.contentModificationDate ?? b.indexedAt
        if dateA != dateB { return dateA > dateB }
        return (a.account, a.item.uniqueIdentifier) < (b.account, b.item.uniqueIdentifier)
    }

    // MARK: Semantic search

    /// Whether `query` is searched by meaning too: the store has a model, and the query has text and
    /// does not turn meaning off; beside its words, only when the model reads the query's language as far
    /// as it can be told (MiniLM reads English: a Chinese question is searched by its words alone, which
    /// its vectors would only reorder; a query whose language cannot be told is judged by each index, by
    /// the languages of its items). By meaning alone (``SearchQuery/disablesLexicalSearch``), always.
    func searchesByMeaning(_ query: SearchQuery) -> Bool {
        guard let embedder = configuration.embedder, query.text != nil, !query.disablesSemanticSearch else {
            return false
        }
        guard !query.disablesLexicalSearch, let read = embedder.languages,
            let language = query.languageForMeaning()
        else { return true }
        return read.contains(language)
    }

    /// The query's vector, when the store has an embedder and the query has words and allows it. An
    /// embedder that fails, or gives a vector that is not finite numbers, leaves the search to the
    /// words, and the host is told. A cancelled search does not wait for the model.
    func semanticQuery(for query: SearchQuery) async -> SemanticQuery? {
        guard searchesByMeaning(query), let embedder = configuration.embedder, let text = query.text else { return nil }
        let language = query.disablesLexicalSearch ? nil : query.languageForMeaning()
        let formers = configuration.formerEmbedders.filter { former in
            former.modelIdentifier != embedder.modelIdentifier
                && (language.map { former.languages?.contains($0) ?? true } ?? true)
        }
        do {
            return SemanticQuery(
                vector: try await Self.queryVector(text, by: embedder), model: embedder.modelIdentifier,
                baseline: embedder.similarityBaseline, unrelatedCloseness: embedder.unrelatedCloseness,
                formerModels: formers.map { former in
                    FormerModelQuery(
                        model: former.modelIdentifier, baseline: former.similarityBaseline,
                        unrelatedCloseness: former.unrelatedCloseness, passageStart: former.passageStart
                    ) {
                        [events = configuration.events] in
                        do {
                            return try await Self.queryVector(text, by: former)
                        } catch {
                            if !(error is CancellationError) {
                                events(
                                    StoreEvent(
                                        kind: .embeddingFailed, account: nil, indexName: nil,
                                        message:
                                            "items still holding the former model's vectors are found by their words: the former model failed (\(ReplicaError.message(of: error)))"
                                    ))
                            }
                            return nil
                        }
                    }
                }, languages: embedder.languages, passageStart: embedder.passageStart)
        } catch is CancellationError {
            return nil  // the search was given up: nothing failed
        } catch {
            configuration.events(
                StoreEvent(
                    kind: .embeddingFailed, account: nil, indexName: nil,
                    message:
                        "semantic search is off for this query: the embedding model failed (\(ReplicaError.message(of: error)))"
                ))
            return nil
        }
    }

    /// The query's vector by `embedder`, checked to be finite numbers (a damaged model's are not).
    static func queryVector(_ text: String, by embedder: any Embedder) async throws -> [Float] {
        let vector = try await Blocking.runAbandoningOnCancellation { try embedder.embed(query: text) }
        guard !vector.isEmpty, vector.allSatisfy(\.isFinite) else {
            throw ReplicaError(.invalidArgument, "it gave a query vector holding a value that is not a finite number")
        }
        return vector
    }

    /// Embeds every item of the signed-in accounts' indexes that has no vectors from the store's model
    /// yet. Searches answer by the words meanwhile; `replica sync`, `import` and `records import` call
    /// this before they exit, and `replica watch` in the background.
    ///
    /// - Parameters:
    ///   - accounts: the accounts whose indexes are embedded; `nil` for every signed-in account.
    ///   - deadline: when to stop, read on the indexes' clock (``SearchableIndex/Configuration/clock``):
    ///     no batch starts after it, the batch under way is finished and stored, and the items left wait
    ///     for the next call (`replica watch`, the next `sync`); `nil` embeds them all.
    ///   - progress: told the items embedded so far and those still waiting.
    /// - Returns: how many items were embedded (0 without an embedder).
    @discardableResult
    public func embedPendingItems(
        accounts: [AccountID]? = nil, until deadline: Date? = nil,
        progress: @escaping @Sendable (Int, Int) -> Void = { _, _ in }
    ) async throws -> Int {
        guard let embedder = configuration.embedder else { return 0 }
        var done = 0
        try await forEachIndex(of: accounts) { _, _, index in
            let before = done
            done += try await index.embedPending(using: embedder, until: deadline) { count, waiting in
                progress(before + count, waiting)
            }
        }
        return done
    }

    /// Makes the words of every index of `accounts` (every signed-in account when `nil`) that another
    /// analyzer made (an older replica, another ICU) again with this one, a batch per transaction, while
    /// searches read the old words; the new ones are swapped in at once (``SearchableIndex/remakeWords(batchSize:progress:)``).
    /// Returns how many indexes were made again. `sync`, `import`, `records import` and `replica watch`
    /// call it, before the ranking lists and embedding.
    ///
    /// - Parameters:
    ///   - accounts: the accounts whose indexes are made again; `nil` for every signed-in account.
    ///   - progress: told the index's name, its items made again so far and the items it holds.
    @discardableResult
    public func remakeStaleWords(
        accounts: [AccountID]? = nil,
        progress: @escaping @Sendable (String, Int, Int) -> Void = { _, _, _ in }
    ) async throws -> Int {
        var remade = 0
        try await forEachIndex(of: accounts) { _, name, index in
            guard try await !index.wordsAreCurrent() else { return }
            guard try await index.remakeWords(progress: { done, items in progress(name, done, items) }) else {
                throw CancellationError()
            }
            remade += 1
        }
        return remade
    }

    /// Runs `body`, many writes in a row (an app's first import of its items, in batches) into the
    /// indexes of `accounts`, as a load, so that they take less time.
    ///
    /// Each write is found by its words as soon as it commits, as always. On SQLite, what the writes add
    /// to an index's vocabulary (the words typos are corrected towards) is added up once, when `body`
    /// returns or throws, instead of word by word in each transaction, and FTS5 leaves the segments
    /// each transaction writes unmerged (up to 64 a level) for the ranking lists' build to merge once.
    /// The indexes of `accounts` get no lists while the load runs
    /// (``rebuildStaleRankingLists(accounts:minimumItems:building:)``, which `replica watch` calls,
    /// passes over them); build them after it, as `sync`, `import` and `records import` do. They run
    /// their writes so, a watched source its catch-up (``SourceContext/load(isolation:_:)``: a tree's first
    /// scan, a repository's first sync, a plugin's changes up to its first `idle`), and a running projection
    /// engine its first catch-up (``ProjectionEngine/run(every:onReport:onError:)``). An index too small
    /// for lists (under 10,000 items) has its segments merged by its next writes, a little at each, as
    /// FTS5 merges outside a load. On PostgreSQL every transaction counts its vocabulary, in a load or not.
    ///
    /// Batches of 1,000 items took 11–25 % less time so (`replica-bench batches`, BENCHMARKS.md).
    ///
    /// For example:
    /// ```swift
    /// try await store.load(accounts: ["alice"]) {
    ///     for start in stride(from: 0, to: items.count, by: 1_000) {
    ///         try await index.indexItems(Array(items[start..<min(start + 1_000, items.count)]))
    ///     }
    /// }
    /// try await store.rebuildStaleRankingLists(accounts: ["alice"])
    /// ```
    ///
    /// On SQLite, until the load ends, a typo is corrected only towards the words an index held before
    /// it (or when a write outside the load, which adds up what was held back, came in between). A load
    /// that is killed leaves the adding up to each index's next write, and so does a load whose `body`
    /// writes to an account it did not name.
    ///
    /// - Parameters:
    ///   - accounts: the accounts whose indexes `body` writes; every signed-in account when `nil`.
    ///   - isolation: where `body` runs: the caller's actor (the main actor of an app's view model, say).
    ///   - body: the writes.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, once the vocabulary is added up.
    public func load<T>(
        accounts: [AccountID]? = nil, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
    ) async throws -> T {
        loads.withLock { $0.add(accounts, 1) }
        defer {
            let waiting = loads.withLock { loads in
                loads.add(accounts, -1)
                loads.ended += 1
                defer { loads.waiting = [:] }
                return loads.waiting.values
            }
            for waiter in waiting { waiter.resume() }
        }
        let value: T
        do {
            value = try await IndexLoad.withLoad(body)
        } catch {
            await settleVocabularies(accounts: accounts)
            throw error
        }
        await settleVocabularies(accounts: accounts)
        return value
    }

    /// How many loads (``load(accounts:isolation:_:)``) have ended in this store.
    package var loadsEnded: Int { loads.withLock { $0.ended } }

    /// Returns once more than `ended` loads have ended in this store (``loadsEnded``), or the task is
    /// cancelled: the watcher's background pass waits so, to build the ranking lists a load held back as
    /// soon as it ends, without waking meanwhile.
    package func loadEnd(after ended: Int) async {
        let waiter = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = loads.withLock { loads in
                    guard loads.ended == ended, !Task.isCancelled else { return true }
                    loads.waiting[waiter] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            loads.withLock { $0.waiting.removeValue(forKey: waiter) }?.resume()
        }
    }

    /// Adds up what loads held back of the vocabulary of every index of `accounts`. An index that cannot
    /// (signed out meanwhile, its disk full) loses nothing: its next write adds them up, and says what
    /// fails if it fails again; the load's items are written either way.
    private func settleVocabularies(accounts: [AccountID]?) async {
        try? await forEachIndex(of: accounts) { _, _, index in try? await index.settleVocabulary() }
    }

    /// Builds the ranking lists of every index of `accounts` (every signed-in account when `nil`) that
    /// holds at least `minimumItems` items and has none, or has more changes since its last build than
    /// the lists follow (``SearchableIndex/rankingListsAreStale(minimumItems:)``), so that ranked
    /// searches of common words stay fast. Returns how many indexes were rebuilt. `sync`, `import`,
    /// `records import` and `replica watch` call it. The indexes of an account in a load still running
    /// in this store (``load(accounts:isolation:_:)``, a watched source's first scan) are passed over:
    /// the lists are built once, after it, not again every few hundred items it writes.
    ///
    /// - Parameters:
    ///   - accounts: the accounts whose indexes are looked at; every signed-in account when `nil`.
    ///   - minimumItems: the fewest items an index holds to get lists.
    ///   - building: told the account and name of each index before its lists are built (which takes
    ///     seconds at tens of thousands of items).
    @discardableResult
    public func rebuildStaleRankingLists(
        accounts: [AccountID]? = nil, minimumItems: Int = 10_000,
        building: @Sendable (AccountID, String) -> Void = { _, _ in }
    ) async throws -> Int {
        var rebuilt = 0
        try await forEachIndex(of: accounts) { account, name, index in
            // An index whose words are being made again gets its lists when they are swapped in.
            guard !loads.withLock({ $0.covers(account) }), try await index.wordsAreCurrent(),
                try await index.rankingListsAreStale(minimumItems: minimumItems)
            else { return }
            building(account, name)
            try await index.rebuildRankingLists()
            rebuilt += 1
        }
        return rebuilt
    }

    /// What semantic search holds for an index: the model, items and passages with vectors, and items
    /// waiting to be embedded.
    public func embeddingStatus(of index: SearchableIndex) async throws -> EmbeddingStatus? {
        guard let embedder = configuration.embedder else { return nil }
        let counts = try await index.embeddingCounts(model: embedder.modelIdentifier)
        return EmbeddingStatus(
            model: embedder.modelIdentifier, items: counts.items, passages: counts.passages, backlog: counts.backlog,
            dimensions: embedder.dimensions)
    }

    /// How many items of the indexes of `accounts` (every signed-in account when `nil`) wait for vectors
    /// from the store's model: what ``embedPendingItems(accounts:until:progress:)`` left when its deadline
    /// passed. 0 without an embedder. Cheaper than ``embeddingStatus(of:)``, which reads every vector.
    public func embeddingBacklog(accounts: [AccountID]? = nil) async throws -> Int {
        guard let embedder = configuration.embedder else { return 0 }
        var waiting = 0
        try await forEachIndex(of: accounts) { _, _, index in
            waiting += try await index.embeddingBacklog(model: embedder.modelIdentifier)
        }
        return waiting
    }

    /// Runs `body` on each existing index of `accounts` (every signed-in account when `nil`), one account
    /// after another.
    private func forEachIndex(
        of accounts: [AccountID]?, _ body: (AccountID, String, SearchableIndex) async throws -> Void
    ) async throws {
        let accounts = if let accounts { accounts } else { try await signedInAccounts().map(\.id) }
        for account in accounts {
            for name in try await indexNames(for: account) {
                guard let index = try await existingIndex(named: name, account: account) else { continue }
                try await body(account, name, index)
            }
        }
    }
}

/// Semantic search's state in one index.
public struct EmbeddingStatus: Sendable, Equatable {
    /// The identifier of the embedding model whose vectors are counted.
    public var model: String
    /// Items with vectors from ``model``.
    public var items: Int
    /// Their passages (one vector each).
    public var passages: Int
    /// Items waiting to be embedded.
    public var backlog: Int
    /// How many numbers a vector has.
    public var dimensions: Int

    /// Bytes the vectors take in the index: a float32 scale and one byte per dimension, per passage.
    public var bytes: Int { passages * (4 + dimensions) }
}

extension Store {
    /// Completions for a typed prefix (Core Spotlight's `CSUserQuery` suggestions): words of the
    /// signed-in accounts' items that begin with it, as they are written, most frequent first, then titles
    /// with such a word. Only the last word of `prefix` is completed; what comes before it is kept.
    ///
    /// Suggestions are made only of items their owners let the account read now: the items each index
    /// offers words from (the first 200 that have such a word) are hydrated first, as a search's results
    /// are, and a word or title is suggested only when an item that passed has it; how often it was seen
    /// is counted over those items alone. So no word, title or ranking comes from an item that is gone or
    /// that the account may not read.
    ///
    /// - Parameters:
    ///   - prefix: what was typed so far.
    ///   - accounts: the accounts to draw from; all signed-in ones when empty.
    ///   - limit: the most suggestions.
    ///   - hydration: how the items suggestions come from are checked with their owners; without a
    ///     source resolver, words of sources' items are not suggested.
    /// - Throws: `ReplicaError` with code `accountNotSignedIn` when an account of `accounts` is not signed in.
    public func suggestions(
        for prefix: String, accounts: [AccountID] = [], limit: Int = 10,
        hydration: Hydration = Hydration()
    ) async throws -> [String] {
        let parts = prefix.split(separator: " ", omittingEmptySubsequences: false)
        guard let last = parts.last, !last.isEmpty, limit > 0 else { return [] }
        let head = parts.dropLast().joined(separator: " ")
        let searched = try await signedInAccounts(among: accounts).map(\.id)
        let hydrator = try await Hydrator(store: self, accounts: searched, hydration: hydration)
        var readable: [CompletionSource] = []
        for account in searched {
            for name in try await indexNames(for: account) {
                guard let index = try await existingIndex(named: name, account: account) else { continue }
                let found = try await index.completionSources(of: String(last))
                guard !found.isEmpty else { continue }
                let candidates = found.map { source in
                    SearchResult(
                        account: account, indexName: name, item: source.item, score: 0, snippet: nil,
                        origin: source.origin, indexedAt: source.indexedAt)
                }
                let passed = Set(
                    await hydrator.hydrate(candidates, includingContent: false).kept.map(\.item.uniqueIdentifier))
                readable += found.filter { passed.contains($0.item.uniqueIdentifier) }
            }
        }
        let (words, titles) = Ranking.tally(readable)
        let rankedWords = words.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map {
            head.isEmpty ? $0.key : head + " " + $0.key
        }
        let rankedTitles = head.isEmpty ? titles.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map(\.key) : []
        var seen = Set<String>()
        return (rankedWords + rankedTitles).filter { seen.insert($0.lowercased()).inserted }.prefix(limit).map { $0 }
    }
}
