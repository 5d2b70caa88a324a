import Foundation
import Replica
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Linux inotify for one root: a watch per directory, events translated to paths within the root.
///
/// Watches are per directory ([inotify(7)](https://man7.org/linux/man-pages/man7/inotify.7.html)); new
/// directories are watched as they appear. When `inotify_add_watch` fails with `ENOSPC` the per-user watch
/// limit (`/proc/sys/fs/inotify/max_user_watches`) is reached: the directory is recorded as unwatched so the
/// source can scan it on a timer instead, and say so.
package final class Inotify: Sendable {
    let root: String
    private let descriptor: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    /// The watches, under one lock: the watcher's thread reads events while sources add and move watches.
    private let watches = Mutex(Watches())
    /// Refuse watches beyond this many, as the kernel does at its limit (tests use it; `nil`: the kernel decides).
    let watchLimit: Int?
    /// The events read from the kernel, under a lock of its own (one reader at a time).
    private let buffer = Mutex([UInt8](repeating: 0, count: 64 * 1024))

    private struct Watches {
        var paths: [Int32: String] = [:]
        var descriptors: [String: Int32] = [:]
        var unwatched: Set<String> = []
    }

    private static let mask = UInt32(
        IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO
            | IN_ATTRIB | IN_DELETE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)

    package init(root: String, watchLimit: Int? = nil) throws {
        self.root = root
        self.watchLimit = watchLimit
        descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard descriptor >= 0 else {
            throw ReplicaError(.fileSystem, "inotify is not available: \(String(cString: strerror(errno)))")
        }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            Glibc.close(descriptor)
            throw ReplicaError(.fileSystem, "cannot create a pipe: \(String(cString: strerror(errno)))")
        }
        wakeRead = ends[0]
        wakeWrite = ends[1]
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
    }

    deinit {
        Glibc.close(descriptor)
        Glibc.close(wakeRead)
        Glibc.close(wakeWrite)
    }

    /// The outcome of asking to watch a directory.
    package enum WatchOutcome: Equatable {
        case watching
        /// The watch limit is reached; the directory must be scanned instead.
        case limitReached
        /// The directory is gone or cannot be watched.
        case failed(String)
    }

    /// Watches a directory (relative to the root; `""` is the root itself).
    package func watch(_ directory: String) -> WatchOutcome {
        let full = directory.isEmpty ? root : root + "/" + directory
        return watches.withLock { watches in
            if watches.descriptors[directory] != nil { return .watching }
            if let watchLimit, watches.descriptors.count >= watchLimit {
                watches.unwatched.insert(directory)
                return .limitReached
            }
            let watch = inotify_add_watch(descriptor, full, Self.mask)
            if watch < 0 {
                if errno == ENOSPC {
                    watches.unwatched.insert(directory)
                    return .limitReached
                }
                return .failed(String(cString: strerror(errno)))
            }
            // The same directory reached by two names gets one watch; keep the newer name.
            if let previous = watches.paths[watch] { watches.descriptors[previous] = nil }
            watches.paths[watch] = directory
            watches.descriptors[directory] = watch
            watches.unwatched.remove(directory)
            return .watching
        }
    }

    /// Stops watching a directory and everything under it (moved out of the root, or gone).
    func unwatch(tree directory: String) {
        watches.withLock { watches in
            for (path, watch) in watches.descriptors where path == directory || path.hasPrefix(directory + "/") {
                inotify_rm_watch(descriptor, watch)
                watches.descriptors[path] = nil
                watches.paths[watch] = nil
            }
            watches.unwatched = watches.unwatched.filter { !($0 == directory || $0.hasPrefix(directory + "/")) }
        }
    }

    /// Follows a directory moved within the root: its watches stay, their names change.
    func move(tree from: String, to: String) {
        watches.withLock { watches in
            for (path, watch) in watches.descriptors where path == from || path.hasPrefix(from + "/") {
                let renamed = to + path.dropFirst(from.count)
                watches.descriptors[path] = nil
                watches.descriptors[renamed] = watch
                watches.paths[watch] = renamed
            }
        }
    }

    /// Directories that could not be watched because of the watch limit.
    var unwatchedDirectories: Set<String> { watches.withLock { $0.unwatched } }

    var watchCount: Int { watches.withLock { $0.descriptors.count } }

    /// Interrupts a `wait` in progress.
    package func wake() {
        var byte: UInt8 = 1
        _ = Glibc.write(wakeWrite, &byte, 1)
    }

    /// Waits up to `timeout` seconds to be woken, reading no events (they stay queued).
    func waitForWake(timeout: Double) -> Bool {
        var fd = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
        let ready = poll(&fd, 1, Int32(max(0, timeout * 1000)))
        if ready > 0 {
            var drain = [UInt8](repeating: 0, count: 64)
            while Glibc.read(wakeRead, &drain, drain.count) > 0 {}
        }
        return ready > 0
    }

    /// Waits up to `timeout` seconds (`nil`: until woken) for events, and returns them.
    package func wait(timeout: Double?) -> [FileSystemEvent] {
        var fds = [
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
        ]
        let milliseconds = timeout.map { Int32(max(0, min($0 * 1000, 60_000)).rounded(.up)) } ?? -1
        let ready = poll(&fds, 2, milliseconds)
        if ready > 0 && fds[1].revents != 0 {
            var drain = [UInt8](repeating: 0, count: 64)
            while Glibc.read(wakeRead, &drain, drain.count) > 0 {}
        }
        return ready > 0 && fds[0].revents != 0 ? readEvents() : []
    }

    /// Reads every event queued now (without waiting).
    func readEvents() -> [FileSystemEvent] {
        buffer.withLock { buffer in readEvents(into: &buffer) }
    }

    private func readEvents(into buffer: inout [UInt8]) -> [FileSystemEvent] {
        var events: [FileSystemEvent] = []
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            var offset = 0
            while offset + 16 <= count {
                let (watch, mask, cookie, length) = buffer.withUnsafeBytes { raw in
                    (
                        raw.load(fromByteOffset: offset, as: Int32.self),
                        raw.load(fromByteOffset: offset + 4, as: UInt32.self),
                        raw.load(fromByteOffset: offset + 8, as: UInt32.self),
                        Int(raw.load(fromByteOffset: offset + 12, as: UInt32.self))
                    )
                }
                let nameBytes = buffer[(offset + 16)..<min(offset + 16 + length, count)].prefix { $0 != 0 }
                let name = String(decoding: nameBytes, as: UTF8.self)
                offset += 16 + length
                if let event = translate(watch: watch, mask: mask, cookie: cookie, name: name) { events.append(event) }
            }
        }
        return events
    }

    /// Drops every queued event unread (tests: simulating a queue overflow).
    func discardQueuedEvents() {
        _ = readEvents()
    }

    private func translate(watch: Int32, mask: UInt32, cookie: UInt32, name: String) -> FileSystemEvent? {
        if mask & UInt32(IN_Q_OVERFLOW) != 0 { return .overflow }
        if mask & UInt32(IN_IGNORED) != 0 {
            watches.withLock { watches in
                if let path = watches.paths.removeValue(forKey: watch) { watches.descriptors[path] = nil }
            }
            return nil
        }
        guard let directory = watches.withLock({ $0.paths[watch] }) else { return nil }
        if mask & UInt32(IN_DELETE_SELF) != 0 {
            return directory.isEmpty ? .deleted("", isDirectory: true) : nil
        }
        guard !name.isEmpty else { return nil }
        let path = directory.isEmpty ? name : directory + "/" + name
        let isDirectory = mask & UInt32(IN_ISDIR) != 0
        if mask & UInt32(IN_CREATE) != 0 { return .created(path, isDirectory: isDirectory) }
        if mask & UInt32(IN_MOVED_FROM) != 0 { return .movedFrom(path, cookie: cookie, isDirectory: isDirectory) }
        if mask & UInt32(IN_MOVED_TO) != 0 { return .movedTo(path, cookie: cookie, isDirectory: isDirectory) }
        if mask & UInt32(IN_DELETE) != 0 { return .deleted(path, isDirectory: isDirectory) }
        if mask & UInt32(IN_CLOSE_WRITE) != 0 { return .closedAfterWriting(path) }
        if mask & UInt32(IN_MODIFY) != 0 { return isDirectory ? nil : .modified(path) }
        if mask & UInt32(IN_ATTRIB) != 0 { return isDirectory ? nil : .attributesChanged(path) }
        return nil
    }

    /// The kernel's per-user watch limit, for messages.
    static var systemWatchLimit: Int? {
        guard let text = try? String(contentsOfFile: "/proc/sys/fs/inotify/max_user_watches", encoding: .utf8) else {
            return nil
        }
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
