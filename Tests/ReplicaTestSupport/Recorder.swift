import Synchronization

/// A thread-safe list that callbacks append to and tests read.
public final class Recorder<Element: Sendable>: Sendable {
    private let storage = Mutex<[Element]>([])

    public init() {}

    public func append(_ element: Element) {
        storage.withLock { $0.append(element) }
    }

    public var all: [Element] { storage.withLock { $0 } }
}
