import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaPostgres

// Many items at once: rows and their words prepared on a second core a chunk ahead, and the new ones
// written by one statement per chunk instead of one per item.
extension PostgresIndexWriter {
    /// From how many items a call takes the bulk path.
    static let bulkThreshold = 16
    /// The most items prepared together (``LoadChunks/size(for:atMost:)``), and written by one statement.
    static let chunkSize = 500
    /// The most text (in UTF-8 bytes, roughly) one statement carries.
    static let statementBytes = 16 << 20

    /// A row ready to write: its values and its words.
    struct ReadyRow: Sendable {
        var row: PreparedRow
        var words: PostgresIndexText.Words

        /// About how many bytes the row sends.
        var size: Int {
            row.attributes.utf8.count + row.text.title.utf8.count + row.text.keywords.utf8.count
                + row.text.people.utf8.count
                + row.text.description.utf8.count + row.text.body.utf8.count + words.binary.count + 256
        }
    }

    /// Indexes many items, each with its own origin, with the same outcome as indexing them one by one in
    /// order: the new ones are inserted by one statement per chunk, and the others (updates, items already
    /// in the index, an identifier given twice) go through ``index(_:origin:)``'s path.
    package func index(contentsOf entries: [(SearchableItem, ItemOrigin)]) throws {
        guard entries.count >= Self.bulkThreshold else {
            for (item, origin) in entries { try index(item, origin: origin) }
            return
        }
        let now = self.now
        let lifetime = self.defaultLifetime
        try Prefetch.pipelined(
            entries, chunkSize: LoadChunks.size(for: entries.count, atMost: Self.chunkSize),
            prepare: { chunk in
                chunk.map { item, origin -> ReadyRow? in
                    guard !item.isUpdate else { return nil }
                    let row = PreparedRow(item, origin: origin, now: now, defaultLifetime: lifetime)
                    return ReadyRow(row: row, words: Self.words(of: row.text))
                }
            }
        ) { chunk, current in
            var run: [ReadyRow] = []
            var runSize = 0
            for ((item, origin), ready) in zip(chunk, current) {
                guard let ready else {
                    try insertMany(run)
                    run = []
                    runSize = 0
                    try self.index(item, origin: origin)
                    continue
                }
                if runSize + ready.size > Self.statementBytes {
                    try insertMany(run)
                    run = []
                    runSize = 0
                }
                run.append(ready)
                runSize += ready.size
            }
            try insertMany(run)
        }
    }

    /// Inserts rows as ``IndexRowWriter/upsert(_:)`` would one after another: the first of each
    /// identifier that is new by one statement, then the rest in order one by one.
    func insertMany(_ rows: [ReadyRow]) throws {
        guard !rows.isEmpty else { return }
        var rows = rows
        // Words made for a language CLD2 could not tell are made again for the one it is settled to.
        for index in rows.indices {
            if try settleLanguage(of: &rows[index].row.text) {
                rows[index].words = Self.words(of: rows[index].row.text)
            }
        }
        // In order, as one by one: a tree an item brings replaces the one recorded before it.
        for ready in rows {
            if let type = ready.row.contentType {
                try recordContentType(ContentType(rawValue: type), tree: ready.row.explicitTree)
            }
        }
        guard rows.count > 1 else { return try writeOneByOne(rows[0], taken: false) }
        var seen = Set<String>()
        let firsts = rows.indices.filter { seen.insert(rows[$0].row.identifier).inserted }
        // One array per column, in the binary format: the server copies the values instead of parsing them.
        func texts(_ value: (ReadyRow) -> String?) -> PostgresValue {
            var array = PostgresBinaryArray(of: .text)
            for index in firsts { array.append(value(rows[index])) }
            return array.value
        }
        func numbers(_ value: (ReadyRow) -> Double?) -> PostgresValue {
            var array = PostgresBinaryArray(of: .float8)
            for index in firsts { array.append(value(rows[index])) }
            return array.value
        }
        var words = PostgresBinaryArray(
            of: .tsvector, reservingBytes: firsts.reduce(0) { $0 + rows[$1].words.binary.count + 4 })
        var lengths = PostgresBinaryArray(of: .int4)
        for index in firsts {
            words.append(binary: rows[index].words.binary)
            lengths.append(Int64(rows[index].words.length))
        }
        let result = try execute(
            Self.bulkInsertSQL,
            [
                texts { $0.row.identifier }, texts { $0.row.domain }, texts { $0.row.contentType },
                numbers { $0.row.created }, numbers { $0.row.modified }, numbers { $0.row.expires },
                texts { $0.row.authors }, texts { $0.row.recipients }, texts { $0.row.attributes },
                texts { $0.row.origin.owner.rawValue }, texts { $0.row.origin.version }, numbers { $0.row.indexed },
                texts { $0.row.text.title }, texts { $0.row.text.keywords }, texts { $0.row.text.people },
                texts { $0.row.text.description }, texts { $0.row.text.body }, words.value, lengths.value,
            ])
        var inserted: [String: Int64] = [:]
        for row in 0..<result.rowCount {
            if let identifier = result.string(row, 0), let id = result.int(row, 1) { inserted[identifier] = id }
        }
        var done = Set<Int>()
        for index in firsts {
            CrashPoints.reach("index.item")
            guard let id = inserted[rows[index].row.identifier] else { continue }
            countWritten(rows[index].words, text: rows[index].row.text)
            try wasInserted(id, rows[index].row)
            done.insert(index)
        }
        for index in rows.indices where !done.contains(index) {
            try writeOneByOne(rows[index], taken: true)
        }
    }

    /// Writes a row of a bulk load that its statement did not insert (or that came alone) as
    /// ``IndexRowWriter/write(_:)`` does, with the words made for it ahead.
    ///
    /// - Parameter taken: its identifier was just found taken: the stored row is read first, and the
    ///   insert tried only when it has gone since.
    private func writeOneByOne(_ ready: ReadyRow, taken: Bool) throws {
        CrashPoints.reach("index.item")
        wordsMadeAhead = ready
        defer { wordsMadeAhead = nil }
        if taken, let stored = try storedRow(ItemIdentifier(ready.row.identifier)) {
            _ = try write(ready.row, over: stored)
        } else {
            _ = try write(ready.row)
        }
    }

    /// Inserts the rows given as one array per column (`$3`…`$21`, in the binary format) whose identifiers are not taken,
    /// counting them; returns the identifier and id of each row inserted.
    static let bulkInsertSQL = """
        WITH given AS (
            SELECT * FROM unnest($3::text[], $4::text[], $5::text[], $6::float8[], $7::float8[], $8::float8[], $9::text[],
                $10::text[], $11::text[], $12::text[], $13::text[], $14::float8[], $15::text[], $16::text[], $17::text[],
                $18::text[], $19::text[], $20::tsvector[], $21::integer[]) WITH ORDINALITY
                AS given(identifier, domain, content_type, created, modified, expires, authors, recipients, attributes, owner,
                         source_version, indexed, title, keywords, people, description, body, words, length, ordinal)
        ), inserted AS (
            INSERT INTO replica.items(account, index_name, \(itemColumns))
            SELECT $1::text, $2::text, identifier, domain, content_type, created, modified, expires, authors, recipients, attributes, owner,
                source_version, indexed, title, keywords, people, description, body, words, length
            FROM given ORDER BY ordinal
            ON CONFLICT (account, index_name, identifier) DO NOTHING
            RETURNING identifier, id, length
        ), counted AS (
            \(countStatistics(of: "inserted", sign: 1))
        ), changed AS (
            \(recordRankingChanges(of: "inserted"))
        )
        SELECT identifier, id FROM inserted
        """
}
