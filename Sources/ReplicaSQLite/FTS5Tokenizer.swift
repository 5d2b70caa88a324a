import CAnalyzer
import CSQLite
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One of FTS5's tokenizers, called directly: it splits text into the very words (lowercased, accents
/// folded, stemmed) that an FTS5 table with the same `tokenize` option stores, so that another store can
/// index and search the same words.
///
/// For example:
/// ```swift
/// let tokenizer = try FTS5Tokenizer("porter unicode61 remove_diacritics 2")
/// tokenizer.tokens(in: "Running café") // ["run", "cafe"]
/// ```
public final class FTS5Tokenizer: @unchecked Sendable {
    /// A word as FTS5 stores it.
    public struct Token: Hashable, Sendable {
        /// The word as stored: lowercased, accents folded, stemmed, as the tokenizer makes it.
        public var text: String
        /// Its place among the text's words, from 0.
        public var position: Int
        /// Where it is in the text: UTF-8 byte offsets of its first byte and past its last.
        public var start = 0
        public var end = 0

        /// A word at a place, where it is in the text left unsaid.
        public init(text: String, position: Int, start: Int = 0, end: Int = 0) {
            self.text = text
            self.position = position
            self.start = start
            self.end = end
        }
    }

    /// What the text is: a document being indexed, or the words of a query (`prefix`: the last word of a
    /// prefix query, which some tokenizers treat apart).
    public enum Purpose: Sendable {
        case document
        case query(prefix: Bool)
    }

    // The in-memory database the tokenizer was found through; it stays open as long as the tokenizer.
    private let database: OpaquePointer
    // The tokenizer, used by one call at a time (`lock`).
    private let tokenizer: UnsafeMutablePointer<replica_fts5_tokenizer>
    private let lock = Mutex(())

    /// Creates the tokenizer an FTS5 table's `tokenize` option names (`"porter unicode61 remove_diacritics 2"`).
    public init(_ specification: String) throws {
        var handle: OpaquePointer?
        let opened = sqlite3_open_v2(":memory:", &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        guard opened == SQLITE_OK, let handle else {
            if let handle { sqlite3_close_v2(handle) }
            throw SQLiteError(
                code: ResultCode(rawValue: opened), message: "cannot open an in-memory database for FTS5's tokenizer")
        }
        // replica's own analyzer, as every connection has it (``Connection``).
        var api: UnsafeMutablePointer<fts5_api>?
        var registered = replica_fts5_api(handle, &api)
        if registered == SQLITE_OK, let api { registered = replica_fts5_register_analyzer(api) }
        guard registered == SQLITE_OK else {
            sqlite3_close_v2(handle)
            throw SQLiteError(
                code: ResultCode(rawValue: registered),
                message: "cannot register replica's analyzer as FTS5's tokenizer")
        }
        let words = specification.split(separator: " ").map(String.init)
        guard let name = words.first else {
            sqlite3_close_v2(handle)
            throw SQLiteError(code: .misuse, message: "a tokenizer specification names a tokenizer")
        }
        let state = UnsafeMutablePointer<replica_fts5_tokenizer>.allocate(capacity: 1)
        state.initialize(to: replica_fts5_tokenizer())
        let arguments = words.dropFirst().map { strdup($0) }
        defer { arguments.forEach { free($0) } }
        var pointers = arguments.map { UnsafePointer<CChar>($0) }
        let created = pointers.withUnsafeMutableBufferPointer { buffer in
            replica_fts5_tokenizer_create(handle, name, buffer.baseAddress, Int32(buffer.count), state)
        }
        guard created == SQLITE_OK else {
            state.deallocate()
            sqlite3_close_v2(handle)
            throw SQLiteError(code: ResultCode(rawValue: created), message: "FTS5 has no tokenizer '\(specification)'")
        }
        database = handle
        tokenizer = state
    }

    deinit {
        replica_fts5_tokenizer_delete(tokenizer)
        tokenizer.deallocate()
        sqlite3_close_v2(database)
    }

    /// The words of `text`, in order, each with its position.
    public func tokens(in text: String, for purpose: Purpose = .document) -> [Token] {
        let flags: Int32 =
            switch purpose {
            case .document: FTS5_TOKENIZE_DOCUMENT
            case .query(let prefix): FTS5_TOKENIZE_QUERY | (prefix ? FTS5_TOKENIZE_PREFIX : 0)
            }
        let collector = Collector()
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            let context = Unmanaged.passUnretained(collector).toOpaque()
            lock.withLock { _ in
                _ = base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { characters in
                    replica_fts5_tokenize(tokenizer, context, flags, characters, Int32(bytes.count)) {
                        context, tokenFlags, token, length, start, end in
                        guard let context, let token else { return SQLITE_OK }
                        let collector = Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue()
                        let bytes = UnsafeRawBufferPointer(start: token, count: Int(length))
                        // A colocated token (a synonym) shares the position of the one before it.
                        if tokenFlags & FTS5_TOKEN_COLOCATED == 0 || collector.tokens.isEmpty {
                            collector.position += 1
                        }
                        collector.tokens.append(
                            Token(
                                text: String(decoding: bytes, as: UTF8.self), position: collector.position,
                                start: Int(start), end: Int(end)))
                        return SQLITE_OK
                    }
                }
            }
        }
        return collector.tokens
    }

    private final class Collector {
        var tokens: [Token] = []
        var position = -1
    }
}
