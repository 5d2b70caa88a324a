import CSQLite
public import Foundation

/// A value SQLite can store or return.
public enum SQLValue: Sendable, Equatable {
    /// SQL `NULL`: no value.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// An 8-byte floating-point number.
    case real(Double)
    /// A UTF-8 string.
    case text(String)
    /// Bytes, stored exactly as given.
    case blob([UInt8])
}

extension SQLValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByNilLiteral
{
    /// Makes a text value from a string literal.
    public init(stringLiteral value: String) { self = .text(value) }
    /// Makes an integer value from an integer literal.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// Makes a real value from a floating-point literal.
    public init(floatLiteral value: Double) { self = .real(value) }
    /// Makes SQL NULL from `nil`.
    public init(nilLiteral: ()) { self = .null }
}

extension SQLValue {
    /// Makes a text value, or NULL when `value` is `nil`.
    public init(_ value: String?) { self = value.map(SQLValue.text) ?? .null }
    /// Makes an integer value, or NULL when `value` is `nil`.
    public init(_ value: Int?) { self = value.map { .integer(Int64($0)) } ?? .null }
    /// Makes an integer value, or NULL when `value` is `nil`.
    public init(_ value: Int64?) { self = value.map(SQLValue.integer) ?? .null }
    /// Makes a real value, or NULL when `value` is `nil`.
    public init(_ value: Double?) { self = value.map(SQLValue.real) ?? .null }
    /// Makes an integer value: 1 for `true`, 0 for `false`.
    public init(_ value: Bool) { self = .integer(value ? 1 : 0) }
    /// Makes a blob value from the data's bytes, or NULL when `value` is `nil`.
    public init(_ value: Data?) { self = value.map { .blob([UInt8]($0)) } ?? .null }
}

/// A prepared statement. It belongs to one ``Connection`` and is used on that connection's queue only.
///
/// The statement is finalized when the value is released.
public final class Statement {
    let handle: OpaquePointer
    /// The SQL text, kept for error messages (never the bound arguments).
    public let sql: String
    unowned let connection: Connection

    init(connection: Connection, sql: String) throws {
        var handle: OpaquePointer?
        let code = sql.withCString {
            sqlite3_prepare_v3(connection.handle, $0, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        }
        guard code == SQLITE_OK, let handle else {
            sqlite3_finalize(handle)
            throw connection.error(code: code, sql: sql)
        }
        self.handle = handle
        self.sql = sql
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// Clears bindings and rewinds, ready for the next execution.
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Rewinds, ready for the next execution, and keeps the bound values: a caller writing many similar
    /// rows can then bind only the values that changed. Every binding stays until it is replaced.
    public func rewind() {
        sqlite3_reset(handle)
    }

    // MARK: Binding (1-based parameter indexes, as in SQLite)

    /// Binds every argument the statement takes, in order.
    ///
    /// - Throws: ``SQLiteError`` with code `SQLITE_RANGE` when `values` holds fewer or more arguments than
    ///   the statement takes: a missing one would otherwise be NULL without a word.
    public func bind(_ values: [SQLValue]) throws {
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard values.count == expected else {
            throw SQLiteError(
                code: ResultCode(rawValue: SQLITE_RANGE),
                message:
                    "the statement takes \(expected) argument\(expected == 1 ? "" : "s"); \(values.count) \(values.count == 1 ? "was" : "were") given",
                sql: sql, path: connection.path)
        }
        for (offset, value) in values.enumerated() { try bind(value, at: Int32(offset + 1)) }
    }

    /// Binds one value to the parameter at `index`.
    ///
    /// SQLite copies text and blob bytes, so `value` need not outlive the call. An empty blob binds as a
    /// zero-length blob, not NULL.
    ///
    /// - Parameters:
    ///   - value: The value to bind.
    ///   - index: The 1-based parameter index.
    /// - Throws: ``SQLiteError`` when SQLite refuses the binding, such as for an index out of range.
    public func bind(_ value: SQLValue, at index: Int32) throws {
        let code: Int32
        switch value {
        case .null: code = sqlite3_bind_null(handle, index)
        case .integer(let v): code = sqlite3_bind_int64(handle, index, v)
        case .real(let v): code = sqlite3_bind_double(handle, index, v)
        case .text(let v):
            // withCString hands over a native string's own bytes without copying them; the explicit
            // length keeps text after an embedded NUL character. SQLite copies the bytes (TRANSIENT).
            code = v.withCString {
                sqlite3_bind_text(handle, index, $0, Int32(v.utf8.count), replica_sqlite_transient())
            }
        case .blob(let v) where v.isEmpty:
            // A zero-length blob bound through a null pointer would become NULL.
            code = sqlite3_bind_zeroblob(handle, index, 0)
        case .blob(let v):
            code = v.withUnsafeBytes {
                sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), replica_sqlite_transient())
            }
        }
        guard code == SQLITE_OK else { throw connection.error(code: code, sql: sql) }
    }

    /// Binds text, or NULL when `value` is `nil`, to the parameter at `index` (1-based).
    ///
    /// - Throws: ``SQLiteError`` when SQLite refuses the binding, such as for an index out of range.
    public func bind(_ value: String?, at index: Int32) throws {
        try bind(SQLValue(value), at: index)
    }

    // MARK: Stepping

    /// Advances to the next row. Returns `false` when the statement is done.
    @discardableResult
    public func step() throws -> Bool {
        let code = connection.exclusively { sqlite3_step(handle) }
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(code: code, sql: sql)
        }
    }

    /// Runs the statement to completion with the given arguments, then resets it.
    public func run(_ values: [SQLValue] = []) throws {
        defer { reset() }
        try bind(values)
        while try step() {}
    }

    /// Runs the statement and collects every row through `row`, then resets it.
    public func rows<T>(_ values: [SQLValue] = [], _ row: (Statement) throws -> T) throws -> [T] {
        defer { reset() }
        try bind(values)
        var result: [T] = []
        while try step() { result.append(try row(self)) }
        return result
    }

    /// Runs the statement, handing each row to `row` until it returns `false` or the rows run out, then
    /// resets it.
    public func each(_ values: [SQLValue] = [], _ row: (Statement) throws -> Bool) throws {
        defer { reset() }
        try bind(values)
        while try step() {
            guard try row(self) else { return }
        }
    }

    /// Runs the statement and returns the first row through `row`, if any, then resets it.
    public func firstRow<T>(_ values: [SQLValue] = [], _ row: (Statement) throws -> T) throws -> T? {
        defer { reset() }
        try bind(values)
        return try step() ? try row(self) : nil
    }

    // MARK: Columns (0-based, as in SQLite)

    /// The number of columns in the statement's result rows.
    public var columnCount: Int32 { sqlite3_column_count(handle) }

    /// Whether the current row's value at `column` (0-based) is NULL.
    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    /// The current row's value at `column` (0-based) as a 64-bit integer, converted by SQLite's rules (0 for NULL).
    public func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    /// The current row's value at `column` (0-based) as an `Int`, converted by SQLite's rules (0 for NULL).
    public func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }

    /// The current row's value at `column` (0-based) as a `Double`, converted by SQLite's rules (0 for NULL).
    public func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

    /// The current row's value at `column` (0-based) as a `Double`, or `nil` when it is NULL.
    public func optionalDouble(_ column: Int32) -> Double? { isNull(column) ? nil : double(column) }

    /// The current row's value at `column` (0-based) as a 64-bit integer, or `nil` when it is NULL.
    public func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }

    /// The current row's value at `column` (0-based) as text decoded from UTF-8; empty for NULL.
    public func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// The current row's value at `column` (0-based) as text, or `nil` when it is NULL.
    public func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }

    /// Lends a blob column's bytes without copying them; valid only inside `body`.
    public func withBlob<T>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard let base = sqlite3_column_blob(handle, column), count > 0 else {
            return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// A copy of the current row's value at `column` (0-based) as bytes; empty for NULL or a zero-length blob.
    public func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return [] }
        return [UInt8](UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// A copy of the current row's value at `column` (0-based) as bytes, or `nil` when it is NULL.
    public func optionalBlob(_ column: Int32) -> [UInt8]? { isNull(column) ? nil : blob(column) }

    /// The current row's value at `column` (0-based), in the storage class SQLite holds it in.
    public func value(_ column: Int32) -> SQLValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer(int64(column))
        case SQLITE_FLOAT: return .real(double(column))
        case SQLITE_TEXT: return .text(text(column))
        case SQLITE_BLOB: return .blob(blob(column))
        default: return .null
        }
    }
}
