import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaPostgres

extension PostgresIndexWriter {
    // MARK: Deleting

    /// Deletes the items that pass `condition` (SQL on `replica.items`, with the account and index
    /// conditions added here; its parameters are `$3`…), with what is kept about them elsewhere (their
    /// vectors, whether they are embedded, their enrichment), in one statement that also takes them off the
    /// index's statistics and moves `vectors_version` when vectors went: what the SQLite index's triggers
    /// do on a delete.
    ///
    /// - Returns: how many items were deleted.
    @discardableResult
    func deleteItems(where condition: String, _ parameters: [PostgresValue]) throws -> Int {
        CrashPoints.reach("index.delete")
        let result = try execute(
            """
            WITH deleted AS (
                DELETE FROM replica.items WHERE account = $1 AND index_name = $2 AND (\(condition))
                RETURNING id, length, words
            ), counted AS (
                \(Self.countStatistics(of: "deleted", sign: -1))
            ), changed AS (
                \(Self.recordRankingChanges(of: "deleted"))
            ), vectors AS (
                DELETE FROM replica.vectors WHERE account = $1 AND index_name = $2 AND item IN (SELECT id FROM deleted)
            ), embedded AS (
                DELETE FROM replica.embedded WHERE account = $1 AND index_name = $2 AND item IN (SELECT id FROM deleted)
                RETURNING item
            ), enrichment AS (
                DELETE FROM replica.enrichment WHERE account = $1 AND index_name = $2 AND item IN (SELECT id FROM deleted)
            ), version AS (
                \(Self.bumpVectorsVersion(by: "embedded"))
            )
            SELECT count(*), \(Self.vocabularyOf("deleted")) FROM deleted
            """, parameters)
        countVocabulary((result.string(0, 1) ?? "").split(separator: "\u{1F}"), by: -1)
        return Int(result.int(0, 0) ?? 0)
    }

    /// Deletes the items with these identifiers that `owner` made; returns how many there were.
    ///
    /// - Parameter owner: the owner deleting; `nil` deletes whoever made them.
    @discardableResult
    package func delete(identifiers: [ItemIdentifier], owner: ItemOwner?) throws -> Int {
        guard !identifiers.isEmpty else { return 0 }
        return try deleteItems(
            where: "identifier = ANY($3::text[]) AND ($4::text IS NULL OR owner = $4)",
            [Self.arrayLiteral(identifiers.map(\.rawValue)), PostgresValue(owner?.rawValue)])
    }

    /// Deletes every item `owner` made (any owner's when `nil`) whose domain is one of these or lies under
    /// one of them: `a` covers `a` and `a.b`, not `ab` nor `a-b` (the SQLite index's range from `a.` up to
    /// `a/`, which holds exactly the texts that start with `a.`).
    @discardableResult
    package func delete(domains: [DomainIdentifier], owner: ItemOwner?) throws -> Int {
        var count = 0
        for domain in domains {
            count += try deleteItems(
                where: """
                    domain IS NOT NULL AND (domain = $3 OR starts_with(domain, $3 || '.')) AND ($4::text IS NULL OR owner = $4)
                    """, [.text(domain.rawValue), PostgresValue(owner?.rawValue)])
        }
        return count
    }

    /// Deletes every item a given owner made.
    @discardableResult
    package func delete(owner: ItemOwner) throws -> Int {
        try deleteItems(where: "owner = $3", [.text(owner.rawValue)])
    }

    /// Deletes every item `owner` made (every item, and the ranking lists, when `owner` is `nil`).
    @discardableResult
    package func deleteAll(owner: ItemOwner?) throws -> Int {
        if let owner { return try delete(owner: owner) }
        let count = try deleteItems(where: "true", [])
        // Nothing left for the lists to know: they go, and so does every write's record for them.
        try removeRankingLists()
        // No words are left to make again: an empty index's are this analyzer's.
        if try remakeFrontier() != nil || !wordsAreCurrent() { try abandonRemake() }
        return count
    }

    /// Deletes one row, whoever made it.
    package func deleteRow(_ id: Int64) throws {
        try deleteItems(where: "id = $3", [.int(id)])
    }

    /// Deletes the items `owner` made whose identifiers start with `prefix`.
    @discardableResult
    package func deleteItems(withIdentifierPrefix prefix: String, owner: ItemOwner) throws -> Int {
        try deleteItems(where: "starts_with(identifier, $3) AND owner = $4", [.text(prefix), .text(owner.rawValue)])
    }

    /// Deletes up to `limit` items whose expiration date has passed; returns how many.
    @discardableResult
    package func purgeExpired(limit: Int) throws -> Int {
        try deleteItems(
            where: """
                id IN (SELECT id FROM replica.items WHERE account = $1 AND index_name = $2 AND expires <= $3 AND expires < 32503680000 LIMIT $4)
                """, [.double(now.timeIntervalSince1970), .int(Int64(limit))])
    }

    /// A one-dimensional array as PostgreSQL's text input reads it (`{"a","b",NULL}`): each element in
    /// double quotes with its quotes and backslashes escaped, so any text arrives as given.
    static func arrayLiteral(_ elements: [String?]) -> PostgresValue {
        var literal = "{"
        for (index, element) in elements.enumerated() {
            if index > 0 { literal += "," }
            guard let element else {
                literal += "NULL"
                continue
            }
            literal += "\""
            if element.utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                literal += element.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
                    of: "\"", with: "\\\"")
            } else {
                literal += element
            }
            literal += "\""
        }
        return .text(literal + "}")
    }
}
