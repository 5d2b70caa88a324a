import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A file found under a root, with what a reconcile compares.
package struct FileInfo: Equatable, Sendable {
    /// The path within the root.
    var path: String
    var size: Int64
    /// Modification time in nanoseconds since 1970.
    var modified: Int64
    var inode: UInt64

    /// The fingerprint kept beside the file's items: size, modification time and inode.
    var stamp: String { "\(size):\(modified):\(inode)" }

    var modificationDate: Date { Date(timeIntervalSince1970: Double(modified) / 1e9) }
}

/// Something under the root that will not be indexed, and why.
package struct SkippedPath: Equatable, Sendable {
    var path: String
    var reason: String
}

/// Walks a root without ever leaving it.
///
/// Symbolic links are not followed into directories (a linked directory inside the root is indexed where
/// it lives; one outside must not be reached), so link loops cannot trap the walk. A link to a file inside
/// the root is indexed under the link's own path; a link that leads outside the root is recorded as
/// skipped. Folders named in `excludedNames` (version-control metadata by default) and the paths in
/// `excludedPaths` (replica's own store) are never entered.
package struct TreeScanner: Sendable {
    /// The root, as an absolute path with symbolic links resolved.
    let root: String
    var excludedNames: Set<String> = [".git", ".hg", ".svn"]
    /// Absolute paths never entered: replica's store, so the index never watches itself.
    var excludedPaths: [String] = []

    package init(root: String, excludedNames: Set<String> = [".git", ".hg", ".svn"], excludedPaths: [String] = []) {
        self.root = root
        self.excludedNames = excludedNames
        self.excludedPaths = excludedPaths
    }

    func absolute(_ path: String) -> String { path.isEmpty ? root : root + "/" + path }

    /// Whether an absolute path is the root or inside it.
    func contains(absolutePath path: String) -> Bool { path == root || path.hasPrefix(root + "/") }

    /// What is at a path within the root now: a file to index, something to skip, or nothing.
    enum Lookup: Equatable {
        case file(FileInfo)
        case directory
        case skipped(String)
        case missing
    }

    func lookup(_ path: String) -> Lookup {
        var info = stat()
        guard lstat(absolute(path), &info) == 0 else {
            return errno == ENOENT || errno == ENOTDIR ? .missing : .skipped(Self.errorReason(errno))
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            return .file(Self.fileInfo(path, info))
        case S_IFDIR:
            return .directory
        case S_IFLNK:
            guard let target = realpath(absolute(path), nil) else {
                return .skipped("a symbolic link whose target is missing")
            }
            let resolved = String(cString: target)
            free(target)
            guard contains(absolutePath: resolved) else { return .skipped("a symbolic link leading outside the root") }
            var targetInfo = stat()
            guard stat(resolved, &targetInfo) == 0 else { return .skipped(Self.errorReason(errno)) }
            if (targetInfo.st_mode & S_IFMT) == S_IFDIR {
                return .skipped("a symbolic link to a folder (indexed where it lives)")
            }
            guard (targetInfo.st_mode & S_IFMT) == S_IFREG else {
                return .skipped("a symbolic link to something that is not a file")
            }
            return .file(Self.fileInfo(path, targetInfo))
        default:
            return .skipped("not a regular file")
        }
    }

    static func fileInfo(_ path: String, _ info: stat) -> FileInfo {
        FileInfo(
            path: path, size: Int64(info.st_size),
            modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
            inode: UInt64(info.st_ino))
    }

    static let invalidNameReason = "its name is not valid UTF-8; rename it to have it indexed"

    /// Whether a skip reason is a failure to read, which may pass (permissions restored, a disk back):
    /// such entries are tried again at every pass, whatever their stamp.
    static func mayPass(_ reason: String?) -> Bool {
        reason?.hasPrefix("cannot be read") == true
    }

    static func errorReason(_ code: Int32) -> String {
        code == EACCES || code == EPERM
            ? "cannot be read: permission denied" : "cannot be read: \(String(cString: strerror(code)))"
    }

    /// Whether a directory (within the root) may be entered.
    func mayEnter(_ path: String) -> Bool {
        if let name = path.split(separator: "/").last, excludedNames.contains(String(name)) { return false }
        let full = absolute(path)
        return !excludedPaths.contains { full == $0 || full.hasPrefix($0 + "/") }
    }

    /// Walks `directory` (within the root) and everything under it.
    ///
    /// - Parameters:
    ///   - enter: called for each directory before its entries are read, so a watcher can watch it
    ///     first and miss nothing created during the walk.
    ///   - deadline: a check that returns `true` when the walk should stop early (cancellation).
    package func walk(
        _ directory: String = "", enter: (String) -> Void = { _ in },
        stop: () -> Bool = { false }
    ) -> (files: [FileInfo], skipped: [SkippedPath]) {
        var files: [FileInfo] = []
        var skipped: [SkippedPath] = []
        var pending = [directory]
        while let current = pending.popLast() {
            if stop() { break }
            guard mayEnter(current) else { continue }
            enter(current)
            guard let handle = opendir(absolute(current)) else {
                if errno != ENOENT { skipped.append(SkippedPath(path: current, reason: Self.errorReason(errno))) }
                continue
            }
            var names: [String] = []
            while let entry = readdir(handle) {
                let bytes = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
                guard let name = String(validating: bytes, as: UTF8.self) else {
                    // Such a name cannot be looked up again through a String: it is recorded as skipped
                    // (under its bytes, %-escaped), never silently left out.
                    let escaped = bytes.map {
                        $0 < 0x80 && $0 != UInt8(ascii: "%")
                            ? String(UnicodeScalar($0)) : "%" + String($0, radix: 16, uppercase: true)
                    }.joined()
                    let path = current.isEmpty ? escaped : current + "/" + escaped
                    skipped.append(SkippedPath(path: path, reason: Self.invalidNameReason))
                    continue
                }
                if name != "." && name != ".." { names.append(name) }
            }
            closedir(handle)
            for name in names.sorted() {
                let path = current.isEmpty ? name : current + "/" + name
                switch lookup(path) {
                case .file(let info): files.append(info)
                case .directory: pending.append(path)
                case .skipped(let reason): skipped.append(SkippedPath(path: path, reason: reason))
                case .missing: break
                }
            }
        }
        return (files, skipped)
    }
}
