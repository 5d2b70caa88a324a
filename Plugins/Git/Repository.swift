import CGit2
import Foundation
import Replica

/// A commit, as the git source records it on items.
struct Commit: Equatable, Sendable {
    var id: String
    var authorName: String?
    var authorEmail: String?
    var date: Date
}

/// A file in a tree: its path and the blob it is.
struct TreeFile: Equatable, Sendable {
    var path: String
    var blob: String
}

/// What changed between two trees.
enum TreeChange: Equatable, Sendable {
    case upsert(TreeFile)
    case remove(String)
}

/// A libgit2 error, with the library's message.
struct GitError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }

    static func last(_ what: String) -> GitError {
        let detail = git_error_last().map { String(cString: $0.pointee.message) } ?? "unknown error"
        return GitError(message: "\(what): \(detail)")
    }
}

/// One repository handle (libgit2 objects are not thread-safe): every call takes the lock.
///
/// Every object libgit2 returns is freed with its `*_free` before the call returns; strings and ids are
/// copied out first ([libgit2's ownership rules](https://libgit2.org/docs/guides/101-samples/)).
final class Repository: @unchecked Sendable {
    private let handle: OpaquePointer
    private let lock = NSLock()
    /// The repository's git folder (`.git`, or the repository itself when bare).
    let gitDirectory: String
    /// The working folder, or the git folder for a bare repository.
    let location: String

    private static let initialized: Bool = {
        git_libgit2_init()
        return true
    }()

    init(path: String) throws {
        _ = Self.initialized
        var handle: OpaquePointer?
        guard git_repository_open_ext(&handle, path, 0, nil) == 0, let handle else {
            throw GitError.last("cannot open the git repository at \(path)")
        }
        self.handle = handle
        gitDirectory = String(cString: git_repository_path(handle)).trimmingSuffix("/")
        location = git_repository_workdir(handle).map { String(cString: $0).trimmingSuffix("/") } ?? gitDirectory
    }

    deinit { git_repository_free(handle) }

    /// Turns off libgit2's check that the repository belongs to the current user (for services that read
    /// other users' repositories, which git otherwise refuses with a message about `safe.directory`).
    static func trustRepositoriesOfOtherUsers() {
        _ = initialized
        _ = replica_git_set_owner_validation(0)
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    private static func hex(_ oid: UnsafePointer<git_oid>) -> String {
        String(cString: git_oid_tostr_s(oid))
    }

    /// The name of the branch HEAD points at (`main`), or `nil` when HEAD is detached.
    func currentBranch() -> String? {
        locked {
            var reference: OpaquePointer?
            guard git_repository_head(&reference, handle) == 0, let reference else { return nil }
            defer { git_reference_free(reference) }
            guard git_reference_is_branch(reference) == 1 else { return nil }
            return String(cString: git_reference_shorthand(reference))
        }
    }

    /// The commit at the head of `branch` (or of HEAD).
    func head(branch: String?) throws -> Commit {
        try locked {
            let spec = branch.map { "refs/heads/\($0)" } ?? "HEAD"
            var object: OpaquePointer?
            guard git_revparse_single(&object, handle, spec) == 0, let object else {
                throw GitError.last(branch.map { "the branch '\($0)' cannot be found" } ?? "HEAD cannot be resolved")
            }
            defer { git_object_free(object) }
            var peeled: OpaquePointer?
            guard git_object_peel(&peeled, object, GIT_OBJECT_COMMIT) == 0, let peeled else {
                throw GitError.last("\(spec) is not a commit")
            }
            defer { git_object_free(peeled) }
            return Self.commit(peeled)
        }
    }

    private static func commit(_ commit: OpaquePointer) -> Commit {
        let signature = git_commit_author(commit)?.pointee
        return Commit(
            id: hex(git_commit_id(commit)),
            authorName: signature.flatMap { $0.name.map { String(cString: $0) } },
            authorEmail: signature.flatMap { $0.email.map { String(cString: $0) } },
            date: Date(timeIntervalSince1970: Double(git_commit_time(commit))))
    }

    /// Whether a commit is (still) in the repository.
    func hasCommit(_ id: String) -> Bool {
        locked {
            (try? lookupCommit(id)).map {
                git_commit_free($0)
                return true
            } ?? false
        }
    }

    private func lookupCommit(_ id: String) throws -> OpaquePointer {
        var oid = git_oid()
        guard git_oid_fromstr(&oid, id) == 0 else { throw GitError(message: "'\(id)' is not a commit id") }
        var commit: OpaquePointer?
        guard git_commit_lookup(&commit, handle, &oid) == 0, let commit else {
            throw GitError.last("commit \(id) is not in the repository")
        }
        return commit
    }

    private func tree(of id: String) throws -> OpaquePointer {
        let commit = try lookupCommit(id)
        defer { git_commit_free(commit) }
        var tree: OpaquePointer?
        guard git_commit_tree(&tree, commit) == 0, let tree else {
            throw GitError.last("the tree of commit \(id) cannot be read")
        }
        return tree
    }

    /// Every file (blob) in a commit's tree; links and submodules are left out.
    func files(at commit: String) throws -> [TreeFile] {
        try locked {
            let tree = try tree(of: commit)
            defer { git_tree_free(tree) }
            final class Collector { var files: [TreeFile] = [] }
            let collector = Collector()
            let payload = Unmanaged.passUnretained(collector).toOpaque()
            let result = git_tree_walk(
                tree, GIT_TREEWALK_PRE,
                { root, entry, payload in
                    guard let entry, let payload, let root else { return 0 }
                    guard git_tree_entry_type(entry) == GIT_OBJECT_BLOB,
                        git_tree_entry_filemode(entry) != GIT_FILEMODE_LINK
                    else { return 0 }
                    let collector = Unmanaged<Collector>.fromOpaque(payload).takeUnretainedValue()
                    let path = String(cString: root) + String(cString: git_tree_entry_name(entry))
                    collector.files.append(
                        TreeFile(path: path, blob: String(cString: git_oid_tostr_s(git_tree_entry_id(entry)))))
                    return 0
                }, payload)
            guard result == 0 else { throw GitError.last("the tree of \(commit) cannot be walked") }
            return collector.files
        }
    }

    /// The changes from one commit's tree to another's (renames as a removal and an upsert).
    func changes(from old: String, to new: String) throws -> [TreeChange] {
        try locked {
            let oldTree = try tree(of: old)
            defer { git_tree_free(oldTree) }
            let newTree = try tree(of: new)
            defer { git_tree_free(newTree) }
            var diff: OpaquePointer?
            guard git_diff_tree_to_tree(&diff, handle, oldTree, newTree, nil) == 0, let diff else {
                throw GitError.last("the trees of \(old) and \(new) cannot be compared")
            }
            defer { git_diff_free(diff) }
            var options = git_diff_find_options()
            git_diff_find_options_init(&options, UInt32(GIT_DIFF_FIND_OPTIONS_VERSION))
            options.flags = GIT_DIFF_FIND_RENAMES.rawValue
            guard git_diff_find_similar(diff, &options) == 0 else { throw GitError.last("renames cannot be found") }
            var changes: [TreeChange] = []
            for index in 0..<git_diff_num_deltas(diff) {
                guard let delta = git_diff_get_delta(diff, index)?.pointee else { continue }
                let oldPath = delta.old_file.path.map { String(cString: $0) }
                let newPath = delta.new_file.path.map { String(cString: $0) }
                let isLink =
                    delta.new_file.mode == UInt16(GIT_FILEMODE_LINK.rawValue)
                    || delta.new_file.mode == UInt16(GIT_FILEMODE_COMMIT.rawValue)
                var newID = delta.new_file.id
                let blob = Self.hex(&newID)
                switch delta.status {
                case GIT_DELTA_ADDED, GIT_DELTA_MODIFIED, GIT_DELTA_TYPECHANGE, GIT_DELTA_COPIED:
                    if let newPath {
                        changes.append(isLink ? .remove(newPath) : .upsert(TreeFile(path: newPath, blob: blob)))
                    }
                case GIT_DELTA_DELETED:
                    if let oldPath { changes.append(.remove(oldPath)) }
                case GIT_DELTA_RENAMED:
                    if let oldPath { changes.append(.remove(oldPath)) }
                    if let newPath, !isLink { changes.append(.upsert(TreeFile(path: newPath, blob: blob))) }
                default:
                    break
                }
            }
            return changes
        }
    }

    /// A blob's bytes and size; with `limit`, the bytes are only read when the blob is no larger.
    func blob(_ id: String, limit: Int) throws -> (size: Int, bytes: [UInt8]?) {
        try locked {
            var oid = git_oid()
            guard git_oid_fromstr(&oid, id) == 0 else { throw GitError(message: "'\(id)' is not a blob id") }
            var blob: OpaquePointer?
            guard git_blob_lookup(&blob, handle, &oid) == 0, let blob else {
                throw GitError.last("blob \(id) cannot be read")
            }
            defer { git_blob_free(blob) }
            let size = Int(git_blob_rawsize(blob))
            guard size <= limit else { return (size, nil) }
            guard size > 0, let content = git_blob_rawcontent(blob) else { return (size, []) }
            return (size, [UInt8](UnsafeRawBufferPointer(start: content, count: size)))
        }
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) && count > suffix.count ? String(dropLast(suffix.count)) : self
    }
}
