/// A change the kernel reported for a path within a watched root (paths are relative to the root).
package enum FileSystemEvent: Equatable, Sendable {
    case created(String, isDirectory: Bool)
    case modified(String)
    case closedAfterWriting(String)
    /// Permissions or ownership changed: the file may have become readable or unreadable.
    case attributesChanged(String)
    case deleted(String, isDirectory: Bool)
    case movedFrom(String, cookie: UInt32, isDirectory: Bool)
    case movedTo(String, cookie: UInt32, isDirectory: Bool)
    /// The kernel dropped events: only a full comparison with the disk can tell what changed.
    case overflow
}

/// What the file-tree source should do, once the events about a path have settled.
enum FileAction: Equatable, Sendable {
    /// Read the file and index it (or record why it was skipped).
    case index(String)
    /// The file is gone.
    case remove(String)
    /// A directory appeared (created, or moved in from outside): watch it and index what is in it.
    case addTree(String)
    /// A directory went away (deleted, or moved out of the root): remove everything under it.
    case removeTree(String)
    /// A file or directory moved within the root: one change, old items out and new ones in together.
    case rename(from: String, to: String, isDirectory: Bool)
    /// Compare the whole tree with the index.
    case reconcile
}

/// Turns a stream of file-system events into few, settled actions: a pure state machine, driven by the
/// caller's clock, with no I/O.
///
/// - A file being written is indexed once, `closeDelay` after its last close; a file written without
///   being closed (a log held open) is indexed `quietPeriod` after its last write, and again when it
///   closes — it is never left behind.
/// - `movedFrom` and `movedTo` with the same cookie become one `rename`; a `movedFrom` unpaired after
///   `moveWindow` moved out of the root (a removal), a lone `movedTo` moved in (an addition).
/// - Deletions win over pending writes; a queue overflow drops everything pending for one reconcile.
///
/// For example:
/// ```swift
/// var coalescer = Coalescer()
/// coalescer.receive(.modified("a.txt"), at: 0.00)
/// coalescer.receive(.closedAfterWriting("a.txt"), at: 0.01)
/// coalescer.actions(at: 0.02)   // [.index("a.txt")], once the close delay has passed
/// ```
struct Coalescer: Sendable {
    /// How long after a close a file waits for more writes before it is indexed.
    var closeDelay: Double = 0.010
    /// How long a file written but not closed waits for quiet before it is indexed anyway.
    var quietPeriod: Double = 1.0
    /// How long a `movedFrom` waits for its `movedTo`.
    var moveWindow: Double = 0.050

    private enum Pending: Equatable {
        /// Written and closed at `at`.
        case closed(at: Double)
        /// Being written since `since`; last written at `at`.
        case writing(at: Double)
        /// Gone.
        case removed(at: Double)
    }

    private var files: [String: Pending] = [:]
    private var moves: [UInt32: (path: String, isDirectory: Bool, at: Double)] = [:]
    /// Actions that need no waiting (directories, renames), in arrival order.
    private var ready: [FileAction] = []

    init(closeDelay: Double = 0.010, quietPeriod: Double = 1.0, moveWindow: Double = 0.050) {
        self.closeDelay = closeDelay
        self.quietPeriod = quietPeriod
        self.moveWindow = moveWindow
    }

    /// Whether nothing is waiting.
    var isIdle: Bool { files.isEmpty && moves.isEmpty && ready.isEmpty }

    /// How many changes are waiting to settle (shown as the source's lag).
    var pendingCount: Int { files.count + moves.count + ready.count }

    mutating func receive(_ event: FileSystemEvent, at now: Double) {
        switch event {
        case .created(let path, let isDirectory):
            if isDirectory { ready.append(.addTree(path)) } else { files[path] = .writing(at: now) }
        case .modified(let path):
            files[path] = .writing(at: now)
        case .closedAfterWriting(let path):
            files[path] = .closed(at: now)
        case .attributesChanged(let path):
            if files[path] == nil { files[path] = .closed(at: now) }
        case .deleted(let path, let isDirectory):
            if isDirectory {
                dropPending(under: path)
                ready.append(.removeTree(path))
            } else {
                files[path] = .removed(at: now)
            }
        case .movedFrom(let path, let cookie, let isDirectory):
            moves[cookie] = (path, isDirectory, now)
        case .movedTo(let path, let cookie, let isDirectory):
            if let from = moves.removeValue(forKey: cookie) {
                if from.isDirectory {
                    dropPending(under: from.path)
                } else {
                    files[from.path] = nil
                    files[path] = nil
                }
                ready.append(.rename(from: from.path, to: path, isDirectory: isDirectory))
            } else if isDirectory {
                ready.append(.addTree(path))
            } else {
                files[path] = .closed(at: now)
            }
        case .overflow:
            files.removeAll()
            moves.removeAll()
            ready = [.reconcile]
        }
    }

    /// The actions due at `now`, in a stable order; they are forgotten once returned.
    mutating func actions(at now: Double) -> [FileAction] {
        var due = ready
        ready.removeAll()
        for (cookie, move) in moves.sorted(by: { ($0.value.at, $0.key) < ($1.value.at, $1.key) })
        where now - move.at >= moveWindow {
            moves[cookie] = nil
            due.append(move.isDirectory ? .removeTree(move.path) : .remove(move.path))
        }
        for (path, pending) in files.sorted(by: { $0.key < $1.key }) {
            switch pending {
            case .closed(let at) where now - at >= closeDelay:
                files[path] = nil
                due.append(.index(path))
            case .writing(let at) where now - at >= quietPeriod:
                files[path] = nil
                due.append(.index(path))
            case .removed:
                files[path] = nil
                due.append(.remove(path))
            default:
                break
            }
        }
        return due
    }

    /// When the next action falls due, if anything is waiting (`nil`: nothing is).
    func nextDeadline() -> Double? {
        if !ready.isEmpty { return 0 }
        var deadlines = moves.values.map { $0.at + moveWindow }
        for pending in files.values {
            switch pending {
            case .closed(let at): deadlines.append(at + closeDelay)
            case .writing(let at): deadlines.append(at + quietPeriod)
            case .removed: deadlines.append(0)
            }
        }
        return deadlines.min()
    }

    private mutating func dropPending(under directory: String) {
        let prefix = directory + "/"
        files = files.filter { !$0.key.hasPrefix(prefix) }
    }
}
