import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaPostgres

// The ranking lists of an index on PostgreSQL (migration 0009): built here from the items' `tsvector`s,
// searched through ``PostgresRankingSource`` by the same search as on SQLite (``RankingLists``).
extension PostgresIndexWriter {
    /// How many items a page of the build reads.
    static let rankingBuildPage = 2_000
    /// In how many items a word must be to get a list (or in 1/64 of a smaller index's items): lower than
    /// on SQLite (``RankingLists/threshold``), since a word without a list has every one of its items
    /// scored when it is searched, and scoring an item here (reading its row and its `tsvector`) costs
    /// about twenty times what it costs FTS5.
    static let rankingThreshold = 32

    package func rebuildRankingLists() throws -> RankingLists.Summary {
        try buildRankingLists()
    }

    /// Builds the lists from the index as it is, replacing any, inside the writer's transaction.
    ///
    /// The account's writers wait until the build commits (the items are locked in `SHARE` mode first):
    /// an item written after the build read the items, and before it committed, would be in no list and
    /// not recorded as changed either (its statement saw no lists yet). Searches go on meanwhile.
    ///
    /// - Parameters:
    ///   - firstTier: how many items each list's first tier keeps (``RankingLists/firstTier``).
    ///   - threshold: in how many items a word must be to get a list (``rankingThreshold``, or 1/64 of
    ///     the items of a smaller index, when `nil`).
    @discardableResult
    func buildRankingLists(firstTier: Int = RankingLists.firstTier, threshold: Int? = nil) throws
        -> RankingLists.Summary
    {
        try connection.execute("LOCK TABLE replica.items\(table.suffix) IN SHARE MODE")
        try removeRankingLists()
        let statistics = try execute(
            "SELECT items, words FROM replica.index_statistics WHERE account = $1 AND index_name = $2")
        let totals = RankingLists.State(
            rows: statistics.rowCount > 0 ? statistics.int(0, 0) ?? 0 : 0,
            tokens: statistics.rowCount > 0 ? statistics.int(0, 1) ?? 0 : 0)
        let threshold = threshold ?? min(Self.rankingThreshold, max(8, Int(totals.rows / 64)))
        var summary = RankingLists.Summary(terms: 0, entries: 0)
        if totals.rows > 0 {
            summary = try writeRankingLists(totals: totals, firstTier: firstTier, threshold: threshold)
        }
        try execute(
            """
            INSERT INTO replica.ranking_state (account, index_name, rows, tokens, first_tier, threshold, built)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            """,
            [
                .int(totals.rows), .int(totals.tokens), .int(Int64(firstTier)), .int(Int64(threshold)),
                .double(now.timeIntervalSince1970),
            ])
        // The planner's numbers for the new lists, now: searches planned them as empty until autovacuum came.
        try connection.execute("SELECT replica.analyze_ranking_lists()")
        return summary
    }

    package func removeRankingLists() throws {
        try execute(
            """
            WITH state AS (
                DELETE FROM replica.ranking_state WHERE account = $1 AND index_name = $2
            ), changes AS (
                DELETE FROM replica.ranking_changes WHERE account = $1 AND index_name = $2
            )
            DELETE FROM replica.ranking_lists WHERE account = $1 AND index_name = $2
            """)
    }

    /// Reads every item's words, a page at a time in row id order, and writes the tiers of each word in
    /// at least `threshold` items.
    private func writeRankingLists(totals: RankingLists.State, firstTier: Int, threshold: Int) throws
        -> RankingLists.Summary
    {
        // Each word's items (ascending, as the pages come) and weighted frequencies, by a slot per word.
        var slots: [String: Int] = [:]
        var words: [String] = []
        var items: [[Int64]] = []
        var frequencies: [[Int64]] = []
        var lengths: [(id: Int64, length: Int64)] = []
        lengths.reserveCapacity(Int(totals.rows))
        var last: Int64 = .min
        while true {
            let page = try execute(
                """
                SELECT id, length, words::text FROM replica.items WHERE account = $1 AND index_name = $2 AND id > $3
                ORDER BY id LIMIT $4
                """, [.int(last), .int(Int64(Self.rankingBuildPage))])
            for row in 0..<page.rowCount {
                guard let id = page.int(row, 0) else { continue }
                last = id
                lengths.append((id, page.int(row, 1) ?? 0))
                PostgresIndexText.weightedFrequencies(inText: page.string(row, 2) ?? "") { word, frequency in
                    let slot: Int
                    if let known = slots[word] {
                        slot = known
                    } else {
                        slot = words.count
                        slots[word] = slot
                        words.append(word)
                        items.append([])
                        frequencies.append([])
                    }
                    items[slot].append(id)
                    frequencies[slot].append(frequency)
                }
            }
            if page.rowCount < Self.rankingBuildPage { break }
        }
        let averageLength = Double(totals.tokens) / Double(totals.rows)
        let length = RankingLists.lengths(byRowID: lengths)
        var summary = RankingLists.Summary(terms: 0, entries: 0)
        var rows = RankingRows()
        for slot in words.indices where items[slot].count >= threshold {
            for tier in RankingLists.tiers(
                items: items[slot], frequencies: frequencies[slot], length: length,
                averageLength: averageLength, firstTier: firstTier)
            {
                rows.append(
                    term: words[slot], tier: tier.tier, documents: Int64(items[slot].count), floor: tier.floor,
                    entries: tier.entries)
                if rows.bytes > 4 << 20 { try insert(&rows) }
            }
            summary.terms += 1
            summary.entries += items[slot].count
        }
        try insert(&rows)
        return summary
    }

    /// Tiers waiting to be written, one binary array per column.
    private struct RankingRows {
        var terms = PostgresBinaryArray(of: .text)
        var tiers = PostgresBinaryArray(of: .int4)
        var documents = PostgresBinaryArray(of: .int8)
        var floors = PostgresBinaryArray(of: .float8)
        var entries = PostgresBinaryArray(of: .bytea)
        var bytes = 0

        mutating func append(
            term: String, tier: Int64, documents count: Int64, floor: Double, entries tierEntries: [UInt8]
        ) {
            terms.append(term)
            tiers.append(tier)
            documents.append(count)
            floors.append(floor)
            entries.append(binary: tierEntries)
            bytes += tierEntries.count + term.utf8.count + 32
        }
    }

    private func insert(_ rows: inout RankingRows) throws {
        guard rows.terms.count > 0 else { return }
        try execute(
            """
            INSERT INTO replica.ranking_lists (account, index_name, term, tier, documents, floor, entries)
            SELECT $1, $2, term, tier, documents, floor, entries
            FROM unnest($3::text[], $4::integer[], $5::bigint[], $6::float8[], $7::bytea[]) AS given(term, tier, documents, floor, entries)
            """, [rows.terms.value, rows.tiers.value, rows.documents.value, rows.floors.value, rows.entries.value])
        rows = RankingRows()
    }
}
