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
public struct AttributeKey: RawRepresentable, Hashable, Comparable, Sendable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    /// The key's name, as Core Spotlight spells it for a system key.
    public let rawValue: String

    /// Creates a key from its name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates a key from its name.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// Creates a key from a string literal naming it.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// The key's name.
    public var description: String { rawValue }

    /// Orders keys by name.
    public static func < (lhs: AttributeKey, rhs: AttributeKey) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The kind of value a system key takes, or `nil` for a custom key.
    public var kind: AttributeValue.Kind? { Self.systemKinds[self] }

    /// Whether this is one of Core Spotlight's system keys.
    public var isSystem: Bool { kind != nil }

    // MARK: Names and descriptions
    /// The title of the item.
    public static let title: AttributeKey = "title"
    /// The name to show for the item.
    public static let displayName: AttributeKey = "displayName"
    /// Other names the item goes by.
    public static let alternateNames: AttributeKey = "alternateNames"
    /// A description of the item's content.
    public static let contentDescription: AttributeKey = "contentDescription"
    /// The full text of the item's content.
    public static let textContent: AttributeKey = "textContent"
    /// Keywords that describe the item.
    public static let keywords: AttributeKey = "keywords"
    /// The subject of the item, such as a mail's subject line.
    public static let subject: AttributeKey = "subject"
    /// A headline for the item.
    public static let headline: AttributeKey = "headline"
    /// A comment about the item.
    public static let comment: AttributeKey = "comment"
    /// Information about the item.
    public static let information: AttributeKey = "information"
    /// A formal identifier of the item's content, such as an ISBN (not the item's ``ItemIdentifier``).
    public static let identifier: AttributeKey = "identifier"
    /// A description of the kind of item, as a person would read it (Core Spotlight's `kind`).
    public static let kindName: AttributeKey = "kind"
    /// The version of the item's content.
    public static let version: AttributeKey = "version"
    /// The language of the item's content.
    public static let language: AttributeKey = "language"
    /// The copyright statement for the item's content.
    public static let copyright: AttributeKey = "copyright"
    /// The genre of the item's content.
    public static let genre: AttributeKey = "genre"

    // MARK: Type
    /// The uniform type identifier of the item's content, such as `public.plain-text`.
    public static let contentType: AttributeKey = "contentType"
    /// The item's content type and every type it conforms to, most specific first.
    public static let contentTypeTree: AttributeKey = "contentTypeTree"

    // MARK: Dates
    /// The date the item's content was created.
    public static let contentCreationDate: AttributeKey = "contentCreationDate"
    /// The date the item's content was last changed.
    public static let contentModificationDate: AttributeKey = "contentModificationDate"
    /// The date the item was added, such as to a library or a folder.
    public static let addedDate: AttributeKey = "addedDate"
    /// The date the item was last opened or used.
    public static let lastUsedDate: AttributeKey = "lastUsedDate"
    /// The date the item was downloaded.
    public static let downloadedDate: AttributeKey = "downloadedDate"
    /// The date the item, such as a task or a bill, is due.
    public static let dueDate: AttributeKey = "dueDate"
    /// The date the item, such as a task, was completed.
    public static let completionDate: AttributeKey = "completionDate"
    /// The date the item, such as an event, starts.
    public static let startDate: AttributeKey = "startDate"
    /// The date the item, such as an event, ends.
    public static let endDate: AttributeKey = "endDate"

    // MARK: People
    /// The people who wrote or sent the item.
    public static let authors: AttributeKey = "authors"
    /// The names of the item's authors.
    public static let authorNames: AttributeKey = "authorNames"
    /// The email addresses of the item's authors.
    public static let authorEmailAddresses: AttributeKey = "authorEmailAddresses"
    /// The people the item, such as a message, was sent to.
    public static let recipients: AttributeKey = "recipients"
    /// The names of the item's recipients.
    public static let recipientNames: AttributeKey = "recipientNames"
    /// The email addresses of the item's recipients.
    public static let recipientEmailAddresses: AttributeKey = "recipientEmailAddresses"
    /// The direct recipients of a message (its To line).
    public static let primaryRecipients: AttributeKey = "primaryRecipients"
    /// The copied recipients of a message (its Cc line).
    public static let additionalRecipients: AttributeKey = "additionalRecipients"
    /// The names of the people who took part in the item, such as a meeting or a call.
    public static let participants: AttributeKey = "participants"
    /// The app or tool that created the item's content; replica also counts it among the item's authors.
    public static let creator: AttributeKey = "creator"
    /// The names of the people who edited the item.
    public static let editors: AttributeKey = "editors"
    /// Email addresses the item mentions or relates to.
    public static let emailAddresses: AttributeKey = "emailAddresses"
    /// Phone numbers the item mentions or relates to.
    public static let phoneNumbers: AttributeKey = "phoneNumbers"
    /// The organizations that made the item or that it concerns.
    public static let organizations: AttributeKey = "organizations"
    /// The names of the projects the item belongs to.
    public static let projects: AttributeKey = "projects"

    // MARK: Places and files
    /// The path of the item's file.
    public static let path: AttributeKey = "path"
    /// The web address of the item.
    public static let url: AttributeKey = "url"
    /// The address of the item's content, such as a file URL.
    public static let contentURL: AttributeKey = "contentURL"
    /// The name of the place the item concerns, such as a venue.
    public static let namedLocation: AttributeKey = "namedLocation"
    /// The city the item concerns.
    public static let city: AttributeKey = "city"
    /// The state or province the item concerns.
    public static let stateOrProvince: AttributeKey = "stateOrProvince"
    /// The country the item concerns.
    public static let country: AttributeKey = "country"
    /// The latitude of the item's location, in degrees.
    public static let latitude: AttributeKey = "latitude"
    /// The longitude of the item's location, in degrees.
    public static let longitude: AttributeKey = "longitude"
    /// The altitude of the item's location, in meters.
    public static let altitude: AttributeKey = "altitude"
    /// The size of the item's file, in bytes.
    public static let fileSize: AttributeKey = "fileSize"
    /// The number of pages in the item's document.
    public static let pageCount: AttributeKey = "pageCount"

    // MARK: Media
    /// The item's rating.
    public static let rating: AttributeKey = "rating"
    /// The length of the item's media, in seconds.
    public static let duration: AttributeKey = "duration"
    /// The artist who performed the item's media.
    public static let artist: AttributeKey = "artist"
    /// The album the item's media belongs to.
    public static let album: AttributeKey = "album"
    /// The composer of the item's music.
    public static let composer: AttributeKey = "composer"
    /// Image data for a thumbnail of the item.
    public static let thumbnailData: AttributeKey = "thumbnailData"
    /// The width of the item's image or video, in pixels.
    public static let pixelWidth: AttributeKey = "pixelWidth"
    /// The height of the item's image or video, in pixels.
    public static let pixelHeight: AttributeKey = "pixelHeight"

    // MARK: Flags
    /// Whether the item, such as an event, lasts all day.
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
        for key: AttributeKey in [
            .title, .displayName, .contentDescription, .textContent, .subject, .headline, .comment,
            .information, .identifier, .kindName, .version, .language, .copyright, .genre,
            .contentType, .path, .url, .contentURL, .namedLocation, .city, .stateOrProvince,
            .country, .artist, .album, .composer, .creator, .textContentSummary,
            .transcribedTextContent,
        ] {
            kinds[key] = .text
        }
        for key: AttributeKey in [
            .alternateNames, .keywords, .contentTypeTree, .authorNames, .authorEmailAddresses,
            .recipientNames, .recipientEmailAddresses, .participants, .editors, .emailAddresses,
            .phoneNumbers, .organizations, .projects,
        ] {
            kinds[key] = .texts
        }
        for key: AttributeKey in [
            .contentCreationDate, .contentModificationDate, .addedDate, .lastUsedDate,
            .downloadedDate, .dueDate, .completionDate, .startDate, .endDate,
        ] {
            kinds[key] = .date
        }
        for key: AttributeKey in [.authors, .recipients, .primaryRecipients, .additionalRecipients] {
            kinds[key] = .people
        }
        for key: AttributeKey in [
            .latitude, .longitude, .altitude, .fileSize, .pageCount, .rating, .duration,
            .pixelWidth, .pixelHeight,
        ] {
            kinds[key] = .number
        }
        kinds[.thumbnailData] = .data
        kinds[.htmlContentData] = .data
        kinds[.allDay] = .bool
        kinds[.isPriority] = .bool
        return kinds
    }()
}
