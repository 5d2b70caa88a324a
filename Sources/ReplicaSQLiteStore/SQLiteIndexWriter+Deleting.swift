import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaSQLite
import ReplicaText

extension SQLiteIndexWriter {
    // MARK: Deleting

    /// Deletes the items with these identifiers that `owner` made; returns how many there were.
    ///
    /// - Parameter owner: the owner deleting; `nil` deletes whoever made them (for the store's own
    ///   maintenance: items their owner no longer vouches for, deletions a host asks of the store).
    @discardableResult
    package func delete(identifiers: [ItemIdentifier], owner: ItemOwner?) throws -> Int {
        var count = 0
        for identifier in identifiers {
            guard let id = try rowID(of: identifier, owner: owner) else { continue }
            try deleteRow(id)
            count += 1
        }
        return count
    }

    /// Deletes every item `owner` made (any owner's when `nil`) whose domain is one of these or lies under
    /// one of them.
    @discardableResult
    package func delete(domains: [DomainIdentifier], owner: ItemOwner?) throws -> Int {
        var count = 0
        let condition =
            "domain IS NOT NULL AND (domain = ?1 OR (domain >= ?1 || '.' AND domain < ?1 || '/')) AND (?2 IS NULL OR owner = ?2)"
        for domain in domains {
            try removeText(where: condition, [.text(domain.rawValue), SQLValue(owner?.rawValue)])
            try connection.cached("DELETE FROM items WHERE \(condition)").run([
                .text(domain.rawValue), SQLValue(owner?.rawValue),
            ])
            count += connection.changes
        }
        return count
    }

    /// Removes the full-text entries of the rows that meet `condition` (its parameters numbered from ?1),
    /// a row at a time, each with the language its text was stemmed for, since FTS5 makes each row's
    /// tokens again to remove them (and the vocabulary counts each row once).
    func removeText(where condition: String, _ arguments: [SQLValue]) throws {
        let rows = try connection.cached("SELECT id, language FROM items WHERE \(condition)").rows(arguments) {
            ($0.int64(0), $0.optionalText(1))
        }
        var removes: [String: Statement] = [:]
        for (id, language) in rows {
            guard let table = try textTable(ofRow: id) else { continue }
            let remove = try removes[table] ?? connection.cached("DELETE FROM \(table) WHERE rowid = ?")
            removes[table] = remove
            try TextAnalyzer.withDocumentLanguage(language, counting: .removing) { try remove.run([.integer(id)]) }
        }
    }

    /// Deletes every item a given owner made.
    @discardableResult
    package func delete(owner: ItemOwner) throws -> Int {
        try removeText(where: "owner = ?1", [.text(owner.rawValue)])
        try connection.cached("DELETE FROM items WHERE owner = ?").run([.text(owner.rawValue)])
        return connection.changes
    }

    /// Deletes every item `owner` made (every item when `owner` is `nil`).
    ///
    /// When no other owner has items in the index, the full-text index is recreated from its own stored
    /// definition, which is much faster than removing its entries row by row.
    @discardableResult
    package func deleteAll(owner: ItemOwner?) throws -> Int {
        if let owner,
            try connection.scalar("SELECT 1 FROM items WHERE owner != ? LIMIT 1", [.text(owner.rawValue)]) != nil
        {
            return try delete(owner: owner)
        }
        let count = try connection.scalarInt("SELECT count(*) FROM items") ?? 0
        guard case .text(let sql)? = try connection.scalar("SELECT sql FROM sqlite_schema WHERE name = 'items_text'")
        else {
            throw ReplicaError(.corruptIndex, "the index has lost its full-text table")
        }
        // Its settings (ranking weights, hash size) are kept; 'version' belongs to FTS5 itself.
        let settings = try connection.prepare("SELECT k, v FROM items_text_config WHERE k != 'version'").rows {
            ($0.text(0), $0.value(1))
        }
        try RankingLists.clear(connection)
        keepsRankingLists = false
        try connection.execute("DROP TABLE items_text")
        try connection.execute("DELETE FROM items")
        try connection.execute("DELETE FROM vocabulary")
        try connection.execute("DELETE FROM vocabulary_held_back")
        try connection.execute(sql)
        try copyTextSettings(to: "items_text", from: settings)
        // No words are left to make again: an empty index's are this analyzer's.
        if try remakeFrontier() != nil || !wordsAreCurrent() { try abandonRemake() }
        return count
    }

    package func deleteRow(_ id: Int64) throws {
        CrashPoints.reach("index.delete")
        try removeText(ofRow: id)
        try connection.cached("DELETE FROM items WHERE id = ?").run([.integer(id)])
    }

    /// Deletes up to `limit` items whose expiration date has passed; returns how many.
    @discardableResult
    package func purgeExpired(limit: Int) throws -> Int {
        let ids = try connection.cached("SELECT id FROM items WHERE \(SQLiteIndexReader.hasExpired) LIMIT ?")
            .rows([.real(now.timeIntervalSince1970), .integer(Int64(limit))]) { $0.int64(0) }
        for id in ids { try deleteRow(id) }
        return ids.count
    }
}

extension SQLiteIndexWriter {
    /// Builds the ranking lists from the index as it is (``RankingLists``), replacing any.
    package func rebuildRankingLists() throws -> RankingLists.Summary {
        keepsRankingLists = nil
        return try RankingLists.build(connection, now: now)
    }

    package func removeRankingLists() throws {
        keepsRankingLists = false
        try RankingLists.clear(connection)
    }
}
