import Foundation
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaGit
@testable import ReplicaIndex

@Suite struct GitSourceTests {
    let directory: TemporaryDirectory
    let store: Store
    let repository: String

    init() throws {
        directory = try TemporaryDirectory()
        store = try Store(directory: directory.appending("store"))
        for account: AccountID in ["alice"] { try store.signIn(account) }
        repository = directory.path + "/repo"
        try FileManager.default.createDirectory(atPath: repository, withIntermediateDirectories: true)
        try git("init", "-q", "-b", "main")
    }

    /// Runs git in the repository with a fixed author.
    @discardableResult
    func git(_ arguments: String...) throws -> String {
        let result = try ReplicaProcess.run(
            executable: URL(fileURLWithPath: "/usr/bin/git"),
            [
                "-C", repository, "-c", "user.name=Ada Lovelace", "-c", "user.email=ada@example.com",
                "-c", "commit.gpgsign=false",
            ] + arguments,
            environment: ["GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_SYSTEM": "/dev/null"])
        #expect(result.status == 0, "git \(arguments.joined(separator: " ")): \(result.standardError)")
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func write(_ path: String, _ text: String) throws {
        let url = URL(fileURLWithPath: repository + "/" + path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: true, encoding: .utf8)
    }

    func commit(_ message: String) throws -> String {
        try git("add", "-A")
        try git("commit", "-q", "-m", message)
        return try git("rev-parse", "HEAD")
    }

    func makeSource(branch: String? = nil, filesPerTransaction: Int = GitSource.filesPerTransaction) throws -> (
        GitSource, SourceContext
    ) {
        var settings: [(String, JSON)] = [("repository", .string(repository))]
        if let branch { settings.append(("branch", .string(branch))) }
        let definition = try store.addSource(
            SourceDefinition(kind: .git, account: "alice", settings: .object(settings)))
        return (
            try GitSource(definition, filesPerTransaction: filesPerTransaction),
            try SourceContext(definition: definition, store: store)
        )
    }

    func found(_ words: String) async throws -> [String] {
        try await store.search(SearchQuery(words)).map(\.item.uniqueIdentifier.rawValue).sorted()
    }

    @Test func theHeadTreeIsIndexedWithItsCommitAuthorAndDate() async throws {
        try write("README.md", "# Readme\n\norchid words")
        try write("src/main.c", "int zebra_function(void);")
        let head = try commit("first")
        let (source, context) = try makeSource()
        try await source.sync(context)
        #expect(try await found("orchid") == ["git-1:README.md"])
        #expect(try await found("zebra_function") == ["git-1:src/main.c"])
        let item = try #require(try await store.search(SearchQuery("orchid")).first?.item)
        #expect(item.attributeSet[AttributeKey("commit")] == .text(head))
        #expect(item.attributeSet[AttributeKey("branch")] == .text("main"))
        #expect(item.attributeSet.authorNames == ["Ada Lovelace"])
        #expect(item.attributeSet.contentModificationDate != nil)
        #expect(item.attributeSet.path == repository + "/README.md")
        #expect(try await context.checkpoint() == head)
    }

    @Test func newCommitsAreAppliedAsChangesOnly() async throws {
        try write("keep.txt", "steady words")
        try write("edit.txt", "before words")
        try write("drop.txt", "doomed words")
        try write("old-name.txt", "traveling words")
        _ = try commit("first")
        let (source, context) = try makeSource()
        try await source.sync(context)
        let steadyIndexed = try #require(try await store.search(SearchQuery("steady")).first?.indexedAt)

        try write("edit.txt", "after words")
        try FileManager.default.removeItem(atPath: repository + "/drop.txt")
        try git("mv", "old-name.txt", "new-name.txt")
        try write("added.txt", "fresh words")
        let second = try commit("second")
        try await source.sync(context)
        #expect(try await found("before").isEmpty)
        #expect(try await found("after") == ["git-1:edit.txt"])
        #expect(try await found("doomed").isEmpty)
        #expect(try await found("traveling") == ["git-1:new-name.txt"])
        #expect(try await found("fresh") == ["git-1:added.txt"])
        #expect(
            try await store.search(SearchQuery("steady")).first?.indexedAt == steadyIndexed,
            "an unchanged file is not rewritten")
        #expect(try await context.checkpoint() == second)
    }

    @Test func aBranchMovedBackAndARewrittenHistoryAreFollowed() async throws {
        try write("a.txt", "original words")
        let first = try commit("first")
        try write("b.txt", "secondcommit words")
        _ = try commit("second")
        let (source, context) = try makeSource()
        try await source.sync(context)
        #expect(try await found("secondcommit") == ["git-1:b.txt"])

        // The branch moves back (a reset): the file of the second commit goes.
        try git("reset", "-q", "--hard", first)
        try await source.sync(context)
        #expect(try await found("secondcommit").isEmpty)

        // History is rewritten and the old commits are collected: the whole tree is compared again.
        try write("a.txt", "rewritten words")
        try git("commit", "-q", "--amend", "-a", "-m", "rewritten")
        try git("update-ref", "-d", "ORIG_HEAD")
        try git("reflog", "expire", "--expire=now", "--all")
        try git("gc", "-q", "--prune=now")
        #expect(try !Repository(path: repository).hasCommit(first))
        try await source.sync(context)
        #expect(try await found("original").isEmpty)
        #expect(try await found("rewritten") == ["git-1:a.txt"])
    }

    @Test func anotherBranchCanBeFollowed() async throws {
        try write("a.txt", "mainline words")
        _ = try commit("first")
        try git("checkout", "-q", "-b", "feature")
        try write("f.txt", "featurework words")
        _ = try commit("feature")
        try git("checkout", "-q", "main")
        let (source, context) = try makeSource(branch: "feature")
        try await source.sync(context)
        #expect(try await found("featurework") == ["git-1:f.txt"])
    }

    @Test func watchingFollowsNewCommits() async throws {
        try write("a.txt", "first words")
        _ = try commit("first")
        let (source, context) = try makeSource()
        let watching = Task { try await source.watch(context) }
        defer { watching.cancel() }
        #expect(try await eventually { try await found("first") == ["git-1:a.txt"] })
        #expect(try await eventually { try await store.sourceStatuses().first?.state == .watching })
        try write("b.txt", "watchedcommit words")
        let head = try commit("second")
        #expect(try await eventually { try await found("watchedcommit") == ["git-1:b.txt"] })
        #expect(try await context.checkpoint() == head)
    }

    /// A repository's first sync while watching is its first index, written as `sync` writes one (a load):
    /// FTS5's segments are left for the ranking lists' build to merge once, and the vocabulary typos are
    /// corrected towards is added up before the source says it watches.
    @Test func theFirstSyncOfAWatchedRepositoryIsWrittenAsALoad() async throws {
        for n in 0..<40 { try write("notes/note-\(n).txt", "harbour inspection number\(n)") }
        _ = try commit("notes")
        let (source, context) = try makeSource(filesPerTransaction: 2)
        let watching = Task { try await source.watch(context) }
        defer { watching.cancel() }
        #expect(try await eventually { try await store.sourceStatuses().first?.state == .watching })
        // One segment a chunk's transaction; outside a load FTS5 merges a level of 16 at once.
        let path = store.directory.path + "/accounts/alice/indexes/\(Store.defaultIndexName).sqlite"
        #expect(try fullTextSegments(ofIndexFile: path) == 20)
        #expect(try await store.search(SearchQuery("inspektion", limit: 100)).count == 40)
    }

    @Test func aFileStillAtTheHeadIsCurrentAndARemovedOneIsGone() async throws {
        try write("a.txt", "here words")
        try write("b.txt", "leaving words")
        _ = try commit("first")
        let (source, context) = try makeSource()
        try await source.sync(context)
        try FileManager.default.removeItem(atPath: repository + "/b.txt")
        _ = try commit("remove b")
        let answers = try await source.answer(["git-1:a.txt", "git-1:b.txt"], includingContent: true, context)
        guard case .current(let item?, _)? = answers["git-1:a.txt"] else {
            Issue.record("a.txt should be current")
            return
        }
        #expect(item.attributeSet.textContent == "here words")
        guard case .gone(let reason)? = answers["git-1:b.txt"] else {
            Issue.record("b.txt should be gone")
            return
        }
        #expect(reason.contains("no longer at the head"))
    }
}
