public import Foundation
public import Replica
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A folder tree kept in an account's index: files are read, their text extracted and indexed, and kept
/// fresh with Linux inotify while watching.
///
/// Settings (`SourceDefinition.settings`): `root` (required, absolute), and optionally `exclude` (folder
/// names never entered; default `.git`, `.hg`, `.svn`), `maximumFileBytes` (default 16 MiB),
/// `extractionSeconds` (default 2), `expiresAfter` (seconds; items do not expire by default) and
/// `fallbackScanSeconds` (how often folders that could not be watched are scanned; default 60).
///
/// For example:
/// ```swift
/// let definition = try await store.addSource(SourceDefinition(kind: .files, account: "alice",
///                                                             settings: .object([("root", "/home/alice/Notes")])))
/// let source = try FileTreeSource(definition, storeDirectory: store.directory)
/// try await source.sync(SourceContext(definition: definition, store: store))
/// ```
public final class FileTreeSource: Source {
    /// The source as the store holds it: its name, account, index and settings (the root folder).
    public let definition: SourceDefinition
    let scanner: TreeScanner
    let items: FileItems
    let fallbackScanInterval: Double
    /// A watch limit imposed by the settings (`watchLimit`), to exercise the fallback without exhausting the kernel's.
    let watchLimit: Int?
    private let hooks = Mutex(TestHooks())

    struct TestHooks {
        /// How many times each path was read for indexing while watching; `nil` (nothing kept) until a
        /// test calls ``startCountingIndexing()``.
        var indexed: [String: Int]?
        var overflowRequested = false
        /// Changes seen but not yet settled, after the last loop.
        var pending = 0
        var paused = false
        var pauseAcknowledged = false
        var inotify: Inotify?
        /// Files a transaction holds at most, in place of ``FileTreeSource/chunkFiles``.
        var chunkFiles: Int?
    }

    /// Files read and extracted per transaction: up to 1,024 files or 16 MiB of them, whichever comes
    /// first. A transaction has a cost of its own (FTS5 writes its words out as a new segment, later
    /// merged; the typo vocabulary's counts are written once per word): on Debian's linux-doc tree
    /// (12,033 files), 128 files a transaction indexed in 19.2 s, 1,024 in 14.8 s, 4,096 in 14.6 s.
    static let chunkFiles = 1_024
    static let chunkBytes: Int64 = 16 << 20

    /// `files` cut into chunks of `limit` files (``chunkFiles`` unless a test says otherwise) or
    /// ``chunkBytes`` bytes at most (a bigger file alone).
    static func chunks(_ files: [FileInfo], limit: Int = chunkFiles) -> [[FileInfo]] {
        var chunks: [[FileInfo]] = []
        var chunk: [FileInfo] = []
        var bytes: Int64 = 0
        for file in files {
            if !chunk.isEmpty && (chunk.count == limit || bytes + file.size > chunkBytes) {
                chunks.append(chunk)
                chunk = []
                bytes = 0
            }
            chunk.append(file)
            bytes += file.size
        }
        if !chunk.isEmpty { chunks.append(chunk) }
        return chunks
    }

    /// Creates the source; refuses a root that is missing or that holds the store.
    ///
    /// - Parameters:
    ///   - definition: the source as the store holds it.
    ///   - storeDirectory: the store's folder (`Store.directory`), never scanned: a source gets only
    ///     what it needs of the store, and writes through its `SourceContext`.
    /// - Throws: ``ReplicaError`` with code `invalidConfiguration` saying what to fix.
    public init(_ definition: SourceDefinition, storeDirectory: URL) throws {
        self.definition = definition
        let settings = definition.settings
        guard let rootSetting = settings["root"]?.stringValue, rootSetting.hasPrefix("/") else {
            throw ReplicaError(.invalidConfiguration, "source '\(definition.name)' needs an absolute 'root' folder")
        }
        guard let resolved = realpath(rootSetting, nil) else {
            throw ReplicaError(
                .invalidConfiguration,
                "source '\(definition.name)': the folder \(rootSetting) cannot be opened: \(String(cString: strerror(errno)))"
            )
        }
        let root = String(cString: resolved)
        free(resolved)
        var info = stat()
        guard stat(root, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw ReplicaError(.invalidConfiguration, "source '\(definition.name)': \(rootSetting) is not a folder")
        }
        let storePath = Self.resolve(storeDirectory.path)
        if storePath == root || storePath.hasPrefix(root + "/") {
            throw ReplicaError(
                .invalidConfiguration,
                "source '\(definition.name)': the store (\(storePath)) is inside \(root); the index "
                    + "would watch its own writes. Keep the store outside the folders replica watches (use --store).")
        }
        let excluded: Set<String> =
            settings["exclude"]?.arrayValue.map { Set($0.compactMap(\.stringValue)) } ?? [".git", ".hg", ".svn"]
        scanner = TreeScanner(root: root, excludedNames: excluded, excludedPaths: [storePath])
        var limits = ExtractionLimits()
        if let bytes = settings["maximumFileBytes"]?.intValue { limits.maximumBytes = bytes }
        if let seconds = settings["extractionSeconds"]?.doubleValue { limits.timeLimit = seconds }
        items = FileItems(
            definition: definition, scanner: scanner, limits: limits, lifetime: settings["expiresAfter"]?.doubleValue)
        fallbackScanInterval = settings["fallbackScanSeconds"]?.doubleValue ?? 60
        watchLimit = settings["watchLimit"]?.intValue
    }

    static func resolve(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The root folder, resolved.
    public var root: String { scanner.root }

    // MARK: Sync

    /// Walks the tree once and commits what changed since the last sync (new, changed and removed files).
    public func sync(_ context: SourceContext) async throws {
        await context.report(.syncing)
        try await reconcile(context, inotify: nil)
        await context.report(.idle)
    }

    /// Compares the tree with what the index holds and commits the difference: changes made while
    /// nothing was watching are found here. With `inotify`, every folder is watched before it is read.
    func reconcile(_ context: SourceContext, inotify: Inotify?, under directory: String = "") async throws {
        let known = try await context.entries()
        let scanner = scanner
        let (files, skipped) = try await Blocking.run {
            scanner.walk(directory, enter: { path in _ = inotify?.watch(path) })
        }
        let prefix = directory.isEmpty ? "" : directory + "/"
        var progress = SourceProgress()
        // Everything the walk met is seen: what it skipped unread (special files, names that are not
        // UTF-8, …) is counted as seen and skipped, so indexed + skipped never exceeds seen.
        progress.expected = files.count + skipped.count
        var readings: [SourceReading] = []
        var present = Set<String>()
        for entry in skipped {
            present.insert(entry.path)
            if known[entry.path]?.skipReason != entry.reason {
                readings.append(.unchecked(items.skip(entry.path, stamp: "-", reason: entry.reason)))
            }
        }
        var changed: [FileInfo] = []
        for file in files {
            present.insert(file.path)
            // A file that could not be read is read again: it may be readable now, with the same stamp.
            if known[file.path]?.stamp != file.stamp || TreeScanner.mayPass(known[file.path]?.skipReason) {
                changed.append(file)
            }
        }
        for key in known.keys
        where (prefix.isEmpty || key.hasPrefix(prefix)) && !key.contains("#") && !present.contains(key) {
            readings.append(SourceReading(key: key, stamp: nil, events: items.removal(of: key)))
            progress.removed += 1
        }
        progress.seen = files.count - changed.count + skipped.count
        progress.skipped = skipped.count
        context.progress(progress)
        try await commit(readings, context)
        try await index(changed, context, progress: progress)
    }

    /// Reads and indexes files in chunks, extracting the next chunk on another thread while the current
    /// one is committed.
    func index(_ files: [FileInfo], _ context: SourceContext, progress start: SourceProgress) async throws {
        var progress = start
        let chunks = Self.chunks(files, limit: hooks.withLock { $0.chunkFiles } ?? Self.chunkFiles)
        guard !chunks.isEmpty else { return }
        let items = items
        let now = context.now
        func extract(_ chunk: [FileInfo]) -> Task<[SourceReading], any Error> {
            Task { try await Blocking.run { chunk.map { Self.reading(of: $0, items: items, now: now) } } }
        }
        var next = extract(chunks[0])
        for index in chunks.indices {
            let extracted = try await next.value
            if index + 1 < chunks.count { next = extract(chunks[index + 1]) }
            try await commit(extracted, context)
            progress.seen += chunks[index].count
            for events in extracted.map(\.events) {
                if events.contains(where: { if case .skip = $0 { return true } else { return false } }) {
                    progress.skipped += 1
                } else {
                    progress.indexed += 1
                }
            }
            context.progress(progress)
            if Task.isCancelled { break }
        }
    }

    // MARK: Watch

    /// Syncs, then follows the tree with inotify until cancelled, committing changes in batches.
    public func watch(_ context: SourceContext) async throws {
        let inotify = try Inotify(root: scanner.root, watchLimit: watchLimit)
        hooks.withLock { $0.inotify = inotify }
        defer { hooks.withLock { $0.inotify = nil } }
        await context.report(.syncing)
        // Every folder is watched before it is read, then the tree is compared with the index: nothing
        // that changed while nothing watched, or while the walk ran, is missed. As a load, as `sync`'s:
        // the first scan of a tree is its first index.
        try await context.load { try await reconcile(context, inotify: inotify) }
        await reportWatching(context, inotify)
        var coalescer = Coalescer()
        var nextFallbackScan = Self.monotonic() + fallbackScanInterval
        try await withTaskCancellationHandler {
            while !Task.isCancelled {
                if hooks.withLock({ hook in
                    hook.pauseAcknowledged = hook.paused
                    return hook.paused
                }) {
                    _ = try await Blocking.run { inotify.waitForWake(timeout: 1) }
                    continue
                }
                let now = Self.monotonic()
                var timeout = min(1.0, nextFallbackScan - now)
                if let deadline = coalescer.nextDeadline() { timeout = min(timeout, max(0, deadline - now)) }
                let waitFor = max(0, timeout)
                var events = try await Blocking.run { inotify.wait(timeout: waitFor) }
                if hooks.withLock({ hook in
                    defer { hook.overflowRequested = false }
                    return hook.overflowRequested
                }) {
                    inotify.discardQueuedEvents()
                    events = [.overflow]
                }
                let arrived = Self.monotonic()
                for event in events { coalescer.receive(event, at: arrived) }
                let actions = coalescer.actions(at: arrived)
                if !actions.isEmpty { await perform(actions, context, inotify) }
                let pending = coalescer.pendingCount
                let changed = hooks.withLock { hook in
                    defer { hook.pending = pending }
                    return hook.pending != pending
                }
                if changed { await context.reportPending(pending) }
                if arrived >= nextFallbackScan {
                    nextFallbackScan = arrived + fallbackScanInterval
                    await scanUnwatched(context, inotify)
                }
            }
        } onCancel: {
            inotify.wake()
        }
        // Commit what is in flight before stopping, with the events the kernel queued before the stop
        // that the loop had not read yet: a change made just before the stop is not left for the next pass.
        let queued = (try? await Blocking.run { inotify.readEvents() }) ?? []
        let stopped = Self.monotonic()
        for event in queued { coalescer.receive(event, at: stopped) }
        let remaining = coalescer.actions(at: .infinity)
        if !remaining.isEmpty { await perform(remaining, context, inotify) }
        await context.report(.stopped)
    }

    private func reportWatching(_ context: SourceContext, _ inotify: Inotify) async {
        let unwatched = inotify.unwatchedDirectories
        if unwatched.isEmpty {
            await context.report(.watching, detail: "\(inotify.watchCount) folders watched")
        } else {
            let limit =
                watchLimit.map { "the source's watch limit of \($0)" }
                ?? "the inotify watch limit (fs.inotify.max_user_watches = \(Inotify.systemWatchLimit.map(String.init) ?? "?"))"
            await context.report(
                .degraded,
                detail: "\(limit) is reached: \(inotify.watchCount) folders are watched and "
                    + "\(unwatched.count) are scanned every \(Int(fallbackScanInterval)) s instead; raise the limit to watch them all"
            )
        }
    }

    /// Scans the folders that could not be watched (the watch limit), so their changes are found anyway.
    private func scanUnwatched(_ context: SourceContext, _ inotify: Inotify) async {
        let unwatched = inotify.unwatchedDirectories
        guard !unwatched.isEmpty else { return }
        // Try to watch them again (watches may have been freed), then compare each with the index.
        for directory in unwatched.sorted() {
            do {
                try await reconcile(context, inotify: inotify, under: directory)
            } catch {
                await context.report(error: "scanning \(directory) failed: \(error)")
            }
        }
        await reportWatching(context, inotify)
    }

    /// Carries out settled actions as one batch. A failure is reported and answered with a reconcile, so
    /// no change is lost.
    private func perform(_ actions: [FileAction], _ context: SourceContext, _ inotify: Inotify) async {
        var readings: [SourceReading] = []
        var reconcileAfter = false
        let scanner = scanner
        let items = items
        let now = context.now
        for action in actions {
            switch action {
            case .index(let path):
                hooks.withLock { $0.indexed?[path, default: 0] += 1 }
                if let reading = try? await Blocking.run({
                    Self.reading(ofPath: path, scanner: scanner, items: items, now: now)
                }) {
                    readings.append(reading)
                }
            case .remove(let path):
                readings.append(SourceReading(key: path, stamp: nil, events: items.removal(of: path)))
            case .removeTree(let path):
                if path.isEmpty {
                    await context.report(error: "the root folder \(scanner.root) is gone")
                    continue
                }
                inotify.unwatch(tree: path)
                readings.append(.unchecked(items.removal(ofTree: path) + items.removal(of: path)))
            case .addTree(let path):
                let (files, skipped) =
                    (try? await Blocking.run { scanner.walk(path, enter: { _ = inotify.watch($0) }) }) ?? ([], [])
                for entry in skipped {
                    readings.append(.unchecked(items.skip(entry.path, stamp: "-", reason: entry.reason)))
                }
                readings +=
                    (try? await Blocking.run { files.map { Self.reading(of: $0, items: items, now: now) } }) ?? []
            case .rename(let from, let to, let isDirectory):
                if isDirectory {
                    inotify.move(tree: from, to: to)
                    readings.append(.unchecked(items.removal(ofTree: from)))
                    let (files, skipped) =
                        (try? await Blocking.run { scanner.walk(to, enter: { _ = inotify.watch($0) }) }) ?? ([], [])
                    for entry in skipped {
                        readings.append(.unchecked(items.skip(entry.path, stamp: "-", reason: entry.reason)))
                    }
                    readings +=
                        (try? await Blocking.run { files.map { Self.reading(of: $0, items: items, now: now) } }) ?? []
                } else {
                    readings.append(SourceReading(key: from, stamp: nil, events: items.removal(of: from)))
                    if let reading = try? await Blocking.run({
                        Self.reading(ofPath: to, scanner: scanner, items: items, now: now)
                    }) {
                        readings.append(reading)
                    }
                }
            case .reconcile:
                reconcileAfter = true
            }
        }
        do {
            try await commit(readings, context)
            if reconcileAfter { try await reconcile(context, inotify: inotify) }
            await reportWatching(context, inotify)
        } catch {
            await context.report(.failed, detail: "a change could not be written; the tree will be compared again")
            await context.report(error: "\(error)")
            try? await reconcile(context, inotify: inotify)
        }
    }

    /// Reads one path as it is now: what it is, with its stamp (`nil` for a folder, which has no item).
    static func reading(ofPath path: String, scanner: TreeScanner, items: FileItems, now: Date) -> SourceReading? {
        switch scanner.lookup(path) {
        case .file(let info): return reading(of: info, items: items, now: now)
        case .missing: return SourceReading(key: path, stamp: nil, events: items.removal(of: path))
        case .skipped(let reason):
            return SourceReading(key: path, stamp: "-", events: items.skip(path, stamp: "-", reason: reason))
        case .directory: return nil
        }
    }

    /// Reads and extracts a file found with this stamp.
    static func reading(of file: FileInfo, items: FileItems, now: Date) -> SourceReading {
        SourceReading(key: file.path, stamp: file.stamp, events: items.events(for: file, now: now))
    }

    /// The stamp a path has now, as ``reading(ofPath:scanner:items:now:)`` records it.
    static func currentStamp(_ path: String, scanner: TreeScanner) -> String? {
        switch scanner.lookup(path) {
        case .file(let info): return info.stamp
        case .skipped: return "-"
        case .missing, .directory: return nil
        }
    }

    /// Commits readings in one transaction, leaving out those of files that changed since they were read
    /// (checked inside the transaction: another writer — the watcher, a `sync` beside it — may have
    /// committed a newer reading meanwhile, which an older one must never replace); those are read again
    /// and committed, up to three times. A file still changing after that is left to the events its
    /// changes make, or to the next pass, which finds its stamp changed.
    func commit(_ readings: [SourceReading], _ context: SourceContext) async throws {
        let scanner = scanner
        let items = items
        let now = context.now
        var readings = readings
        for attempt in 1...3 {
            let stale = try await context.commit(readings, currentStamp: { Self.currentStamp($0, scanner: scanner) })
            guard !stale.isEmpty, attempt < 3 else { return }
            readings = try await Blocking.run {
                stale.compactMap { Self.reading(ofPath: $0, scanner: scanner, items: items, now: now) }
            }
        }
    }

    static func monotonic() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }

    // MARK: Hydration

    /// A file's item is current while the file is still under the root, still readable, and unchanged
    /// (its size, modification time and inode are its version).
    public func answer(
        _ identifiers: [ItemIdentifier], includingContent: Bool,
        _ context: SourceContext
    ) async throws -> [ItemIdentifier: SourceAnswer] {
        var answers: [ItemIdentifier: SourceAnswer] = [:]
        let scanner = scanner
        let items = items
        let now = context.now
        for identifier in identifiers {
            guard let key = definition.key(of: identifier) else { continue }
            let path = key.split(separator: "#", maxSplits: 1).first.map(String.init) ?? key
            answers[identifier] = try await Blocking.run {
                switch scanner.lookup(path) {
                case .missing, .directory: return .gone(reason: "the file is no longer there")
                case .skipped(let reason): return .gone(reason: reason)
                case .file(let info):
                    guard includingContent else {
                        let descriptor = open(scanner.absolute(path), O_RDONLY | O_CLOEXEC)
                        guard descriptor >= 0 else { return .gone(reason: TreeScanner.errorReason(errno)) }
                        close(descriptor)
                        return .current(nil, version: info.stamp)
                    }
                    let events = items.events(for: info, now: now)
                    for event in events {
                        if case .upsert(let item, _) = event, item.uniqueIdentifier == identifier {
                            return .current(item, version: info.stamp)
                        }
                        if case .skip(let entry, _) = event { return .gone(reason: entry.skipReason ?? "skipped") }
                    }
                    return .gone(reason: "the file no longer holds this item")
                }
            }
        }
        return answers
    }

    // MARK: Test hooks

    /// Changes the watcher has seen but not yet committed (tests; `replica status` shows it as lag).
    var pendingChanges: Int { hooks.withLock { $0.pending } }

    /// Commits at most `files` files a transaction from now on (tests: many transactions from a few files).
    func commitInChunks(of files: Int) { hooks.withLock { $0.chunkFiles = files } }

    /// Starts counting how many times each path is read for indexing while watching (tests).
    func startCountingIndexing() { hooks.withLock { $0.indexed = $0.indexed ?? [:] } }

    /// How many times a path was read for indexing while watching, since ``startCountingIndexing()`` (tests).
    func timesIndexed(_ path: String) -> Int { hooks.withLock { $0.indexed?[path] ?? 0 } }

    /// Stops reading events (they stay queued in the kernel) until `simulateQueueOverflow` (tests).
    func pauseEventReading() {
        hooks.withLock { $0.paused = true }
        hooks.withLock { $0.inotify }?.wake()
    }

    /// Whether the watch loop has stopped reading events after `pauseEventReading` (tests).
    var isEventReadingPaused: Bool { hooks.withLock { $0.pauseAcknowledged } }

    /// Drops every event the kernel has queued and reports a queue overflow, as the kernel does when its
    /// queue fills up, then resumes reading (tests).
    func simulateQueueOverflow() {
        hooks.withLock {
            $0.overflowRequested = true
            $0.paused = false
        }
        hooks.withLock { $0.inotify }?.wake()
    }
}
