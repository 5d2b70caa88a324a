public import Foundation

/// How the records of one kind become searchable items: which fields become which attributes, the
/// content type, how long items stay, and a version. Bumping the version rebuilds every item of the kind.
///
/// For example:
/// ```swift
/// var messages = Projection(kind: "message", version: 2, contentType: .emailMessage)
/// messages.attributes = [(.subject, ["subject"]), (.textContent, ["body"]), (.authorNames, ["from"])]
/// messages.lifetime = 30 * 24 * 3600   // messages expire 30 days after they were modified
/// ```
public struct Projection: Sendable {
    /// The record kind this projection is for.
    public var kind: String
    /// Bump it to rebuild every item of the kind. Versions only go up: an index that holds a newer
    /// version than this (written by a newer build of the app) is not rebuilt by this one; the changes
    /// this build applies are projected with its own version, and the items it does not touch stay as the
    /// newer build made them.
    public var version: Int
    /// The content type of the items the records become.
    public var contentType: ContentType
    /// For each attribute, the record fields it comes from: the first field present wins.
    public var attributes: [(AttributeKey, [String])]
    /// How long an item stays searchable after its record's modification time (or after it was
    /// projected, for a record without one); `nil` keeps it.
    public var lifetime: TimeInterval?
    /// The item identifier: `{kind}`, `{account}` and `{id}` are replaced. Keep secrets out of it.
    public var identifierTemplate: String

    /// The identifier template used when none is given: `{kind}:{account}:{id}`.
    public static let defaultIdentifierTemplate = "{kind}:{account}:{id}"

    /// Creates a projection for the records of `kind`; with no attributes given, no field becomes an attribute.
    ///
    /// - Parameters:
    ///   - kind: the record kind it is for.
    ///   - version: bump it to rebuild every item of the kind.
    ///   - contentType: the content type of the items.
    ///   - attributes: for each attribute, the record fields it comes from, the first present winning.
    ///   - lifetime: how long an item stays after its record's modification time; `nil` keeps it.
    ///   - identifierTemplate: the item identifier, with `{kind}`, `{account}` and `{id}` replaced.
    public init(
        kind: String, version: Int = 1, contentType: ContentType = .plainText,
        attributes: [(AttributeKey, [String])] = [], lifetime: TimeInterval? = nil,
        identifierTemplate: String = Projection.defaultIdentifierTemplate
    ) {
        self.kind = kind
        self.version = version
        self.contentType = contentType
        self.attributes = attributes
        self.lifetime = lifetime
        self.identifierTemplate = identifierTemplate
    }

    /// The projection for a kind that declares none: `title` → title, `text` or `body` → textContent,
    /// `summary` → contentDescription, `keywords` → keywords, `authors` → authorNames, `recipients` →
    /// recipientNames, `created` and `modified` → the creation and modification dates. Version 1; the
    /// content type follows the kind's name (`message` → `public.message`, `email` →
    /// `public.email-message`, `task` → `public.to-do-item`, `event` → `public.calendar-event`, `contact`
    /// → `public.contact`, anything else → `public.plain-text`); items do not expire.
    public static func `default`(for kind: String) -> Projection {
        let types: [String: ContentType] = [
            "message": .message, "email": .emailMessage, "mail": .emailMessage, "task": .task, "todo": .task,
            "event": .calendarEvent, "contact": .contact,
        ]
        return Projection(
            kind: kind, version: 1, contentType: types[kind] ?? .plainText,
            attributes: [
                (.title, ["title"]),
                (.textContent, ["text", "body"]),
                (.contentDescription, ["summary"]),
                (.keywords, ["keywords"]),
                (.authorNames, ["authors"]),
                (.recipientNames, ["recipients"]),
                (.contentCreationDate, ["created"]),
                (.contentModificationDate, ["modified"]),
            ])
    }

    /// The identifier of the item a record becomes: the template with `{kind}`, `{account}` and `{id}`
    /// replaced in one pass (a value that itself contains a placeholder is left as it is).
    ///
    /// Every projected record goes through here, so it builds the string directly; Foundation's
    /// `replacingOccurrences` took a fifth of a rebuild's time.
    public func identifier(account: AccountID, id: String) -> ItemIdentifier {
        if identifierTemplate == Self.defaultIdentifierTemplate {
            return ItemIdentifier(kind + ":" + account.rawValue + ":" + id)
        }
        var result = ""
        var rest = identifierTemplate[...]
        while let open = rest.firstIndex(of: "{") {
            result += rest[..<open]
            let placeholder = rest[open...]
            if placeholder.hasPrefix("{kind}") {
                result += kind
                rest = placeholder.dropFirst(6)
            } else if placeholder.hasPrefix("{account}") {
                result += account.rawValue
                rest = placeholder.dropFirst(9)
            } else if placeholder.hasPrefix("{id}") {
                result += id
                rest = placeholder.dropFirst(4)
            } else {
                result += "{"
                rest = placeholder.dropFirst()
            }
        }
        return ItemIdentifier(result + rest)
    }

    /// The domain of a record's item: `account.<account>.<kind>`.
    public func domain(account: AccountID) -> DomainIdentifier {
        .account(account, kind: kind)
    }

    /// The item a (not deleted) record becomes.
    ///
    /// - Throws: `ReplicaError` with code `invalidItem` when a field has the wrong type for its
    ///   attribute; the message names the field, the attribute and the types, never the content.
    public func item(for record: Record, now: Date) throws -> SearchableItem {
        var attributes = AttributeSet(contentType: contentType)
        for (key, fields) in self.attributes {
            guard let field = fields.first(where: { record[$0] != nil }), let value = record[field] else { continue }
            if value.stringValue?.isEmpty == true { continue }  // an empty text is no text
            guard let converted = Self.convert(value, for: key) else {
                throw ReplicaError(
                    .invalidItem,
                    "field '\(field)' is \(value.kindDescription), but projection '\(kind)' v\(version) "
                        + "makes it the attribute '\(key)', which needs \((key.kind ?? .text).expectation)")
            }
            attributes[key] = converted
        }
        if attributes.contentModificationDate == nil, let modified = record.modified {
            attributes.contentModificationDate = modified
        }
        // Where the item came from, so hydration can ask the record store whatever the identifier scheme.
        attributes[.recordKind] = .text(record.kind)
        attributes[.recordID] = .text(record.id)
        let expiration = lifetime.map { (record.modified ?? now).addingTimeInterval($0) } ?? .distantFuture
        return SearchableItem(
            uniqueIdentifier: identifier(account: record.account, id: record.id),
            domainIdentifier: domain(account: record.account),
            attributeSet: attributes, expirationDate: expiration)
    }

    /// A field's value as an attribute's kind of value, or `nil` when it has the wrong type. Dates may be
    /// ISO 8601 strings or seconds since 1970; a list attribute takes a single string too.
    static func convert(_ value: JSON, for key: AttributeKey) -> AttributeValue? {
        switch key.kind {
        case .text?, nil:
            if key.kind == nil, let number = value.doubleValue { return .number(number) }
            return value.stringValue.map(AttributeValue.text)
        case .texts?:
            if let text = value.stringValue { return .texts([text]) }
            guard let array = value.arrayValue else { return nil }
            let strings = array.compactMap(\.stringValue)
            return strings.count == array.count ? .texts(strings) : nil
        case .date?:
            if let seconds = value.doubleValue { return .date(Date(timeIntervalSince1970: seconds)) }
            return value.stringValue.flatMap(ISO8601.date(from:)).map(AttributeValue.date)
        case .number?:
            return value.doubleValue.map(AttributeValue.number)
        case .bool?:
            return value.boolValue.map(AttributeValue.bool)
        case .data?:
            return value.stringValue.flatMap { Data(base64Encoded: $0) }.map(AttributeValue.data)
        case .people?:
            if let text = value.stringValue { return .people([Person(displayName: text)]) }
            return try? AttributeValue.fromJSON(value, for: key)
        }
    }
}

/// The projections a store's records go through, and the index they fill.
public struct ProjectionSet: Sendable {
    /// Declared projections by kind; other kinds use ``Projection/default(for:)``.
    public var projections: [String: Projection]
    /// The named index records are projected into, in each account. Name the index the app's own
    /// `indexItems` calls use, so that one app's items are in one index; the command line uses the
    /// configuration file's `index` (``Store/defaultIndexName`` when it names none).
    public var indexName: String

    /// The projections, and the index they fill: there is no default, so that an app never splits its
    /// items across an index it named and one it did not.
    public init(_ projections: [Projection] = [], indexName: String) {
        self.projections = Dictionary(projections.map { ($0.kind, $0) }, uniquingKeysWith: { $1 })
        self.indexName = indexName
    }

    /// The projection for `kind`: the declared one, or the default.
    public func projection(for kind: String) -> Projection {
        projections[kind] ?? .default(for: kind)
    }
}
