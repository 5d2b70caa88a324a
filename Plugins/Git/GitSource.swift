import Foundation
public import Replica
import ReplicaFileTree

/// The tree at a branch's head, kept in an account's index: every file's text, with the commit, its
/// author and its date.
///
/// The checkpoint is the commit last indexed. A sync diffs that commit's tree against the new head's and
/// applies only the changes; when the old commit is gone (history rewritten and collected) it compares
/// the whole head tree with what the index holds instead. While watching, the repository's refs are
/// watched and each new head is synced.
///
/// Settings: `repository` (required: a working tree or a bare repository), `branch` (default: the branch
/// HEAD points at, or HEAD itself when detached), `maximumFileBytes`, `extractionSeconds`.
///
/// An item's `commit` attribute is the commit at which replica indexed the file's current content.
public final class GitSource: Source {
    /// The source as the store holds it: its name, account, index and settings (repository and branch).
    public let definition: SourceDefinition
    /// The repository as opened when the source was made; each pass opens it afresh (see ``open()``).
    let repository: Repository
    let path: String
    let branch: String?
    let limits: ExtractionLimits

    /// Files read and extracted per transaction.
    static let filesPerTransaction = 128
    /// Files a transaction holds at most: the type's, unless a test says otherwise.
    let filesPerTransaction: Int

    /// Reads the repository path and branch from `definition`.
    ///
    /// - Throws: `ReplicaError` when the settings name no repository.
    public convenience init(_ definition: SourceDefinition) throws {
        try self.init(definition, filesPerTransaction: Self.filesPerTransaction)
    }

    /// As ``init(_:)``, committing at most `filesPerTransaction` files a transaction (tests: many
    /// transactions from a few files).
    init(_ definition: SourceDefinition, filesPerTransaction: Int) throws {
        self.definition = definition
        self.filesPerTransaction = filesPerTransaction
        guard let path = definition.settings["repository"]?.stringValue, !path.isEmpty else {
            throw ReplicaError(.invalidConfiguration, "source '\(definition.name)' needs a 'repository' path")
        }
        self.path = path
        do {
            repository = try Repository(path: path)
        } catch let error as GitError {
            throw ReplicaError(.invalidConfiguration, "source '\(definition.name)': \(error.message)")
        }
        branch = definition.settings["branch"]?.stringValue ?? repository.currentBranch()
        var limits = ExtractionLimits()
        if let bytes = definition.settings["maximumFileBytes"]?.intValue { limits.maximumBytes = bytes }
        if let seconds = definition.settings["extractionSeconds"]?.doubleValue { limits.timeLimit = seconds }
        self.limits = limits
    }

    /// Whether libgit2 should open repositories owned by other users (see ``Repository``).
    public static func trustRepositoriesOfOtherUsers() { Repository.trustRepositoriesOfOtherUsers() }

    // MARK: Sync

    /// Indexes the tree at the branch head, committing the differences from the last indexed commit.
    public func sync(_ context: SourceContext) async throws {
        await context.report(.syncing)
        try await catchUp(context)
        await context.report(.idle, detail: branch.map { "following \($0)" })
    }

    /// A fresh handle: libgit2 caches objects and pack lists per handle, so one opened before a garbage
    /// collection would still see the collected commits.
    func open() throws -> Repository {
        do {
            return try Repository(path: path)
        } catch let error as GitError {
            throw ReplicaError(.fileSystem, "source '\(definition.name)': \(error.message)")
        }
    }

    /// Brings the index to the head of the branch.
    func catchUp(_ context: SourceContext) async throws {
        let repository = try open()
        let branch = branch
        let head = try await Blocking.run { try repository.head(branch: branch) }
        let checkpoint = try await context.checkpoint()
        guard checkpoint != head.id else { return }
        var changes: [TreeChange]
        if let checkpoint, repository.hasCommit(checkpoint) {
            changes = try await Blocking.run { try repository.changes(from: checkpoint, to: head.id) }
        } else {
            // Never synced, or the old head is gone (a rewritten history): compare the whole tree.
            let files = try await Blocking.run { try repository.files(at: head.id) }
            let known = try await context.entries()
            let present = Set(files.map(\.path))
            changes = files.filter { known[$0.path]?.stamp != $0.blob }.map(TreeChange.upsert)
            changes += known.keys.filter { !$0.contains("#") && !present.contains($0) }.sorted().map(TreeChange.remove)
        }
        var progress = SourceProgress()
        progress.expected = changes.count
        let chunks = stride(from: 0, to: changes.count, by: filesPerTransaction).map {
            Array(changes[$0..<min($0 + filesPerTransaction, changes.count)])
        }
        for (index, chunk) in chunks.enumerated() {
            let events = try await Blocking.run { [self] in
                try chunk.flatMap { try self.events(for: $0, commit: head, in: repository) }
            }
            // The checkpoint moves only with the last chunk: a sync killed halfway repeats the diff.
            try await context.commit(SourceBatch(events: events, checkpoint: index == chunks.count - 1 ? head.id : nil))
            progress.seen += chunk.count
            progress.indexed += chunk.count
            context.progress(progress)
        }
        if chunks.isEmpty { try await context.commit(SourceBatch(checkpoint: head.id)) }
    }

    private func events(for change: TreeChange, commit: Commit, in repository: Repository) throws -> [SourceEvent] {
        switch change {
        case .remove(let path):
            return [
                .delete(definition.identifier(path), entryKey: path),
                .deletePrefix(identifierPrefix: definition.identifier(path + "#").rawValue, entryKeyPrefix: path + "#"),
            ]
        case .upsert(let file):
            return try events(for: file, commit: commit, in: repository)
        }
    }

    private func events(for file: TreeFile, commit: Commit, in repository: Repository) throws -> [SourceEvent] {
        let name = String(file.path.split(separator: "/").last ?? Substring(file.path))
        let entry = SourceEntry(key: file.path, stamp: file.blob)
        let parts = SourceEvent.deletePrefix(
            identifierPrefix: definition.identifier(file.path + "#").rawValue, entryKeyPrefix: file.path + "#")
        func skip(_ reason: String) -> [SourceEvent] {
            [
                .skip(
                    SourceEntry(key: file.path, stamp: file.blob, skipReason: reason),
                    identifiers: [definition.identifier(file.path)]), parts,
            ]
        }
        let (size, bytes) = try repository.blob(file.blob, limit: limits.maximumBytes)
        guard let bytes else {
            return skip("larger than the \(limits.maximumBytes >> 20) MiB limit (\(size >> 20) MiB)")
        }
        switch TextExtractor.extract(fileName: name, bytes: bytes, limits: limits) {
        case .skipped(let reason):
            return skip(reason)
        case .documents(let documents) where documents.isEmpty:
            return skip("a mailbox with no messages")
        case .documents(let documents):
            var events: [SourceEvent] = [parts]
            if documents.count > 1 || documents[0].part != nil {
                events.append(.delete(definition.identifier(file.path), entryKey: nil))
            }
            for (offset, document) in documents.enumerated() {
                events.append(
                    .upsert(
                        item(document, path: file.path, name: name, size: size, commit: commit, in: repository),
                        entry: offset == 0 ? entry : nil))
            }
            return events
        }
    }

    private func item(
        _ document: ExtractedDocument, path: String, name: String, size: Int, commit: Commit,
        in repository: Repository
    ) -> SearchableItem {
        var attributes = AttributeSet(contentType: ContentType(rawValue: document.contentType))
        attributes.title = document.title ?? document.subject ?? name
        attributes.displayName = name
        attributes.textContent = document.text
        attributes.path = repository.location + "/" + path
        attributes.contentModificationDate = commit.date
        attributes[.fileSize] = .number(Double(size))
        attributes[AttributeKey("commit")] = .text(commit.id)
        if let branch { attributes[AttributeKey("branch")] = .text(branch) }
        if let author = commit.authorName { attributes.authorNames = [author] }
        if let email = commit.authorEmail { attributes[.authorEmailAddresses] = .texts([email]) }
        if let subject = document.subject { attributes.subject = subject }
        let key = document.part.map { path + "#" + $0 } ?? path
        return SearchableItem(
            uniqueIdentifier: definition.identifier(key), domainIdentifier: definition.domain,
            attributeSet: attributes, expirationDate: .distantFuture)
    }

    // MARK: Watch

    /// Syncs, then syncs again whenever the branch's ref moves, until cancelled.
    public func watch(_ context: SourceContext) async throws {
        // As a load, as `sync`'s: the first sync of a repository is its first index.
        try await context.load { try await sync(context) }
        // New commits move a ref: a file under refs/heads, packed-refs or HEAD in the git folder changes.
        let refs = try Inotify(root: repository.gitDirectory)
        _ = refs.watch("")
        let scanner = TreeScanner(root: repository.gitDirectory, excludedNames: [])
        _ = scanner.walk("refs", enter: { _ = refs.watch($0) })
        await context.report(.watching, detail: branch.map { "following \($0)" })
        var lastHead = try? await context.checkpoint()
        try await withTaskCancellationHandler {
            while !Task.isCancelled {
                let events = try await Blocking.run { refs.wait(timeout: 5) }
                for case .created(let path, true) in events { _ = refs.watch(path) }
                // A head that moved is synced once its ref files have settled; the timeout is a fallback.
                let branch = branch
                guard let head = try? await Blocking.run({ [self] in try open().head(branch: branch) }),
                    head.id != lastHead
                else { continue }
                do {
                    try await catchUp(context)
                    lastHead = head.id
                    await context.report(.watching, detail: branch.map { "following \($0) at \(head.id.prefix(12))" })
                } catch {
                    await context.report(.failed, detail: "syncing \(head.id.prefix(12)) failed; retrying")
                    await context.report(error: "\(error)")
                }
            }
        } onCancel: {
            refs.wake()
        }
        await context.report(.stopped)
    }

    // MARK: Hydration

    /// A git item is current while its file is still at the head of the branch with the same content.
    public func answer(
        _ identifiers: [ItemIdentifier], includingContent: Bool,
        _ context: SourceContext
    ) async throws -> [ItemIdentifier: SourceAnswer] {
        let repository = try open()
        let branch = branch
        let head = try await Blocking.run { try repository.head(branch: branch) }
        let files = Dictionary(
            try await Blocking.run { try repository.files(at: head.id) }.map { ($0.path, $0) },
            uniquingKeysWith: { a, _ in a })
        var answers: [ItemIdentifier: SourceAnswer] = [:]
        for identifier in identifiers {
            guard let key = definition.key(of: identifier) else { continue }
            let path = key.split(separator: "#", maxSplits: 1).first.map(String.init) ?? key
            guard let file = files[path] else {
                answers[identifier] = .gone(reason: "the file is no longer at the head of \(branch ?? "HEAD")")
                continue
            }
            guard includingContent else {
                answers[identifier] = .current(nil, version: file.blob)
                continue
            }
            let events = try await Blocking.run { [self] in try self.events(for: file, commit: head, in: repository) }
            let current = events.compactMap { event -> SearchableItem? in
                if case .upsert(let item, _) = event, item.uniqueIdentifier == identifier { return item }
                return nil
            }.first
            answers[identifier] =
                current.map { SourceAnswer.current($0, version: file.blob) }
                ?? .gone(reason: "the file can no longer be indexed")
        }
        return answers
    }
}
