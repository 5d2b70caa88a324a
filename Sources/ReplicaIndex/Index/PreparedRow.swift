package import Foundation
import ReplicaCore
package import ReplicaText

/// The values of an items row, worked out from an item without touching the database, so that many can
/// be prepared on another thread; bound straight into a statement, without an intermediate array.
/// Both stores write these values (the PostgreSQL store in a module of its own).
package struct PreparedRow: Sendable {
    package let identifier: String
    package let domain: String?
    package let contentType: String?
    /// The `contentTypeTree` the item brings, if any.
    package let explicitTree: [String]?
    package let created: Double?
    package let modified: Double?
    package let expires: Double
    /// ``filterText(_:)`` of the authors' names and handles.
    package let authors: String?
    package let recipients: String?
    /// Every attribute but those kept in columns of their own, as a JSON object.
    package let attributes: String
    package let origin: ItemOrigin
    package let indexed: Double
    /// Its text columns; the writer settles their language when CLD2 could not tell it
    /// (``IndexWriter/settleLanguage(of:)``).
    package var text: TextColumns
    /// Whether the item asks for enrichment: the writer queues it when it writes the row.
    package let asksForEnrichment: Bool

    /// The row with its text analyzed ahead, for a writer on another thread to replay the tokens rather
    /// than analyze the text itself (``TextAnalyzer/Preanalysis``); as it is when its language is not
    /// known yet, since the writer settles that.
    package func preanalyzed() -> PreparedRow {
        guard text.languageIsKnown else { return self }
        var row = self
        row.text.preanalysis = TextAnalyzer.Preanalysis(
            [text.title, text.keywords, text.people, text.description, text.body],
            language: text.language)
        return row
    }

    /// Works out an item's row as it is written at `now`; an item without an expiration date expires
    /// `defaultLifetime` after `now`.
    package init(_ item: SearchableItem, origin: ItemOrigin, now: Date, defaultLifetime: TimeInterval) {
        let attributes = item.attributeSet
        text = TextColumns(attributes)
        identifier = item.uniqueIdentifier.rawValue
        domain = item.domainIdentifier?.rawValue
        contentType = attributes.contentType?.rawValue
        explicitTree = attributes.explicitContentTypeTree
        created = attributes.contentCreationDate?.timeIntervalSince1970
        modified = attributes.contentModificationDate?.timeIntervalSince1970
        expires = (item.expirationDate ?? now.addingTimeInterval(defaultLifetime)).timeIntervalSince1970
        authors = Self.filterText(text.authors)
        recipients = Self.filterText(text.recipients)
        self.attributes = attributes.serializedJSON(excludingStoredElsewhere: ())
        self.origin = origin
        indexed = now.timeIntervalSince1970
        asksForEnrichment = attributes[.updateListenerOptions] != nil
    }

    /// Names and handles, lowercased, one per line with a line break on each side, so a filter can look
    /// for a name anywhere with `instr`; `nil` when there are none.
    package static func filterText(_ strings: [String]) -> String? {
        strings.isEmpty ? nil : "\n" + strings.map { $0.lowercased() }.joined(separator: "\n") + "\n"
    }
}

/// The searchable text of an item, split into the full-text columns in ranking order, and the names
/// its people filters match.
///
/// Built in one pass over the item's attributes (a handful) rather than one look-up per known key (dozens),
/// because every indexed item goes through here.
package struct TextColumns: Sendable {
    package var title = ""
    package var keywords = ""
    package var people = ""
    package var description = ""
    package var body = ""
    package var authors: [String] = []
    package var recipients: [String] = []
    /// The language the columns' words are stemmed for (``TextAnalyzer/itemLanguage(given:text:)``): the
    /// item's `language` attribute, else the one its text is in; `nil` for none (Chinese, say).
    package var language: String?
    /// Whether ``language`` is known: `false` while it is English only because CLD2 could not tell, until
    /// the index's writer settles it (``IndexWriter/settleLanguage(of:)``).
    package var languageIsKnown = true
    /// The language the columns are written in when it has no stems (``language`` is then `nil`): `zh`,
    /// `ja`, `th`… (``TextAnalyzer/itemLanguage(given:text:)``), counted among the index's languages
    /// (``WrittenLanguages``); `nil` for columns as stored.
    package var unstemmedLanguage: String?
    /// The columns' tokens, made ahead on the thread that prepared the row (``PreparedRow/preanalyzed()``).
    package var preanalysis: TextAnalyzer.Preanalysis?

    /// Whether the five full-text columns and their language are the same (the people lists aside).
    package func hasSameColumns(as other: TextColumns) -> Bool {
        language == other.language && title == other.title && keywords == other.keywords && people == other.people
            && description == other.description
            && body == other.body
    }

    /// Where an attribute's text goes, and its place among the attributes that go there.
    enum Role {
        case title, keywords, description, author, recipient
    }

    static let roles: [AttributeKey: (Role, Int)] = {
        var roles: [AttributeKey: (Role, Int)] = [:]
        for (order, key) in [AttributeKey.title, .displayName, .subject].enumerated() { roles[key] = (.title, order) }
        for (order, key) in [AttributeKey.keywords, .alternateNames, .projects, .organizations].enumerated() {
            roles[key] = (.keywords, order)
        }
        for (order, key) in [
            AttributeKey.contentDescription, .textContentSummary, .headline, .comment, .information, .path,
            .namedLocation, .city, .artist, .album, .transcribedTextContent,
        ].enumerated() {
            roles[key] = (.description, order)
        }
        for (order, key) in [AttributeKey.authors, .authorNames, .authorEmailAddresses, .creator].enumerated() {
            roles[key] = (.author, order)
        }
        for (order, key) in [
            AttributeKey.recipients, .recipientNames, .recipientEmailAddresses, .primaryRecipients,
            .additionalRecipients, .participants,
        ].enumerated() {
            roles[key] = (.recipient, order)
        }
        return roles
    }()

    /// Columns as stored: their language is not found again.
    package init(title: String, keywords: String, people: String, description: String, body: String, language: String?)
    {
        self.title = title
        self.keywords = keywords
        self.people = people
        self.description = description
        self.body = body
        self.language = language
    }

    /// The languages an item's stored attributes (``PreparedRow/attributes``, a JSON object) give: its
    /// `language` attribute, one tag or a list of them.
    package static func languages(inAttributes json: String) -> [String] {
        guard let value = (try? JSON.parse(json))?["language"] else { return [] }
        return value.arrayValue?.compactMap(\.stringValue) ?? value.stringValue.map { [$0] } ?? []
    }

    /// Splits an item's attributes into the columns, and finds the language they are stemmed for.
    package init(_ attributes: AttributeSet) {
        var found: [(role: Role, order: Int, strings: [String])] = []
        var languages: [String] = []
        for (key, value) in attributes.values {
            if key == .textContent {
                body = value.textValue ?? ""
            } else if key == .language {
                languages = value.strings
            } else if let (role, order) = Self.roles[key] {
                found.append((role, order, value.strings))
            }
        }
        defer { findLanguage(given: languages) }
        guard !found.isEmpty else { return }
        found.sort { ($0.order) < ($1.order) }
        var title: [String] = []
        var keywords: [String] = []
        var description: [String] = []
        for entry in found {
            switch entry.role {
            case .title: title += entry.strings
            case .keywords: keywords += entry.strings
            case .description: description += entry.strings
            case .author: authors += entry.strings
            case .recipient: recipients += entry.strings
            }
        }
        self.title = Self.unique(title)
        self.keywords = Self.unique(keywords)
        self.description = Self.unique(description)
        self.people = Self.unique(authors + recipients)
    }

    /// Sets ``language``: the first of the item's `languages` (BCP 47) that has stems, else the one the
    /// columns are written in, not known (``languageIsKnown``) when CLD2 cannot tell, until the writer
    /// settles it.
    package mutating func findLanguage(given languages: [String]) {
        (language, languageIsKnown, unstemmedLanguage) = TextAnalyzer.itemLanguage(
            given: languages, text: TextAnalyzer.languageSample(of: [title, description, body]))
    }

    /// ``findLanguage(given:)``, with `unknown` (asked only then) when CLD2 cannot tell.
    package mutating func findLanguage(given languages: [String], whenUnknown unknown: @autoclosure () throws -> String)
        rethrows
    {
        findLanguage(given: languages)
        if !languageIsKnown { (language, languageIsKnown) = (try unknown(), true) }
    }

    /// The strings, each once, one per line.
    private static func unique(_ strings: [String]) -> String {
        switch strings.count {
        case 0: return ""
        case 1: return strings[0]
        default:
            var seen = Set<String>()
            return strings.filter { seen.insert($0).inserted }.joined(separator: "\n")
        }
    }
}
