/// Splits a stream of bytes into lines, in time linear in the bytes and memory bounded by a cap on a
/// line's length.
///
/// Bytes are appended as they arrive; each byte is looked at once when searching for line ends, however
/// the stream is cut into chunks. A line longer than `maximumLineLength` is not kept: it is reported
/// once as too long and the rest of it is skipped as it arrives, so the next line reads normally.
///
/// For example:
/// ```swift
/// var lines = LineBuffer(maximumLineLength: 1 << 20)
/// lines.append(Array("first\nsecond\nthird".utf8))
/// while let line = lines.next() { print(line) }
/// if let last = lines.finish() { print(last) }   // the last line, when the input does not end with a line break
/// ```
public struct LineBuffer: Sendable, CustomStringConvertible {
    /// What comes out of the buffer.
    public enum Line: Sendable, Equatable {
        /// A line's bytes, without its `\n` (and without a `\r` before it).
        case line(ArraySlice<UInt8>)
        /// A line longer than the cap; its bytes were dropped. Reported once per such line.
        case tooLong
    }

    /// The most bytes a line may hold.
    public let maximumLineLength: Int
    private var buffer: [UInt8] = []
    /// Where the next line starts.
    private var start = 0
    /// Bytes before this index (from `start`) are known to hold no line break.
    private var scanned = 0
    /// Inside a line that was too long: its bytes are dropped until its line break.
    private var skipping = false
    /// The first bytes (at most ``headLength``) of the last line reported as too long: enough for a
    /// reader to say which message it was (a JSON-RPC request's `id`), never the whole line.
    public private(set) var lastTooLongHead: ArraySlice<UInt8> = []
    /// How many of a too-long line's first bytes ``lastTooLongHead`` keeps.
    public static let headLength = 256

    /// Makes an empty buffer.
    ///
    /// - Parameter maximumLineLength: The most bytes a line may hold; longer lines come out as ``Line/tooLong``.
    public init(maximumLineLength: Int) {
        self.maximumLineLength = maximumLineLength
    }

    /// How many bytes the buffer holds (of an incomplete line); never much more than the cap plus the
    /// last chunk appended.
    public var heldByteCount: Int { buffer.count - start }

    /// How many bytes the buffer holds and whether it is skipping a line over the cap; never the bytes themselves.
    public var description: String { "LineBuffer(\(heldByteCount) bytes held\(skipping ? ", skipping a line over the cap" : ""))" }

    /// Adds bytes as they arrive; ``next()`` then returns the lines they complete.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeSubrange(0..<start)
            scanned -= start
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete line, or `nil` when none is complete yet.
    public mutating func next() -> Line? {
        while true {
            let from = max(start, scanned)
            guard let newline = buffer[from...].firstIndex(of: 0x0A) else {
                scanned = buffer.count
                if skipping {
                    start = buffer.count
                    return nil
                }
                if buffer.count - start > maximumLineLength {
                    lastTooLongHead = ArraySlice(buffer[start..<min(start + Self.headLength, buffer.count)])
                    skipping = true
                    start = buffer.count
                    return .tooLong
                }
                return nil
            }
            let lineStart = start
            start = newline + 1
            scanned = start
            if skipping {
                skipping = false
                continue
            }
            if newline - lineStart > maximumLineLength {
                lastTooLongHead = ArraySlice(buffer[lineStart..<min(lineStart + Self.headLength, newline)])
                return .tooLong
            }
            var line = buffer[lineStart..<newline]
            if line.last == 0x0D { line = line.dropLast() }
            return .line(line)
        }
    }

    /// At the end of the input: the last line when it has no line break, or `nil`.
    public mutating func finish() -> Line? {
        defer {
            buffer.removeAll()
            start = 0
            scanned = 0
            skipping = false
        }
        if skipping { return nil }
        guard start < buffer.count else { return nil }
        if buffer.count - start > maximumLineLength {
            lastTooLongHead = ArraySlice(buffer[start..<min(start + Self.headLength, buffer.count)])
            return .tooLong
        }
        return .line(buffer[start...])
    }
}
