import Foundation
import Replica

#if canImport(Glibc)
import Glibc
#endif

/// Reads a file or standard input line by line as raw bytes, without loading it whole.
///
/// Lines end at `\n`; a `\r` before it is dropped. Bytes are handed out unchecked, so the caller can
/// report a line that is not UTF-8 by its number. Reading is linear in the input, and a line longer than
/// ``maximumLineLength`` is skipped with an error that says so, without being held in memory.
struct LineReader {
    /// The most bytes a line may hold: an item's attributes may hold 16 MiB, and escaping in JSON can
    /// make their text longer.
    static let maximumLineLength = 64 << 20

    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private var lines: LineBuffer
    private var atEnd = false
    /// The number of the line last returned, from 1.
    private(set) var lineNumber = 0
    /// The first and last bytes of the last line that was too long (``LineBuffer/lastTooLongHead``).
    var lastTooLong: (head: ArraySlice<UInt8>, tail: ArraySlice<UInt8>) {
        (lines.lastTooLongHead, lines.lastTooLongTail)
    }

    /// Opens `path`, or standard input for `-`; lines longer than `maximumLineLength` bytes are skipped
    /// (and reported at their end with `reportingTooLongAtItsEnd`: ``LineBuffer/reportsTooLongAtItsEnd``).
    init(path: String, maximumLineLength: Int = LineReader.maximumLineLength, reportingTooLongAtItsEnd: Bool = false)
        throws
    {
        lines = LineBuffer(maximumLineLength: maximumLineLength, reportsTooLongAtItsEnd: reportingTooLongAtItsEnd)
        if path == "-" {
            descriptor = STDIN_FILENO
            ownsDescriptor = false
        } else {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw CLIError.failure("cannot read \(path): \(String(cString: strerror(errno)))")
            }
            ownsDescriptor = true
            var info = stat()
            if fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
                Glibc.close(descriptor)
                throw CLIError.failure("cannot read \(path): it is a directory")
            }
        }
    }

    func close() {
        if ownsDescriptor { Glibc.close(descriptor) }
    }

    /// The next line, or `nil` at the end of the input.
    mutating func next() throws -> LineBuffer.Line? {
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            if let line = lines.next() {
                lineNumber += 1
                return line
            }
            if atEnd {
                guard let line = lines.finish() else { return nil }
                lineNumber += 1
                return line
            }
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw CLIError.failure("reading the input failed: \(String(cString: strerror(errno)))")
            }
            if count == 0 { atEnd = true } else { lines.append(chunk[..<count]) }
        }
    }

    /// Whether a line holds nothing but spaces and tabs.
    private static func isBlank(_ line: ArraySlice<UInt8>) -> Bool { line.allSatisfy { $0 == 0x20 || $0 == 0x09 } }

    /// Reads the rest of the input and counts its lines that are not blank, without making anything of
    /// them (a line over the cap counts as one).
    mutating func countRemainingLines() throws -> Int {
        var count = 0
        while let next = try next() {
            if case .line(let line) = next, Self.isBlank(line) { continue }
            count += 1
        }
        return count
    }

    /// The next line that is not blank, as JSON, or `nil` at the end of the input. A line that is not
    /// UTF-8 or not JSON comes back as an `invalidItem` error that says why (never with the line's text).
    mutating func nextJSON() throws -> Result<JSON, ReplicaError>? {
        while let next = try next() {
            guard case .line(let line) = next else {
                return .failure(
                    ReplicaError(
                        .invalidItem,
                        "the line is longer than \(Self.maximumLineLength >> 20) MiB, the most a line may hold; it was skipped"
                    ))
            }
            if Self.isBlank(line) { continue }
            guard let text = String(validating: line, as: UTF8.self) else {
                return .failure(ReplicaError(.invalidItem, "the line is not valid UTF-8 text"))
            }
            do { return .success(try JSON.parse(text)) } catch let error as JSONParseError {
                return .failure(ReplicaError(.invalidItem, "malformed JSON: \(error)"))
            }
        }
        return nil
    }
}
