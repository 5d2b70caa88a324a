public import Foundation
public import ReplicaCore

/// The attributes of a searchable item: system keys with typed accessors, plus custom keys.
///
/// Setting an attribute to `nil` removes it; in an item indexed with `isUpdate`, the removal is applied
/// to the stored item, as Core Spotlight does.
///
/// For example:
/// ```swift
/// var attributes = AttributeSet(contentType: .plainText)
/// attributes.title = "Launch plan"
/// attributes.textContent = "The launch risk is the supplier."
/// attributes.keywords = ["launch", "q3"]
/// attributes.contentModificationDate = Date()
/// ```
public struct AttributeSet: Hashable, Sendable {
    private(set) var values: [AttributeKey: AttributeValue] = [:]
    /// Keys set to `nil`: removed from the stored item when this set updates it.
    private(set) var removals: Set<AttributeKey> = []

    /// Creates an empty set.
    public init() {}

    /// Creates a set with only a content type, or an empty one when `contentType` is `nil`.
    public init(contentType: ContentType?) {
        if let contentType { self.contentType = contentType }
    }

    /// The value for `key`, or `nil`. Setting `nil` removes the attribute.
    public subscript(key: AttributeKey) -> AttributeValue? {
        get { values[key] }
        set {
            if let newValue {
                values[key] = newValue
                removals.remove(key)
            } else {
                values[key] = nil
                removals.insert(key)
            }
        }
    }

    /// The keys that have values, sorted.
    public var keys: [AttributeKey] { values.keys.sorted() }

    /// Whether no attribute has a value.
    public var isEmpty: Bool { values.isEmpty }

    /// Applies `update` on top of this set: its values replace these, its removals remove.
    public func merging(_ update: AttributeSet) -> AttributeSet {
        var merged = self
        for key in update.removals { merged.values[key] = nil }
        for (key, value) in update.values { merged.values[key] = value }
        merged.removals = []
        return merged
    }

    /// A rough size in bytes of the text and data held, for the per-item limit.
    public var approximateByteCount: Int {
        values.reduce(0) { total, entry in
            let (key, value) = entry
            let size: Int
            switch value {
            case .text(let text): size = text.utf8.count
            case .texts(let texts): size = texts.reduce(0) { $0 + $1.utf8.count + 1 }
            case .data(let data): size = data.count
            case .people(let people):
                size = people.reduce(0) {
                    $0 + ($1.displayName?.utf8.count ?? 0) + $1.handles.reduce(0) { $0 + $1.utf8.count }
                }
            default: size = 8
            }
            return total + key.rawValue.utf8.count + size
        }
    }

    // MARK: Typed accessors for common system keys

    /// The title of the item (``AttributeKey/title``).
    public var title: String? {
        get { values[.title]?.textValue }
        set { self[.title] = newValue.map(AttributeValue.text) }
    }

    /// The name to show for the item (``AttributeKey/displayName``).
    public var displayName: String? {
        get { values[.displayName]?.textValue }
        set { self[.displayName] = newValue.map(AttributeValue.text) }
    }

    /// A description of the item's content (``AttributeKey/contentDescription``).
    public var contentDescription: String? {
        get { values[.contentDescription]?.textValue }
        set { self[.contentDescription] = newValue.map(AttributeValue.text) }
    }

    /// The full text of the item's content (``AttributeKey/textContent``).
    public var textContent: String? {
        get { values[.textContent]?.textValue }
        set { self[.textContent] = newValue.map(AttributeValue.text) }
    }

    /// A summary of the item's thread or recording (``AttributeKey/textContentSummary``).
    public var textContentSummary: String? {
        get { values[.textContentSummary]?.textValue }
        set { self[.textContentSummary] = newValue.map(AttributeValue.text) }
    }

    /// Whether the item deserves attention (``AttributeKey/isPriority``).
    public var isPriority: Bool? {
        get { if case .bool(let flag)? = values[.isPriority] { return flag } else { return nil } }
        set { self[.isPriority] = newValue.map(AttributeValue.bool) }
    }

    /// The subject of the item, such as a mail's subject line (``AttributeKey/subject``).
    public var subject: String? {
        get { values[.subject]?.textValue }
        set { self[.subject] = newValue.map(AttributeValue.text) }
    }

    /// The path of the item's file (``AttributeKey/path``).
    public var path: String? {
        get { values[.path]?.textValue }
        set { self[.path] = newValue.map(AttributeValue.text) }
    }

    /// Keywords that describe the item (``AttributeKey/keywords``).
    public var keywords: [String]? {
        get { values[.keywords]?.strings }
        set { self[.keywords] = newValue.map(AttributeValue.texts) }
    }

    /// The type of the item's content (``AttributeKey/contentType``).
    public var contentType: ContentType? {
        get { values[.contentType]?.textValue.map(ContentType.init(rawValue:)) }
        set { self[.contentType] = newValue.map { .text($0.rawValue) } }
    }

    /// The date the item's content was created (``AttributeKey/contentCreationDate``).
    public var contentCreationDate: Date? {
        get { values[.contentCreationDate]?.dateValue }
        set { self[.contentCreationDate] = newValue.map(AttributeValue.date) }
    }

    /// The date the item's content was last changed (``AttributeKey/contentModificationDate``).
    public var contentModificationDate: Date? {
        get { values[.contentModificationDate]?.dateValue }
        set { self[.contentModificationDate] = newValue.map(AttributeValue.date) }
    }

    /// The names of the item's authors (``AttributeKey/authorNames``).
    public var authorNames: [String]? {
        get { values[.authorNames]?.strings }
        set { self[.authorNames] = newValue.map(AttributeValue.texts) }
    }

    /// The names of the item's recipients (``AttributeKey/recipientNames``).
    public var recipientNames: [String]? {
        get { values[.recipientNames]?.strings }
        set { self[.recipientNames] = newValue.map(AttributeValue.texts) }
    }

    /// The people who wrote or sent the item (``AttributeKey/authors``).
    public var authors: [Person]? {
        get { if case .people(let people)? = values[.authors] { return people } else { return nil } }
        set { self[.authors] = newValue.map(AttributeValue.people) }
    }

    /// The people the item was sent to (``AttributeKey/recipients``).
    public var recipients: [Person]? {
        get { if case .people(let people)? = values[.recipients] { return people } else { return nil } }
        set { self[.recipients] = newValue.map(AttributeValue.people) }
    }

    /// The item's rating (``AttributeKey/rating``).
    public var rating: Double? {
        get { values[.rating]?.numberValue }
        set { self[.rating] = newValue.map(AttributeValue.number) }
    }

    /// The latitude of the item's location, in degrees (``AttributeKey/latitude``).
    public var latitude: Double? {
        get { values[.latitude]?.numberValue }
        set { self[.latitude] = newValue.map(AttributeValue.number) }
    }

    /// The longitude of the item's location, in degrees (``AttributeKey/longitude``).
    public var longitude: Double? {
        get { values[.longitude]?.numberValue }
        set { self[.longitude] = newValue.map(AttributeValue.number) }
    }

    /// Image data for a thumbnail of the item (``AttributeKey/thumbnailData``).
    public var thumbnailData: Data? {
        get { if case .data(let data)? = values[.thumbnailData] { return data } else { return nil } }
        set { self[.thumbnailData] = newValue.map(AttributeValue.data) }
    }

    // MARK: Derived values the index searches and filters on

    /// Every name and handle of the item's authors (names, email addresses, people).
    public var authorStrings: [String] {
        [AttributeKey.authors, .authorNames, .authorEmailAddresses, .creator].flatMap { values[$0]?.strings ?? [] }
    }

    /// Every name and handle of the item's recipients.
    public var recipientStrings: [String] {
        [
            AttributeKey.recipients, .recipientNames, .recipientEmailAddresses, .primaryRecipients,
            .additionalRecipients,
            .participants,
        ].flatMap { values[$0]?.strings ?? [] }
    }

    /// The content type's tree: the item's own `contentTypeTree` when given, otherwise replica's table.
    public var contentTypeTree: [String] {
        explicitContentTypeTree ?? (contentType ?? .item).tree
    }

    /// The `contentTypeTree` the item brings, if any.
    var explicitContentTypeTree: [String]? {
        if case .texts(let tree)? = values[.contentTypeTree], !tree.isEmpty { return tree }
        return nil
    }
}

// MARK: - JSON

extension AttributeSet {
    /// Reads attributes from a JSON object of Core Spotlight key names.
    ///
    /// `null` removes an attribute (meaningful in an update).
    ///
    /// - Throws: ``ReplicaError`` with code `invalidItem` for a value of the wrong kind.
    public init(json: JSON) throws {
        guard let members = json.objectValue else {
            throw ReplicaError(
                .invalidItem,
                "'attributes' must be an object of attribute names and values, not \(json.kindDescription)")
        }
        self.init()
        for (name, value) in members {
            let key = AttributeKey(name)
            if value.isNull {
                self[key] = nil
            } else {
                self[key] = try AttributeValue.fromJSON(value, for: key)
            }
        }
    }

    /// The keys an index can recover from its text columns instead of its stored JSON: `title` when it is
    /// the only title-like attribute, `contentDescription` likewise (see ``TextColumns``).
    ///
    /// Found by one look at each of the item's attributes (a handful), not one per attribute a column
    /// takes (dozens): every indexed item goes through here.
    var keysRecoverableFromText: RecoverableKeys {
        var keys = RecoverableKeys()
        for key in values.keys {
            if key == .displayName || key == .subject {
                keys.title = false
            } else if key != .contentDescription, TextColumns.roles[key]?.0 == .description {
                keys.description = false
            }
        }
        return keys
    }

    /// The keys of ``keysRecoverableFromText``: the text and content type always, the title and the
    /// description when no other attribute shares their column.
    struct RecoverableKeys {
        var title = true
        var description = true

        func contains(_ key: AttributeKey) -> Bool {
            key == .textContent || key == .contentType || (title && key == .title)
                || (description && key == .contentDescription)
        }
    }

    /// The attributes an index stores as JSON: all but those it keeps in columns of its own (the text,
    /// the content type, a lone title or description). Compact, keys sorted, and written directly without
    /// building a ``JSON`` value first, because every indexed item goes through here.
    func serializedJSON(excludingStoredElsewhere: Void) -> String {
        let excluded = keysRecoverableFromText
        var output = "{"
        var first = true
        for key in values.keys.sorted() where !excluded.contains(key) {
            if !first { output += "," }
            first = false
            JSON.writeString(key.rawValue, to: &output)
            output += ":"
            switch values[key]! {
            case .text(let text): JSON.writeString(text, to: &output)
            case .texts(let texts):
                output += "["
                for (index, text) in texts.enumerated() {
                    if index > 0 { output += "," }
                    JSON.writeString(text, to: &output)
                }
                output += "]"
            case let value: value.json(forCustomKey: !key.isSystem).write(to: &output)
            }
        }
        return output + "}"
    }

    /// Rebuilds an attribute set from an index's stored JSON and the attributes it keeps in columns of
    /// their own (the inverse of ``serializedJSON(excludingStoredElsewhere:)``); both stores read items
    /// back with it.
    ///
    /// - Throws: ``ReplicaError`` `corruptIndex` when the JSON cannot be read back.
    package init(stored text: String, contentType: String?, body: String?, title: String, description: String) throws {
        do {
            self = try AttributeSet(json: JSON.parse(text))
        } catch {
            throw ReplicaError(.corruptIndex, "an item's stored attributes cannot be read back", cause: error)
        }
        let recoverable = keysRecoverableFromText
        if let contentType { self.contentType = ContentType(rawValue: contentType) }
        if let body, !body.isEmpty { textContent = body }
        if recoverable.contains(.title), !title.isEmpty { self.title = title }
        if recoverable.contains(.contentDescription), !description.isEmpty { contentDescription = description }
    }

    /// The attributes as a JSON object, keys sorted; removals are written as `null`.
    public func json(excluding excluded: Set<AttributeKey> = []) -> JSON {
        var members: [(String, JSON)] = []
        for key in keys where !excluded.contains(key) {
            members.append((key.rawValue, values[key]!.json(forCustomKey: !key.isSystem)))
        }
        for key in removals.sorted() where !excluded.contains(key) {
            members.append((key.rawValue, .null))
        }
        return .object(members)
    }
}
