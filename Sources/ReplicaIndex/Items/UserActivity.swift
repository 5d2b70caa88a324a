public import Foundation
public import ReplicaCore

/// Something the account's person did in the app — viewed a note, opened a landmark — as
/// `NSUserActivity` records it, donated so that search and suggestions can use it.
///
/// An activity about an indexed item (``relatedUniqueIdentifier``) never duplicates it in results: it
/// raises that item's ranking by engagement (see ``Engagement``). A search-eligible activity about no
/// indexed item is searchable itself, as an item `activity:<persistent identifier>`. Donating an
/// activity with a persistent identifier already held counts one more view and moves its date.
///
/// For example:
/// ```swift
/// var viewed = UserActivity(activityType: "com.example.notes.view", persistentIdentifier: "view:note:42",
///                           title: "Launch plan")
/// viewed.relatedUniqueIdentifier = "note:alice:42"
/// viewed.isEligibleForPrediction = true
/// try await index.donateUserActivities([viewed])
/// ```
public struct UserActivity: Hashable, Sendable {
    /// What kind of activity it is, in reverse-DNS form (`com.example.notes.view`).
    public var activityType: String
    /// Names the activity so that it can be donated again and deleted.
    public var persistentIdentifier: String
    /// The activity's title, such as the name of the note viewed.
    public var title: String?
    /// The item the activity is about, if it is indexed.
    public var relatedUniqueIdentifier: ItemIdentifier?
    /// Keywords that describe the activity; added to its item's keywords when it is searched on its own.
    public var keywords: [String]
    /// When it happened; the donation time when not given.
    public var date: Date?
    /// Whether search may return it (or use it to rank its item).
    public var isEligibleForSearch: Bool
    /// Whether `recent` suggestions may use it.
    public var isEligibleForPrediction: Bool
    /// More to index, for an activity searched on its own.
    public var attributeSet: AttributeSet?
    /// The entity the activity is about, if any.
    public var entity: EntityReference?

    /// Creates an activity; only the type and the persistent identifier are required.
    public init(
        activityType: String, persistentIdentifier: String, title: String? = nil,
        relatedUniqueIdentifier: ItemIdentifier? = nil, keywords: [String] = [], date: Date? = nil,
        isEligibleForSearch: Bool = true, isEligibleForPrediction: Bool = false,
        attributeSet: AttributeSet? = nil, entity: EntityReference? = nil
    ) {
        self.activityType = activityType
        self.persistentIdentifier = persistentIdentifier
        self.title = title
        self.relatedUniqueIdentifier = relatedUniqueIdentifier
        self.keywords = keywords
        self.date = date
        self.isEligibleForSearch = isEligibleForSearch
        self.isEligibleForPrediction = isEligibleForPrediction
        self.attributeSet = attributeSet
        self.entity = entity
    }

    /// The item a search-eligible activity about nothing indexed becomes.
    public var itemIdentifier: ItemIdentifier { ItemIdentifier("activity:" + persistentIdentifier) }

    /// Checks what the index needs.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidItem` saying what to fix.
    public func validate() throws {
        if activityType.isEmpty { throw ReplicaError(.invalidItem, "an activity needs an activityType") }
        if persistentIdentifier.isEmpty { throw ReplicaError(.invalidItem, "an activity needs a persistentIdentifier") }
        if persistentIdentifier.utf8.contains(0) {
            throw ReplicaError(
                .invalidItem,
                "activity persistentIdentifier holds the character U+0000 (NUL), which no command can name: take it out"
            )
        }
        if persistentIdentifier.utf8.count > 512 {
            throw ReplicaError(.invalidItem, "activity persistentIdentifier is longer than 512 bytes")
        }
        try entity?.validate()
        // Checked here as well as when it becomes an item, so that a donation of many refuses only this one.
        let size =
            (title?.utf8.count ?? 0) + keywords.reduce(0) { $0 + $1.utf8.count }
            + (attributeSet?.approximateByteCount ?? 0)
        if size > SearchableItem.maximumByteCount {
            throw ReplicaError(
                .invalidItem,
                "activity '\(persistentIdentifier)' holds \(size) bytes of title, keywords and attributes; "
                    + "the limit is \(SearchableItem.maximumByteCount) bytes. Shorten them.")
        }
    }
}

extension UserActivity {
    /// Reads an activity from one line of `replica activities donate`:
    /// `{"activityType", "persistentIdentifier", "title", "relatedUniqueIdentifier", "keywords": […],
    /// "date": ISO 8601, "eligibleForSearch": true, "eligibleForPrediction": false, "attributes": {…},
    /// "entity": {"type", "id"}}`.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidItem` naming the field at fault.
    public init(json: JSON) throws {
        guard json.objectValue != nil else {
            throw ReplicaError(.invalidItem, "each line must be a JSON object, not \(json.kindDescription)")
        }
        func string(_ name: String, required: Bool = false) throws -> String? {
            guard let value = json[name], !value.isNull else {
                if required { throw ReplicaError(.invalidItem, "an activity needs \"\(name)\", a string") }
                return nil
            }
            guard let text = value.stringValue else {
                throw ReplicaError(.invalidItem, "activity \"\(name)\" must be a string")
            }
            return text
        }
        func flag(_ name: String, _ fallback: Bool) throws -> Bool {
            guard let value = json[name], !value.isNull else { return fallback }
            guard let flag = value.boolValue else {
                throw ReplicaError(.invalidItem, "activity \"\(name)\" must be true or false")
            }
            return flag
        }
        let persistent = try string("persistentIdentifier", required: true) ?? ""
        var date: Date?
        if let text = try string("date") {
            guard let parsed = ISO8601.date(from: text) else {
                throw ReplicaError(.invalidItem, "activity '\(persistent)': date must be ISO 8601")
            }
            date = parsed
        }
        var keywords: [String] = []
        if let value = json["keywords"], !value.isNull {
            guard let list = value.arrayValue?.compactMap(\.stringValue), list.count == value.arrayValue?.count else {
                throw ReplicaError(.invalidItem, "activity '\(persistent)': keywords must be an array of strings")
            }
            keywords = list
        }
        var attributes: AttributeSet?
        if let value = json["attributes"], !value.isNull {
            do { attributes = try AttributeSet(json: value) } catch let error as ReplicaError {
                throw ReplicaError(.invalidItem, "activity '\(persistent)': \(error.message)")
            }
        }
        var entity: EntityReference?
        if let value = json["entity"], !value.isNull {
            guard let type = value["type"]?.stringValue, let id = value["id"]?.stringValue else {
                throw ReplicaError(.invalidItem, "activity '\(persistent)': entity must be {\"type\": …, \"id\": …}")
            }
            entity = EntityReference(typeName: type, id: id)
        }
        self.init(
            activityType: try string("activityType", required: true) ?? "", persistentIdentifier: persistent,
            title: try string("title"),
            relatedUniqueIdentifier: try string("relatedUniqueIdentifier").map(ItemIdentifier.init(rawValue:)),
            keywords: keywords, date: date, isEligibleForSearch: try flag("eligibleForSearch", true),
            isEligibleForPrediction: try flag("eligibleForPrediction", false), attributeSet: attributes, entity: entity)
        try validate()
    }
}

/// How engagement (recent, repeated views of an item) counts in ranking.
///
/// An item's engagement is `recency × frequency`, from 0 to 1: recency halves every
/// ``halfLife`` (7 days) since the last view, and frequency is `min(1, log2(1 + views) / 4)` (one view
/// counts a quarter, three half, fifteen or more fully). A search adds ``weight`` × engagement (at most
/// 0.05) to the item's score of 0 to 1: an engaged item can pass only matches that score less than 0.05
/// above it, never a clearly better one.
public enum Engagement {
    /// How long it takes a view's weight to halve.
    public static let halfLife: TimeInterval = 7 * 24 * 3600
    /// The most a search adds to a score for engagement.
    public static let weight = 0.05

    /// Engagement from the last view and the number of views, at `now`.
    public static func value(lastViewed: Date, views: Int, now: Date) -> Double {
        let age = max(0, now.timeIntervalSince(lastViewed))
        let recency = pow(0.5, age / halfLife)
        let frequency = min(1, log2(1 + Double(max(views, 1))) / 4)
        return recency * frequency
    }
}
