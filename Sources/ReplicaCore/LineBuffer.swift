/// Splits a stream of bytes into lines, in time linear in the bytes and memory bounded by a cap on a
/// line's length.
///
/// Bytes are appended as they arrive; each byte is looked at once when searching for line ends, however
/// the stream is cut into chunks. A line longer than `maximumLineLength` is not kept: it is reported
/// once as too long (as soon as it passes the cap, or at its end: ``reportsTooLongAtItsEnd``) with its
/// first and last bytes, and the rest of it is skipped as it arrives, so the next line reads normally.
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
    /// reader to say which message it was (a JSON-RPC request's `id`), never the whole line. (Copies,
    /// never slices of the buffer, which would make its next change copy it whole.)
    public private(set) var lastTooLongHead: ArraySlice<UInt8> = []
    /// The last bytes (at most ``headLength``) of the last too-long line whose end has been read (a
    /// JSON-RPC request's `id` may come after its parameters).
    public private(set) var lastTooLongTail: ArraySlice<UInt8> = []
    /// The last bytes of the too-long line being skipped, so far.
    private var skippedTail: [UInt8] = []
    /// How many of a too-long line's first and last bytes are kept.
    public static let headLength = 256
    /// Whether a too-long line is reported when its end is read (its tail known) rather than as soon as
    /// it passes the cap.
    public let reportsTooLongAtItsEnd: Bool

    /// Makes an empty buffer.
    ///
    /// - Parameters:
    ///   - maximumLineLength: The most bytes a line may hold; longer lines come out as ``Line/tooLong``.
    ///   - reportsTooLongAtItsEnd: Report a too-long line once its end is read, with its first and last
    ///     bytes known (a reader that answers each line), rather than as soon as it passes the cap (a
    ///     reader that must stop a writer that never ends its line).
    public init(maximumLineLength: Int, reportsTooLongAtItsEnd: Bool = false) {
        self.maximumLineLength = maximumLineLength
        self.reportsTooLongAtItsEnd = reportsTooLongAtItsEnd
    }

    /// Keeps the last ``headLength`` bytes of a skipped line, `bytes` coming after those kept.
    private mutating func keepTail(_ bytes: ArraySlice<UInt8>) {
        if bytes.count >= Self.headLength {
            skippedTail = Array(bytes.suffix(Self.headLength))
        } else {
            skippedTail.append(contentsOf: bytes)
            if skippedTail.count > Self.headLength { skippedTail.removeFirst(skippedTail.count - Self.headLength) }
        }
    }

    /// How many bytes the buffer holds (of an incomplete line); never much more than the cap plus the
    /// last chunk appended.
    public var heldByteCount: Int { buffer.count - start }

    /// How many bytes the buffer holds and whether it is skipping a line over the cap; never the bytes themselves.
    public var description: String {
        "LineBuffer(\(heldByteCount) bytes held\(skipping ? ", skipping a line over the cap" : ""))"
    }

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
                    keepTail(buffer[start...])
                    start = buffer.count
                    return nil
                }
                if buffer.count - start > maximumLineLength {
                    lastTooLongHead = ArraySlice(Array(buffer[start..<min(start + Self.headLength, buffer.count)]))
                    skippedTail = []
                    keepTail(buffer[start...])
                    skipping = true
                    start = buffer.count
                    return reportsTooLongAtItsEnd ? nil : .tooLong
                }
                return nil
            }
            let lineStart = start
            start = newline + 1
            scanned = start
            if skipping {
                skipping = false
                keepTail(buffer[lineStart..<newline])
                lastTooLongTail = ArraySlice(skippedTail)
                if reportsTooLongAtItsEnd { return .tooLong }
                continue
            }
            if newline - lineStart > maximumLineLength {
                lastTooLongHead = ArraySlice(Array(buffer[lineStart..<min(lineStart + Self.headLength, newline)]))
                lastTooLongTail = ArraySlice(Array(buffer[max(newline - Self.headLength, lineStart)..<newline]))
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
        if skipping {
            keepTail(buffer[start...])
            lastTooLongTail = ArraySlice(skippedTail)
            return reportsTooLongAtItsEnd ? .tooLong : nil
        }
        guard start < buffer.count else { return nil }
        if buffer.count - start > maximumLineLength {
            lastTooLongHead = ArraySlice(Array(buffer[start..<min(start + Self.headLength, buffer.count)]))
            lastTooLongTail = ArraySlice(Array(buffer[max(buffer.count - Self.headLength, start)...]))
            return .tooLong
        }
        return .line(buffer[start...])
    }
}
