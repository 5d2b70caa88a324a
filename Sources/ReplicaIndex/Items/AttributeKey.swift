import Foundation
import ReplicaCore

/// The name of an attribute of a searchable item: a Core Spotlight system key or a custom one.
///
/// System keys use Core Spotlight's names (`title`, `textContent`, `contentModificationDate`, …) and have a
/// fixed kind of value; custom keys (use a reverse-DNS name such as `com.example.chef`) take any kind.
///
/// For example:
/// ```swift
/// var attributes = AttributeSet(contentType: .plainText)
/// attributes[.title] = .text("Launch plan")
/// attributes[AttributeKey("com.example.chef")] = .text("Ada")
/// ```
public struct AttributeKey: RawRepresentable, Hashable, Comparable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }

    public static func < (lhs: AttributeKey, rhs: AttributeKey) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The kind of value a system key takes, or `nil` for a custom key.
    public var kind: AttributeValue.Kind? { Self.systemKinds[self] }

    /// Whether this is one of Core Spotlight's system keys.
    public var isSystem: Bool { kind != nil }

    // MARK: Names and descriptions
    public static let title: AttributeKey = "title"
    public static let displayName: AttributeKey = "displayName"
    public static let alternateNames: AttributeKey = "alternateNames"
    public static let contentDescription: AttributeKey = "contentDescription"
    public static let textContent: AttributeKey = "textContent"
    public static let keywords: AttributeKey = "keywords"
    public static let subject: AttributeKey = "subject"
    public static let headline: AttributeKey = "headline"
    public static let comment: AttributeKey = "comment"
    public static let information: AttributeKey = "information"
    public static let identifier: AttributeKey = "identifier"
    public static let kindName: AttributeKey = "kind"
    public static let version: AttributeKey = "version"
    public static let language: AttributeKey = "language"
    public static let copyright: AttributeKey = "copyright"
    public static let genre: AttributeKey = "genre"

    // MARK: Type
    public static let contentType: AttributeKey = "contentType"
    public static let contentTypeTree: AttributeKey = "contentTypeTree"

    // MARK: Dates
    public static let contentCreationDate: AttributeKey = "contentCreationDate"
    public static let contentModificationDate: AttributeKey = "contentModificationDate"
    public static let addedDate: AttributeKey = "addedDate"
    public static let lastUsedDate: AttributeKey = "lastUsedDate"
    public static let downloadedDate: AttributeKey = "downloadedDate"
    public static let dueDate: AttributeKey = "dueDate"
    public static let completionDate: AttributeKey = "completionDate"
    public static let startDate: AttributeKey = "startDate"
    public static let endDate: AttributeKey = "endDate"

    // MARK: People
    public static let authors: AttributeKey = "authors"
    public static let authorNames: AttributeKey = "authorNames"
    public static let authorEmailAddresses: AttributeKey = "authorEmailAddresses"
    public static let recipients: AttributeKey = "recipients"
    public static let recipientNames: AttributeKey = "recipientNames"
    public static let recipientEmailAddresses: AttributeKey = "recipientEmailAddresses"
    public static let primaryRecipients: AttributeKey = "primaryRecipients"
    public static let additionalRecipients: AttributeKey = "additionalRecipients"
    public static let participants: AttributeKey = "participants"
    public static let creator: AttributeKey = "creator"
    public static let editors: AttributeKey = "editors"
    public static let emailAddresses: AttributeKey = "emailAddresses"
    public static let phoneNumbers: AttributeKey = "phoneNumbers"
    public static let organizations: AttributeKey = "organizations"
    public static let projects: AttributeKey = "projects"

    // MARK: Places and files
    public static let path: AttributeKey = "path"
    public static let url: AttributeKey = "url"
    public static let contentURL: AttributeKey = "contentURL"
    public static let namedLocation: AttributeKey = "namedLocation"
    public static let city: AttributeKey = "city"
    public static let stateOrProvince: AttributeKey = "stateOrProvince"
    public static let country: AttributeKey = "country"
    public static let latitude: AttributeKey = "latitude"
    public static let longitude: AttributeKey = "longitude"
    public static let altitude: AttributeKey = "altitude"
    public static let fileSize: AttributeKey = "fileSize"
    public static let pageCount: AttributeKey = "pageCount"

    // MARK: Media
    public static let rating: AttributeKey = "rating"
    public static let duration: AttributeKey = "duration"
    public static let artist: AttributeKey = "artist"
    public static let album: AttributeKey = "album"
    public static let composer: AttributeKey = "composer"
    public static let thumbnailData: AttributeKey = "thumbnailData"
    public static let pixelWidth: AttributeKey = "pixelWidth"
    public static let pixelHeight: AttributeKey = "pixelHeight"

    // MARK: Flags
    public static let allDay: AttributeKey = "allDay"

    // MARK: Communications and enrichment
    /// A short summary of a message's thread or a recording, written by enrichment (or by the app).
    public static let textContentSummary: AttributeKey = "textContentSummary"
    /// Whether a message deserves attention, as enrichment classified it (or the app said).
    public static let isPriority: AttributeKey = "isPriority"
    /// The transcript of a recording.
    public static let transcribedTextContent: AttributeKey = "transcribedTextContent"
    /// The HTML body of a mail, as UTF-8 data.
    public static let htmlContentData: AttributeKey = "htmlContentData"

    // MARK: replica's own (kept with items, never shown to a model)
    /// The kind of the record an item was projected from.
    public static let recordKind: AttributeKey = "replica.recordKind"
    /// The id of the record an item was projected from.
    public static let recordID: AttributeKey = "replica.recordID"
    /// What the item asked enrichment for (``UpdateListenerOptions``), as names.
    public static let updateListenerOptions: AttributeKey = "replica.updateListenerOptions"

    /// Whether the key is one of replica's own bookkeeping attributes.
    public var isInternal: Bool { rawValue.hasPrefix("replica.") }

    /// The system keys and the kind of value each takes.
    public static let systemKinds: [AttributeKey: AttributeValue.Kind] = {
        var kinds: [AttributeKey: AttributeValue.Kind] = [:]
        for key: AttributeKey in [.title, .displayName, .contentDescription, .textContent, .subject, .headline, .comment,
                                  .information, .identifier, .kindName, .version, .language, .copyright, .genre,
                                  .contentType, .path, .url, .contentURL, .namedLocation, .city, .stateOrProvince,
                                  .country, .artist, .album, .composer, .creator, .textContentSummary,
                                  .transcribedTextContent] {
            kinds[key] = .text
        }
        for key: AttributeKey in [.alternateNames, .keywords, .contentTypeTree, .authorNames, .authorEmailAddresses,
                                  .recipientNames, .recipientEmailAddresses, .participants, .editors, .emailAddresses,
                                  .phoneNumbers, .organizations, .projects] {
            kinds[key] = .texts
        }
        for key: AttributeKey in [.contentCreationDate, .contentModificationDate, .addedDate, .lastUsedDate,
                                  .downloadedDate, .dueDate, .completionDate, .startDate, .endDate] {
            kinds[key] = .date
        }
        for key: AttributeKey in [.authors, .recipients, .primaryRecipients, .additionalRecipients] {
            kinds[key] = .people
        }
        for key: AttributeKey in [.latitude, .longitude, .altitude, .fileSize, .pageCount, .rating, .duration,
                                  .pixelWidth, .pixelHeight] {
            kinds[key] = .number
        }
        kinds[.thumbnailData] = .data
        kinds[.htmlContentData] = .data
        kinds[.allDay] = .bool
        kinds[.isPriority] = .bool
        return kinds
    }()
}
