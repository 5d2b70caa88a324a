import CSQLite

#if canImport(Glibc)
import Glibc
#endif

/// A SQLite result code, matchable in `catch` clauses.
///
/// For example:
/// ```swift
/// do { try connection.execute("BEGIN IMMEDIATE") }
/// catch SQLiteError.ResultCode.busy { print("another connection is writing") }
/// ```
/// Extended codes (such as `SQLITE_BUSY_SNAPSHOT`) match their primary code with `~=`.
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The numeric code, primary or extended, as SQLite returns it.
    public let rawValue: Int32

    /// Wraps a numeric SQLite result code.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code (the low byte of an extended code).
    public var primary: ResultCode { ResultCode(rawValue: rawValue & 0xFF) }

    /// `SQLITE_OK`: success.
    public static let ok = ResultCode(rawValue: SQLITE_OK)
    /// `SQLITE_ERROR`: a generic error, such as an SQL syntax error.
    public static let error = ResultCode(rawValue: SQLITE_ERROR)
    /// `SQLITE_BUSY`: another connection holds a lock the call needs.
    public static let busy = ResultCode(rawValue: SQLITE_BUSY)
    /// `SQLITE_LOCKED`: a conflict inside the same connection or shared cache.
    public static let locked = ResultCode(rawValue: SQLITE_LOCKED)
    /// `SQLITE_READONLY`: a write to a database that cannot be written.
    public static let readOnly = ResultCode(rawValue: SQLITE_READONLY)
    /// `SQLITE_IOERR`: the operating system reported an I/O error.
    public static let ioError = ResultCode(rawValue: SQLITE_IOERR)
    /// `SQLITE_CORRUPT`: the database file is damaged.
    public static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
    /// `SQLITE_NOTADB`: the file is not a SQLite database.
    public static let notADatabase = ResultCode(rawValue: SQLITE_NOTADB)
    /// `SQLITE_FULL`: the disk is full.
    public static let full = ResultCode(rawValue: SQLITE_FULL)
    /// `SQLITE_CANTOPEN`: the file could not be opened.
    public static let cantOpen = ResultCode(rawValue: SQLITE_CANTOPEN)
    /// `SQLITE_CONSTRAINT`: a constraint (unique, foreign key, check, …) was violated.
    public static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
    /// `SQLITE_TOOBIG`: a string or blob exceeds SQLite's size limit.
    public static let tooBig = ResultCode(rawValue: SQLITE_TOOBIG)
    /// `SQLITE_MISUSE`: the SQLite interface was used incorrectly.
    public static let misuse = ResultCode(rawValue: SQLITE_MISUSE)
    /// `SQLITE_INTERRUPT`: the operation was interrupted.
    public static let interrupt = ResultCode(rawValue: SQLITE_INTERRUPT)

    /// Whether the code says the disk (or the shared-memory file beside the database) has no room: a full
    /// disk, or the write, truncate or shared-memory failures a full disk causes.
    public var isOutOfSpace: Bool {
        // SQLITE_IOERR_WRITE, _TRUNCATE, _SHMOPEN, _SHMSIZE and _SHMMAP: function-like macros Swift does not import.
        primary == .full || [3, 6, 18, 19, 21].map { SQLITE_IOERR | Int32($0) << 8 }.contains(rawValue)
    }

    /// Whether the code says the database file is damaged or not a database at all.
    public var isCorruption: Bool { primary == .corrupt || primary == .notADatabase }

    /// SQLite's English text for the code, followed by the number in parentheses.
    public var description: String {
        String(cString: sqlite3_errstr(rawValue)) + " (\(rawValue))"
    }

    /// Lets `catch ResultCode.busy` match any extended busy code, and `case .busy` match an error.
    public static func ~= (pattern: ResultCode, code: ResultCode) -> Bool {
        pattern == code || pattern == code.primary
    }

    /// Lets `catch ResultCode.busy` match a thrown ``SQLiteError`` whose code is `pattern` or extends it; any other
    /// error does not match.
    public static func ~= (pattern: ResultCode, error: any Error) -> Bool {
        guard let error = error as? SQLiteError else { return false }
        return pattern ~= error.code
    }
}

/// `ResultCode` under a second name, so that `SQLiteError.ResultCode` can refer to it from inside
/// `SQLiteError` without naming the module (the fuzz targets compile these files into another module).
public typealias ReplicaSQLiteResultCode = ResultCode

/// An error SQLite reported, with the statement that failed but never its arguments.
///
/// Arguments carry user data (indexed text, identifiers), so they are left out on purpose.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The module's ``ResultCode``, reachable as `SQLiteError.ResultCode`.
    public typealias ResultCode = ReplicaSQLiteResultCode

    /// The result code, extended when SQLite reported one.
    public var code: ResultCode
    /// SQLite's own message for the failure.
    public var message: String
    /// The SQL text of the failing statement, when there was one.
    public var sql: String?
    /// The database file involved.
    public var path: String?

    /// Makes an error from its parts.
    ///
    /// - Parameters:
    ///   - code: The SQLite result code.
    ///   - message: SQLite's message for the failure.
    ///   - sql: The SQL text of the failing statement, if any; never its arguments.
    ///   - path: The database file involved, if known.
    public init(code: ResultCode, message: String, sql: String? = nil, path: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
        self.path = path
    }

    /// What went wrong and what to do, for a person: the disk's and the file's faults in plain words,
    /// with ``description`` (code, message, file, statement) after them for whoever reports it.
    ///
    /// A failed statement rolls back its transaction, so each sentence can say that what was committed
    /// before is intact.
    public var explanation: String {
        let file = path ?? "a database file"
        let sentence: String
        switch code.primary {
        case .full:
            sentence =
                "the disk holding \(file) is full: the failed step was rolled back and what was written before is "
                + "intact; free some space (signing an account out frees its files) and run the command again"
        case .ioError where code.isOutOfSpace:
            sentence =
                "writing \(file) failed: the disk is full or failing. The failed step was rolled back and what was "
                + "written before is intact; free some space or check the disk (dmesg), then run the command again"
        case .ioError:
            sentence =
                "the disk reported an I/O error on \(file): the failed step was rolled back and what was written "
                + "before is intact; check the disk (dmesg) and run the command again"
        case .corrupt, .notADatabase:
            sentence =
                "SQLite found \(file) damaged or could not read it (a disk read error looks the same): run the command "
                + "again; if it says this again, check the disk (dmesg) and restore the file from a backup"
        case .readOnly where path.map(Self.isOnReadOnlyFileSystem) == true:
            sentence =
                "\(file) is on a file system mounted read-only: mount it read-write and run the command again; the "
                + "failed step was rolled back"
        case .readOnly:
            sentence =
                "\(file) cannot be written (a read-only file, folder or file system): make it writable and run the "
                + "command again"
        case .busy:
            sentence = "another process held \(file) for longer than replica waits: run the command again"
        default:
            return description
        }
        return sentence + " (\(description))"
    }

    private static func isOnReadOnlyFileSystem(_ path: String) -> Bool {
        var info = statvfs()
        return statvfs(path, &info) == 0 && (info.f_flag & UInt(ST_RDONLY)) != 0
    }

    /// The code, SQLite's message, the file and the failing SQL text, as far as each is known; never the arguments.
    public var description: String {
        var text = "SQLite error \(code.rawValue): \(message)"
        if let path { text += " in \(path)" }
        if let sql { text += " — while running: \(sql)" }
        return text
    }
}
