import CPostgres

/// A failure of PostgreSQL or of the connection to it, in words a person can act on.
///
/// Its ``message`` says what happened and how to fix it. It never holds row data: not the statement's
/// parameters, not the server's `DETAIL` or `CONTEXT` (which quote rows), and the server's own primary
/// message only for classes of error whose messages cannot quote a value (``serverMessage``). A
/// constraint violation names the constraint and its table, never the values. A database URL's password
/// never appears in it.
///
/// For example:
/// ```swift
/// do {
///     _ = try PostgresConnection(url: "postgresql://replica_app@db.example/replica")
/// } catch PostgresError.Code.authenticationFailed {
///     print("check the password")
/// } catch let error as PostgresError {
///     print(error.message)
/// }
/// ```
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure it was: a struct, so that adding a kind breaks no caller.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The kind's name.
        public let rawValue: String
        /// Makes a code from its name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Nothing accepted connections where the URL points (no server, or no socket in the folder).
        public static let connectionRefused = Code(rawValue: "connectionRefused")
        /// The server could not be reached or did not answer in time (a wrong host name, a network
        /// failure, a server starting up or shutting down).
        public static let serverUnreachable = Code(rawValue: "serverUnreachable")
        /// The connection broke while in use (the server ended the session or went away).
        public static let connectionLost = Code(rawValue: "connectionLost")
        /// The server refused the role's sign-in (SQLSTATE `28P01`, `28000`): a wrong password, an unknown
        /// role, or no `pg_hba.conf` line for it.
        public static let authenticationFailed = Code(rawValue: "authenticationFailed")
        /// The database named in the URL does not exist (`3D000`).
        public static let databaseMissing = Code(rawValue: "databaseMissing")
        /// The server has too many connections already (`53300`).
        public static let tooManyConnections = Code(rawValue: "tooManyConnections")
        /// The server's disk is full (`53100`).
        public static let diskFull = Code(rawValue: "diskFull")
        /// The server accepts no writes (`25006`): a hot standby, or `default_transaction_read_only`.
        public static let readOnly = Code(rawValue: "readOnly")
        /// A serializable transaction conflicted with another (`40001`); retrying it can succeed.
        public static let serializationFailure = Code(rawValue: "serializationFailure")
        /// Two transactions waited for each other (`40P01`); retrying can succeed.
        public static let deadlock = Code(rawValue: "deadlock")
        /// The statement ran past `statement_timeout`, or was cancelled (`57014`).
        public static let statementTimeout = Code(rawValue: "statementTimeout")
        /// A row would duplicate another's unique key (`23505`).
        public static let uniqueViolation = Code(rawValue: "uniqueViolation")
        /// A table the statement names does not exist (`42P01`).
        public static let undefinedTable = Code(rawValue: "undefinedTable")
        /// The role may not do what the statement asks (`42501`).
        public static let insufficientPrivilege = Code(rawValue: "insufficientPrivilege")
        /// The database URL could not be read.
        public static let invalidURL = Code(rawValue: "invalidURL")
        /// A value cannot be sent (a row of the wrong length for `COPY`, too many parameters).
        public static let invalidValue = Code(rawValue: "invalidValue")
        /// Any other failure; ``PostgresError/sqlState`` tells it apart.
        public static let other = Code(rawValue: "other")

        /// The kind's name.
        public var description: String { rawValue }

        /// The kind an SQLSTATE code stands for (`other` when none of the above).
        public init(sqlState: String) {
            switch sqlState {
            case "28P01", "28000": self = .authenticationFailed
            case "3D000": self = .databaseMissing
            case "53300": self = .tooManyConnections
            case "53100": self = .diskFull
            case "25006": self = .readOnly
            case "40001": self = .serializationFailure
            case "40P01": self = .deadlock
            case "57014": self = .statementTimeout
            case "23505": self = .uniqueViolation
            case "42P01": self = .undefinedTable
            case "42501": self = .insufficientPrivilege
            case "57P01", "57P02": self = .connectionLost
            case "57P03": self = .serverUnreachable
            default: self = sqlState.hasPrefix("08") ? .connectionLost : .other
            }
        }

        /// Lets `catch PostgresError.Code.deadlock` match a thrown ``PostgresError`` of that kind.
        public static func ~= (pattern: Code, error: any Error) -> Bool {
            (error as? PostgresError)?.code == pattern
        }
    }

    /// What kind of failure it was.
    public var code: Code
    /// The five-character SQLSTATE the server reported, when it reported one.
    public var sqlState: String?
    /// What happened and how to fix it, in words; never row data.
    public var message: String
    /// The server's (or libpq's) own primary message, kept only where it cannot quote row data.
    public var serverMessage: String?
    /// The constraint a violation names (never the values that broke it).
    public var constraint: String?
    /// The statement's SQL text (never its parameters), when a statement failed.
    public var sql: String?

    /// Makes an error from its parts.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: What happened and how to fix it; never row data.
    ///   - sqlState: The server's SQLSTATE, if any.
    ///   - serverMessage: The server's primary message, only where it cannot quote row data.
    ///   - constraint: The violated constraint's name, if any.
    ///   - sql: The failing statement's SQL text, never its parameters.
    public init(
        _ code: Code, _ message: String, sqlState: String? = nil, serverMessage: String? = nil,
        constraint: String? = nil, sql: String? = nil
    ) {
        self.code = code
        self.message = message
        self.sqlState = sqlState
        self.serverMessage = serverMessage
        self.constraint = constraint
        self.sql = sql
    }

    /// Whether a table the statement names does not exist (`42P01`), such as an account's partition
    /// dropped by its sign-out.
    public var isUndefinedTable: Bool { sqlState == "42P01" }

    /// The message, then the SQLSTATE, the server's message where kept, and the statement's SQL text.
    public var description: String {
        var text = message
        var facts: [String] = []
        if let sqlState { facts.append("SQLSTATE \(sqlState)") }
        if let serverMessage { facts.append("PostgreSQL: \(serverMessage)") }
        if !facts.isEmpty { text += " (" + facts.joined(separator: "; ") + ")" }
        if let sql { text += " — while running: \(sql)" }
        return text
    }

    /// Whether retrying the whole transaction can succeed: a serialization failure or a deadlock.
    public var isTransient: Bool { code == .serializationFailure || code == .deadlock }
}
