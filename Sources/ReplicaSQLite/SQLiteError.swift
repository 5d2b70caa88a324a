import CSQLite

/// A SQLite result code, matchable in `catch` clauses.
///
/// For example:
/// ```swift
/// do { try connection.execute("…") }
/// catch SQLiteError.ResultCode.busy { … }
/// ```
/// Extended codes (such as `SQLITE_BUSY_SNAPSHOT`) match their primary code with `~=`.
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code (the low byte of an extended code).
    public var primary: ResultCode { ResultCode(rawValue: rawValue & 0xFF) }

    public static let ok = ResultCode(rawValue: SQLITE_OK)
    public static let error = ResultCode(rawValue: SQLITE_ERROR)
    public static let busy = ResultCode(rawValue: SQLITE_BUSY)
    public static let locked = ResultCode(rawValue: SQLITE_LOCKED)
    public static let readOnly = ResultCode(rawValue: SQLITE_READONLY)
    public static let ioError = ResultCode(rawValue: SQLITE_IOERR)
    public static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
    public static let notADatabase = ResultCode(rawValue: SQLITE_NOTADB)
    public static let full = ResultCode(rawValue: SQLITE_FULL)
    public static let cantOpen = ResultCode(rawValue: SQLITE_CANTOPEN)
    public static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
    public static let tooBig = ResultCode(rawValue: SQLITE_TOOBIG)
    public static let misuse = ResultCode(rawValue: SQLITE_MISUSE)
    public static let interrupt = ResultCode(rawValue: SQLITE_INTERRUPT)

    /// Whether the code says the disk (or the shared-memory file beside the database) has no room: a full
    /// disk, or the write, truncate or shared-memory failures a full disk causes.
    public var isOutOfSpace: Bool {
        // SQLITE_IOERR_WRITE, _TRUNCATE, _SHMOPEN, _SHMSIZE and _SHMMAP: function-like macros Swift does not import.
        primary == .full || [3, 6, 18, 19, 21].map { SQLITE_IOERR | Int32($0) << 8 }.contains(rawValue)
    }

    /// Whether the code says the database file is damaged or not a database at all.
    public var isCorruption: Bool { primary == .corrupt || primary == .notADatabase }

    public var description: String {
        String(cString: sqlite3_errstr(rawValue)) + " (\(rawValue))"
    }

    /// Lets `catch ResultCode.busy` match any extended busy code, and `case .busy` match an error.
    public static func ~= (pattern: ResultCode, code: ResultCode) -> Bool {
        pattern == code || pattern == code.primary
    }

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
    public typealias ResultCode = ReplicaSQLiteResultCode

    public var code: ResultCode
    /// SQLite's own message for the failure.
    public var message: String
    /// The SQL text of the failing statement, when there was one.
    public var sql: String?
    /// The database file involved.
    public var path: String?

    public init(code: ResultCode, message: String, sql: String? = nil, path: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
        self.path = path
    }

    public var description: String {
        var text = "SQLite error \(code.rawValue): \(message)"
        if let path { text += " in \(path)" }
        if let sql { text += " — while running: \(sql)" }
        return text
    }
}
