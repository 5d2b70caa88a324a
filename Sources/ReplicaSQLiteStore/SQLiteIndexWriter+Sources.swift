import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaSQLite

// The statements on a source's entries: what each source saw of its files or records, so a pass can tell
// what changed. Sources reach them only through the source contract's batches.
extension SQLiteIndexWriter {
    package func setEntry(_ entry: SourceEntry, source: String) throws {
        try connection.cached(
            """
            INSERT INTO source_entries(source, key, stamp, skip_reason) VALUES (?, ?, ?, ?)
            ON CONFLICT(source, key) DO UPDATE SET stamp = excluded.stamp, skip_reason = excluded.skip_reason
            """
        ).run([.text(source), .text(entry.key), .text(entry.stamp), SQLValue(entry.skipReason)])
    }

    package func removeEntry(_ key: String, source: String) throws {
        try connection.cached("DELETE FROM source_entries WHERE source = ? AND key = ?").run([
            .text(source), .text(key),
        ])
    }

    /// Removes a source's entries whose keys start with `prefix`.
    package func removeEntries(withKeyPrefix prefix: String, source: String) throws {
        try connection.cached("DELETE FROM source_entries WHERE source = ? AND key >= ? AND key < ?")
            .run([.text(source), .text(prefix), .text(Self.upperBound(of: prefix))])
    }

    /// Deletes the items `owner` made whose identifiers start with `prefix` (a range over the identifier
    /// index).
    @discardableResult
    package func deleteItems(withIdentifierPrefix prefix: String, owner: ItemOwner) throws -> Int {
        let ids = try connection.cached("SELECT id FROM items WHERE identifier >= ? AND identifier < ? AND owner = ?")
            .rows([.text(prefix), .text(Self.upperBound(of: prefix)), .text(owner.rawValue)]) { $0.int64(0) }
        for id in ids { try deleteRow(id) }
        return ids.count
    }

    /// The smallest text greater than every text starting with `prefix`.
    static func upperBound(of prefix: String) -> String {
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            if let next = Unicode.Scalar(last.value + 1) ?? Unicode.Scalar(last.value + 0x801) {
                scalars.append(next)
                var result = String.UnicodeScalarView()
                result.append(contentsOf: scalars)
                return String(result)
            }
        }
        return "\u{10FFFF}"
    }

    /// Forgets everything of a source: its items, entries and checkpoint.
    package func forgetSource(named source: String, owner: ItemOwner, checkpoint consumer: String) throws {
        try delete(owner: owner)
        try connection.cached("DELETE FROM source_entries WHERE source = ?").run([.text(source)])
        try removeCheckpoint(consumer)
    }
}

extension SQLiteIndexReader {
    package func sourceEntries(_ source: String) throws -> [String: SourceEntry] {
        var entries: [String: SourceEntry] = [:]
        _ = try connection.cached("SELECT key, stamp, skip_reason FROM source_entries WHERE source = ?").rows([
            .text(source)
        ]) { row in
            let entry = SourceEntry(key: row.text(0), stamp: row.text(1), skipReason: row.optionalText(2))
            entries[entry.key] = entry
        }
        return entries
    }

    /// How many entries of a source are recorded as skipped, by reason.
    package func skippedEntries(_ source: String) throws -> [(String, Int)] {
        try connection.cached(
            "SELECT skip_reason, count(*) FROM source_entries WHERE source = ? AND skip_reason IS NOT NULL GROUP BY 1 ORDER BY 2 DESC"
        )
        .rows([.text(source)]) { ($0.text(0), $0.int(1)) }
    }
}
