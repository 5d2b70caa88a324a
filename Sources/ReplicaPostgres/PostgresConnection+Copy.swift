import CPostgres
import Foundation

extension PostgresConnection {
    /// Writes many rows into a table at once through `COPY … FROM STDIN`, PostgreSQL's fastest way in.
    ///
    /// Rows travel in COPY's text format: tabs, newlines, carriage returns and backslashes inside values
    /// are escaped, NULL is `\N`, and bytes are written as `bytea`'s hex text, so every value arrives as
    /// given ([COPY's text format](https://www.postgresql.org/docs/15/sql-copy.html#id-1.9.3.55.9.2)).
    /// It runs in the current transaction when there is one; a failure rolls back every row of the call.
    ///
    /// For example:
    /// ```swift
    /// let postgres = try PostgresConnection(url: "postgresql:///replica?host=/tmp/pg")
    /// try postgres.copy(into: "notes", columns: ["id", "body"], rows: [[1, "first\tline"], [2, nil]])
    /// ```
    ///
    /// - Parameters:
    ///   - table: The table's name, written as a quoted identifier; `schema.table` names a schema's table.
    ///   - columns: The columns each row fills, in order.
    ///   - rows: The rows, each with one value per column.
    /// - Returns: The number of rows written.
    /// - Throws: ``PostgresError`` in words (never quoting a row); ``PostgresError/Code/invalidValue``
    ///   for a row of the wrong length, before the server sees any of it.
    @available(*, noasync, message: "it blocks its thread on the server; call it off the cooperative pool")
    @discardableResult
    public func copy(into table: String, columns: [String], rows: some Sequence<[PostgresValue]>) throws -> Int {
        let sql =
            "COPY \(table.split(separator: ".", omittingEmptySubsequences: false).map { Self.quoted(String($0)) }.joined(separator: "."))"
            + " (\(columns.map(Self.quoted).joined(separator: ", "))) FROM STDIN"
        return try exclusively {
            guard let started = run({ PQsendQuery(handle, sql) }) else {
                throw PostgresError.statementFailure(nil, on: self, sql: sql)
            }
            guard PQresultStatus(started) == PGRES_COPY_IN else {
                _ = try checked(started, sql: sql)
                throw PostgresError(.other, "the server did not start the COPY", sql: sql)
            }
            PQclear(started)
            var buffer: [UInt8] = []
            buffer.reserveCapacity(1 << 16)
            do {
                for (number, row) in rows.enumerated() {
                    guard row.count == columns.count else {
                        throw PostgresError(
                            .invalidValue,
                            "row \(number + 1) has \(row.count) values for \(columns.count) columns; nothing was written",
                            sql: sql)
                    }
                    for (index, value) in row.enumerated() {
                        if index > 0 { buffer.append(UInt8(ascii: "\t")) }
                        Self.appendCopyField(value, to: &buffer)
                    }
                    buffer.append(UInt8(ascii: "\n"))
                    if buffer.count >= 1 << 16 { try send(&buffer, sql: sql) }
                }
                try send(&buffer, sql: sql)
            } catch {
                // Ends the COPY with a failure so that the server writes nothing and the connection goes on.
                _ = PQputCopyEnd(handle, "replica: the rows could not be sent")
                while let result = nextResult() { PQclear(result) }
                throw error
            }
            guard PQputCopyEnd(handle, nil) == 1 else { throw PostgresError.statementFailure(nil, on: self, sql: sql) }
            var failure: PostgresError?
            var written = 0
            while let result = nextResult() {
                if failure == nil {
                    do { written = try checked(result, sql: sql).affectedRows } catch let error as PostgresError {
                        failure = error
                    }
                } else {
                    PQclear(result)
                }
            }
            if let failure { throw failure }
            return written
        }
    }

    /// Sends the buffered rows and empties the buffer.
    private func send(_ buffer: inout [UInt8], sql: String) throws {
        guard !buffer.isEmpty else { return }
        let sent = buffer.withUnsafeBytes { bytes in
            PQputCopyData(handle, bytes.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(bytes.count))
        }
        guard sent == 1 else { throw PostgresError.statementFailure(nil, on: self, sql: sql) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Appends one field in COPY's text format, U+0000 escaped as ``PostgresValue/text(_:)`` says.
    static func appendCopyField(_ value: PostgresValue, to buffer: inout [UInt8]) {
        switch value {
        case .null:
            buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "N")])
        case .bytes(let bytes):
            // bytea's hex input (\x…), its backslash doubled for COPY.
            buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\"), UInt8(ascii: "x")])
            let digits = Array("0123456789abcdef".utf8)
            for byte in bytes {
                buffer.append(digits[Int(byte >> 4)])
                buffer.append(digits[Int(byte & 0x0F)])
            }
        default:
            let text = value.textFormat!
            if let escaped = PostgresValue.escapedUTF8(text) {
                appendCopyText(escaped, to: &buffer)
            } else {
                appendCopyText(text.utf8, to: &buffer)
            }
        }
    }

    /// Appends text's UTF-8 with COPY's own escapes for backslash, tab and line ends.
    private static func appendCopyText(_ utf8: some Sequence<UInt8>, to buffer: inout [UInt8]) {
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\\"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\t"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case UInt8(ascii: "\n"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            default: buffer.append(byte)
            }
        }
    }

    /// `name` as a quoted SQL identifier: in double quotes, its own double quotes doubled.
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
