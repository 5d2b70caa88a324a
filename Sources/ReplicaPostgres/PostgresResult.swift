import CPostgres

/// The rows a statement returned (none for most writes), read in PostgreSQL's text format.
///
/// It owns libpq's `PGresult`, which it clears when released; the result no longer needs its
/// connection and may be read from any thread. Rows and columns count from 0. The typed accessors return
/// `nil` for NULL, and for a value that is not of their kind (`int` on the text `"abc"`).
///
/// For example:
/// ```swift
/// let postgres = try PostgresConnection(url: "postgresql:///replica?host=/tmp/pg")
/// let result = try postgres.execute("SELECT id, title FROM items WHERE account = $1", ["alice"])
/// for row in 0..<result.rowCount {
///     print(result.int(row, 0) ?? 0, result.string(row, 1) ?? "")
/// }
/// ```
public final class PostgresResult: @unchecked Sendable {
    // A PGresult is never changed once made, and libpq lets several threads read one.
    let handle: OpaquePointer

    /// The number of rows.
    public let rowCount: Int
    /// The number of columns.
    public let columnCount: Int

    init(handle: OpaquePointer) {
        self.handle = handle
        rowCount = Int(PQntuples(handle))
        columnCount = Int(PQnfields(handle))
    }

    deinit { PQclear(handle) }

    /// How many rows an `INSERT`, `UPDATE`, `DELETE`, `MERGE`, `COPY` or `SELECT` touched (libpq's
    /// `PQcmdTuples`); 0 for other statements.
    public var affectedRows: Int {
        guard let text = PQcmdTuples(handle) else { return 0 }
        return Int(String(cString: text)) ?? 0
    }

    /// The name of the column at `column`.
    public func columnName(_ column: Int) -> String {
        precondition(column >= 0 && column < columnCount, "column \(column) is out of range (0..<\(columnCount))")
        return String(cString: PQfname(handle, Int32(column)))
    }

    /// The index of the column named `name`, or `nil` when there is none.
    public func columnIndex(named name: String) -> Int? {
        (0..<columnCount).first { columnName($0) == name }
    }

    /// Whether the value at `row`, `column` is NULL.
    public func isNull(_ row: Int, _ column: Int) -> Bool {
        checkBounds(row, column)
        return PQgetisnull(handle, Int32(row), Int32(column)) == 1
    }

    /// The value at `row`, `column` as text decoded from UTF-8 (any type's text form), or `nil` for NULL;
    /// U+0000 and U+FFFF unescaped (``PostgresValue/nulEscape``).
    public func string(_ row: Int, _ column: Int) -> String? {
        withText(row, column) { PostgresValue.unescaping($0) }
    }

    /// The value at `row`, `column` as an integer (`smallint`, `integer`, `bigint`, `oid`), or `nil`.
    public func int(_ row: Int, _ column: Int) -> Int64? {
        withText(row, column) { Int64(String(decoding: $0, as: UTF8.self)) } ?? nil
    }

    /// The value at `row`, `column` as a double (`real`, `double precision`, or any number's text), or `nil`.
    public func double(_ row: Int, _ column: Int) -> Double? {
        withText(row, column) { PostgresValue.double(fromTextFormat: String(decoding: $0, as: UTF8.self)) } ?? nil
    }

    /// The value at `row`, `column` as a boolean (`t` or `f`), or `nil`.
    public func bool(_ row: Int, _ column: Int) -> Bool? {
        withText(row, column) { text -> Bool? in
            guard text.count == 1 else { return nil }
            return text[0] == UInt8(ascii: "t") ? true : text[0] == UInt8(ascii: "f") ? false : nil
        } ?? nil
    }

    /// The value at `row`, `column` as the bytes of a `bytea` (decoded from its text form, hex or escape
    /// format, by libpq's `PQunescapeBytea`), or `nil`.
    public func bytes(_ row: Int, _ column: Int) -> [UInt8]? {
        guard !isNull(row, column), let text = PQgetvalue(handle, Int32(row), Int32(column)) else { return nil }
        var count = 0
        let decoded = text.withMemoryRebound(to: UInt8.self, capacity: 1) { PQunescapeBytea($0, &count) }
        guard let decoded else { return nil }
        defer { PQfreemem(decoded) }
        return [UInt8](UnsafeBufferPointer(start: decoded, count: count))
    }

    /// The value at `row`, `column` as the ``PostgresValue`` its column's type maps to: integers, doubles
    /// (`real`, `double precision`), booleans and `bytea` as such, anything else (`numeric` included) as text.
    public func value(_ row: Int, _ column: Int) -> PostgresValue {
        if isNull(row, column) { return .null }
        switch PQftype(handle, Int32(column)) {
        case 20, 21, 23, 26: return int(row, column).map(PostgresValue.int) ?? .null
        case 700, 701: return double(row, column).map(PostgresValue.double) ?? .null
        case 16: return bool(row, column).map(PostgresValue.bool) ?? .null
        case 17: return bytes(row, column).map(PostgresValue.bytes) ?? .null
        default: return string(row, column).map(PostgresValue.text) ?? .null
        }
    }

    /// Every row, each as its columns' ``value(_:_:)``.
    public var rows: [[PostgresValue]] {
        (0..<rowCount).map { row in (0..<columnCount).map { value(row, $0) } }
    }

    /// Lends the text of the value at `row`, `column` (its UTF-8 bytes, without the NUL after them) to
    /// `body`; `nil` for NULL. The bytes belong to the result and are valid only inside `body`.
    private func withText<T>(_ row: Int, _ column: Int, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T? {
        guard !isNull(row, column), let text = PQgetvalue(handle, Int32(row), Int32(column)) else { return nil }
        let count = Int(PQgetlength(handle, Int32(row), Int32(column)))
        return text.withMemoryRebound(to: UInt8.self, capacity: max(count, 1)) {
            body(UnsafeBufferPointer(start: $0, count: count))
        }
    }

    private func checkBounds(_ row: Int, _ column: Int) {
        precondition(row >= 0 && row < rowCount, "row \(row) is out of range (0..<\(rowCount))")
        precondition(column >= 0 && column < columnCount, "column \(column) is out of range (0..<\(columnCount))")
    }
}

extension PostgresResult {
    /// The first column of the first row as an integer; `nil` when there is no row or it is NULL.
    package var firstInt: Int64? { rowCount > 0 ? int(0, 0) : nil }

    /// The first column of the first row as text; `nil` when there is no row or it is NULL.
    package var firstString: String? { rowCount > 0 ? string(0, 0) : nil }
}
