public import Foundation
public import ReplicaCore

/// One thing a person can find: a note, a message, a file.
///
/// Indexing an item whose identifier is already in the index replaces it; with `isUpdate`, the given
/// attributes are merged into the stored item instead (an update of an item that is not there is
/// ignored, as in Core Spotlight).
///
/// For example:
/// ```swift
/// var attributes = AttributeSet(contentType: .plainText)
/// attributes.title = "Launch plan"
/// let item = SearchableItem(uniqueIdentifier: "note:alice:42",
///                           domainIdentifier: "account.alice.notes",
///                           attributeSet: attributes)
/// ```
public struct SearchableItem: Hashable, Sendable {
    /// The item's stable, unique identifier within its index.
    public var uniqueIdentifier: ItemIdentifier
    /// The domain the item belongs to, if any, so that it can be deleted with the domain.
    public var domainIdentifier: DomainIdentifier?
    /// The item's attributes.
    public var attributeSet: AttributeSet
    /// When the item stops being searchable. `nil` means the index's default lifetime
    /// (``SearchableIndex/Configuration/defaultLifetime``); `Date.distantFuture` keeps it.
    public var expirationDate: Date?
    /// Merge the attributes into the stored item instead of replacing it.
    public var isUpdate: Bool

    /// Creates an item without checking it; indexing it checks it (see ``validate()``).
    public init(
        uniqueIdentifier: ItemIdentifier, domainIdentifier: DomainIdentifier? = nil,
        attributeSet: AttributeSet, expirationDate: Date? = nil, isUpdate: Bool = false
    ) {
        self.uniqueIdentifier = uniqueIdentifier
        self.domainIdentifier = domainIdentifier
        self.attributeSet = attributeSet
        self.expirationDate = expirationDate
        self.isUpdate = isUpdate
    }

    /// The largest item accepted, in bytes of text and data.
    public static let maximumByteCount = 16 << 20

    /// Whether a domain has two dots in a row (checked on bytes: this runs for every item).
    private static func hasEmptyLevel(_ domain: String) -> Bool {
        var previousWasDot = false
        for byte in domain.utf8 {
            let isDot = byte == UInt8(ascii: ".")
            if isDot && previousWasDot { return true }
            previousWasDot = isDot
        }
        return false
    }

    /// Checks identifiers and size before the item goes near the index.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidItem` saying what to fix.
    public func validate() throws {
        let identifier = uniqueIdentifier.rawValue
        if identifier.isEmpty { throw ReplicaError(.invalidItem, "the item has an empty uniqueIdentifier") }
        if identifier.utf8.count > ItemIdentifier.maximumLength {
            throw ReplicaError(.invalidItem, "uniqueIdentifier is longer than \(ItemIdentifier.maximumLength) bytes")
        }
        if identifier.utf8.contains(0) {
            throw ReplicaError(
                .invalidItem,
                "uniqueIdentifier holds the character U+0000 (NUL), which no command or query can name: "
                    + "take it out of the identifier")
        }
        if let domain = domainIdentifier?.rawValue {
            if domain.utf8.contains(0) {
                throw ReplicaError(
                    .invalidItem,
                    "item '\(identifier)': domainIdentifier holds the character U+0000 (NUL), which no delete "
                        + "can name: take it out")
            }
            if domain.isEmpty || domain.hasPrefix(".") || domain.hasSuffix(".") || Self.hasEmptyLevel(domain) {
                throw ReplicaError(
                    .invalidItem,
                    "item '\(identifier)': domainIdentifier must be non-empty names separated by single dots")
            }
        }
        let size = attributeSet.approximateByteCount
        if size > Self.maximumByteCount {
            throw ReplicaError(
                .invalidItem,
                "item '\(identifier)' holds \(size) bytes of attributes; the limit is "
                    + "\(Self.maximumByteCount) bytes. Split it into several items or shorten textContent.")
        }
    }
}

// MARK: - JSON lines

extension SearchableItem {
    /// Reads an item from one line of `replica import`:
    /// `{"uniqueIdentifier": …, "domainIdentifier": …, "expirationDate": …, "isUpdate": …, "attributes": {…}}`.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidItem` naming the field at fault.
    public init(json: JSON) throws {
        guard json.objectValue != nil else {
            throw ReplicaError(.invalidItem, "each line must be a JSON object, not \(json.kindDescription)")
        }
        guard let identifier = json["uniqueIdentifier"], !identifier.isNull else {
            throw ReplicaError(.invalidItem, "the item has no uniqueIdentifier")
        }
        guard let identifierText = identifier.stringValue else {
            throw ReplicaError(.invalidItem, "uniqueIdentifier must be a string, not \(identifier.kindDescription)")
        }
        var domain: DomainIdentifier?
        if let value = json["domainIdentifier"], !value.isNull {
            guard let text = value.stringValue else {
                throw ReplicaError(.invalidItem, "item '\(identifierText)': domainIdentifier must be a string")
            }
            domain = DomainIdentifier(text)
        }
        var expiration: Date?
        if let value = json["expirationDate"], !value.isNull {
            guard let text = value.stringValue, let date = ISO8601.date(from: text) else {
                throw ReplicaError(
                    .invalidItem,
                    "item '\(identifierText)': expirationDate must be an ISO 8601 date such as 2027-01-01T00:00:00Z")
            }
            expiration = date
        }
        var isUpdate = false
        if let value = json["isUpdate"], !value.isNull {
            guard let flag = value.boolValue else {
                throw ReplicaError(.invalidItem, "item '\(identifierText)': isUpdate must be true or false")
            }
            isUpdate = flag
        }
        var options: UpdateListenerOptions = []
        if let value = json["updateListenerOptions"], !value.isNull {
            let names = value.arrayValue?.compactMap(\.stringValue) ?? []
            let known = Dictionary(uniqueKeysWithValues: UpdateListenerOptions.names)
            guard names.count == value.arrayValue?.count, names.allSatisfy({ known[$0] != nil }) else {
                throw ReplicaError(
                    .invalidItem,
                    "item '\(identifierText)': updateListenerOptions must be an array of \"summarization\" and \"priority\""
                )
            }
            options = UpdateListenerOptions(names.compactMap { known[$0] })
        }
        var attributes: AttributeSet
        do {
            attributes = try json["attributes"].map(AttributeSet.init(json:)) ?? AttributeSet()
        } catch let error as ReplicaError {
            throw ReplicaError(error.code, "item '\(identifierText)': \(error.message)")
        }
        self.init(
            uniqueIdentifier: ItemIdentifier(identifierText), domainIdentifier: domain,
            attributeSet: attributes, expirationDate: expiration, isUpdate: isUpdate)
        if !options.isEmpty { updateListenerOptions = options }
        try validate()
    }

    /// The item as one `replica import` line.
    public var json: JSON {
        .object(omittingNil: [
            ("uniqueIdentifier", .string(uniqueIdentifier.rawValue)),
            ("domainIdentifier", domainIdentifier.map { .string($0.rawValue) }),
            ("expirationDate", expirationDate.map { .string(ISO8601.string(from: $0)) }),
            ("isUpdate", isUpdate ? .bool(true) : nil),
            (
                "updateListenerOptions",
                updateListenerOptions.isEmpty ? nil : .array(updateListenerOptions.namesList.map(JSON.string))
            ),
            ("attributes", attributeSet.json(excluding: [.updateListenerOptions])),
        ])
    }
}

// MARK: - Enrichment

/// What an item asks enrichment to add once it is indexed (Core Spotlight's `updateListenerOptions`):
/// a summary of its thread, a priority, or both.
public struct UpdateListenerOptions: OptionSet, Hashable, Sendable {
    /// The options as bits.
    public let rawValue: Int
    /// Creates options from their bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Summarize the item's thread into `textContentSummary`.
    public static let summarization = UpdateListenerOptions(rawValue: 1)
    /// Classify the item's priority into `isPriority`.
    public static let priority = UpdateListenerOptions(rawValue: 2)

    /// The options by the names `replica import` and the item's JSON use.
    public static let names: [(String, UpdateListenerOptions)] = [
        ("summarization", .summarization), ("priority", .priority),
    ]

    /// The options' names, in a fixed order.
    public var namesList: [String] { Self.names.filter { contains($0.1) }.map(\.0) }
}

extension SearchableItem {
    /// What the item asks enrichment for; kept with its attributes (under an internal key that is never
    /// shown to a model), so that it survives merges and is read back with the item.
    public var updateListenerOptions: UpdateListenerOptions {
        get {
            let names = attributeSet[.updateListenerOptions]?.strings ?? []
            return UpdateListenerOptions(UpdateListenerOptions.names.filter { names.contains($0.0) }.map(\.1))
        }
        set { attributeSet[.updateListenerOptions] = newValue.isEmpty ? nil : .texts(newValue.namesList) }
    }
}
