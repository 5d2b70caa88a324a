import Foundation
package import ReplicaIndex
package import ReplicaSQLite

// The rows both backends prepare, bound to SQLite's statements.
extension PreparedRow {
    /// Binds parameters 1…18 of ``IndexWriter/insertSQL`` and ``IndexWriter/updateSQL``.
    ///
    /// - Parameter previous: the row whose values the statement still holds (rewound, not reset); only the
    ///   values that differ from it are bound again. The identifier and the title and body, which differ
    ///   almost always, are bound without comparing.
    package func bind(to statement: Statement, after previous: PreparedRow? = nil) throws {
        guard let previous else { return try bindAll(to: statement) }
        try statement.bind(.text(identifier), at: 1)
        if domain != previous.domain { try statement.bind(SQLValue(domain), at: 2) }
        if contentType != previous.contentType { try statement.bind(SQLValue(contentType), at: 3) }
        if created != previous.created { try statement.bind(SQLValue(created), at: 4) }
        if modified != previous.modified { try statement.bind(SQLValue(modified), at: 5) }
        if expires != previous.expires { try statement.bind(.real(expires), at: 6) }
        if authors != previous.authors { try statement.bind(SQLValue(authors), at: 7) }
        if recipients != previous.recipients { try statement.bind(SQLValue(recipients), at: 8) }
        if attributes != previous.attributes { try statement.bind(.text(attributes), at: 9) }
        if origin.owner != previous.origin.owner { try statement.bind(.text(origin.owner.rawValue), at: 10) }
        if origin.version != previous.origin.version { try statement.bind(SQLValue(origin.version), at: 11) }
        if indexed != previous.indexed { try statement.bind(.real(indexed), at: 12) }
        try text.bind(to: statement, from: 13, after: previous.text)
        if text.language != previous.text.language { try statement.bind(SQLValue(text.language), at: 18) }
    }

    private func bindAll(to statement: Statement) throws {
        try statement.bind(.text(identifier), at: 1)
        try statement.bind(SQLValue(domain), at: 2)
        try statement.bind(SQLValue(contentType), at: 3)
        try statement.bind(SQLValue(created), at: 4)
        try statement.bind(SQLValue(modified), at: 5)
        try statement.bind(.real(expires), at: 6)
        try statement.bind(SQLValue(authors), at: 7)
        try statement.bind(SQLValue(recipients), at: 8)
        try statement.bind(.text(attributes), at: 9)
        try statement.bind(.text(origin.owner.rawValue), at: 10)
        try statement.bind(SQLValue(origin.version), at: 11)
        try statement.bind(.real(indexed), at: 12)
        try text.bind(to: statement, from: 13)
        try statement.bind(SQLValue(text.language), at: 18)
    }
}

extension TextColumns {
    /// Binds the five full-text columns, in ranking order, to parameters `first` … `first + 4`.
    ///
    /// - Parameter previous: the columns the statement still holds (rewound, not reset); the keywords,
    ///   people and description are bound again only when they differ from those.
    package func bind(to statement: Statement, from first: Int32, after previous: TextColumns? = nil) throws {
        try statement.bind(.text(title), at: first)
        if keywords != previous?.keywords { try statement.bind(.text(keywords), at: first + 1) }
        if people != previous?.people { try statement.bind(.text(people), at: first + 2) }
        if description != previous?.description { try statement.bind(.text(description), at: first + 3) }
        try statement.bind(.text(body), at: first + 4)
    }
}
