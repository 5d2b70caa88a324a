import Foundation

/// How much of the search tool a model is shown: every technique, one content domain, or a profile's
/// techniques; and how results are written. The schema and description the model sees shrink to what the
/// guidance allows.
///
/// For example:
/// ```swift
/// let guide = Guide.focused(.communications)                 // small, for on-device models
/// let lean = Guide(level: .complete, format: .compact)
/// let textOnly = Guide.dynamic(GuidanceProfile(textMatch: true, dates: true))
/// ```
public struct Guide: Sendable, Equatable {
    /// What the model may use.
    public var level: GuidanceLevel
    /// How results are written for the model.
    public var format: FormatLevel

    /// Makes a guide; by default every technique, with results written as structured JSON.
    public init(level: GuidanceLevel = .complete, format: FormatLevel = .structured) {
        self.level = level
        self.format = format
    }

    /// Every technique, every content type.
    public static var complete: Guide { Guide(level: .complete) }

    /// One content domain's fields only, with a compact schema for small models.
    public static func focused(_ domain: ContentDomain = .items) -> Guide { Guide(level: .focused(domain)) }

    /// Only the techniques the profile enables.
    public static func dynamic(_ profile: GuidanceProfile) -> Guide { Guide(level: .dynamic(profile)) }
}

/// What the model may use.
public enum GuidanceLevel: Sendable, Equatable {
    /// Every technique: words, filters on types, dates, people and attributes, and pipelines of stages.
    case complete
    /// One content domain: its fields (sender, date, …) mapped to attributes; no pipelines.
    case focused(ContentDomain)
    /// Only the techniques switched on.
    case dynamic(GuidanceProfile)
}

/// How results are written for the model.
public enum FormatLevel: String, Sendable, Equatable {
    /// A JSON object per call: every result with its title, snippet, type, dates and provenance.
    case structured
    /// One line per result: identifier, title, date, snippet; for small context windows.
    case compact
}

/// The techniques a dynamic guide enables. Unset means off.
public struct GuidanceProfile: Sendable, Equatable {
    /// Text comparisons on attributes (`contains`, `startsWith`, `=` on text) in filters. Words in
    /// `query` are always searched.
    public var textMatch: Bool
    /// Comparisons on numeric attributes (`<`, `>=`, …).
    public var numericMatch: Bool
    /// Creation and modification date ranges.
    public var dates: Bool
    /// Authors and recipients (and "me", with a contact resolver).
    public var people: Bool
    /// Content-type filters.
    public var contentType: Bool
    /// The attributes filters, sorts, groups, tables and statistics may name; `nil` allows all.
    public var attributes: [AttributeKey]?

    /// Makes a profile with the given techniques on; every one is off unless set.
    ///
    /// - Parameters:
    ///   - textMatch: whether the model may match text attributes.
    ///   - numericMatch: whether it may compare numbers.
    ///   - dates: whether it may give creation and modification date ranges.
    ///   - people: whether it may name authors and recipients.
    ///   - contentType: whether it may filter by content type.
    ///   - attributes: The attributes the model may name; `nil` allows all.
    public init(
        textMatch: Bool = false, numericMatch: Bool = false, dates: Bool = false, people: Bool = false,
        contentType: Bool = false, attributes: [AttributeKey]? = nil
    ) {
        self.textMatch = textMatch
        self.numericMatch = numericMatch
        self.dates = dates
        self.people = people
        self.contentType = contentType
        self.attributes = attributes
    }

    /// Every technique on.
    static let all = GuidanceProfile(textMatch: true, numericMatch: true, dates: true, people: true, contentType: true)
}

/// A kind of content a focused guide is about, with its fields mapped to attributes.
///
/// For example:
/// ```swift
/// var mail = ContentDomain.communications
/// mail.fields["from"] = [.authorNames, .authorEmailAddresses, AttributeKey("com.example.sender")]
/// ```
public struct ContentDomain: Sendable, Equatable {
    /// The content domains there are, named as ``named(_:)`` takes them.
    public enum Kind: String, Sendable, CaseIterable {
        /// Any kind of item (``ContentDomain/items``).
        case items
        /// Text and page documents (``ContentDomain/documents``).
        case documents
        /// Messages (``ContentDomain/communications``).
        case communications
        /// Calendar events and tasks (``ContentDomain/calendar``).
        case calendar
        /// Images and movies (``ContentDomain/visualMedia``).
        case visualMedia
        /// Audio (``ContentDomain/audio``).
        case audio
    }

    /// Which domain this is; its name appears in the tool's description.
    public var kind: Kind
    /// The domain's fields, each with the attributes it searches; the first date attribute of a date field
    /// is the one its range applies to.
    public var fields: [String: [AttributeKey]]
    /// What each field holds, for the schema.
    var fieldKinds: [String: FieldKind]
    /// Content types the domain is about (`nil`: any).
    public var contentTypes: [ContentType]?

    enum FieldKind: Sendable, Equatable {
        case text, person, dateRange
    }

    /// Any kind of item: its title and creation and modification dates.
    public static var items: ContentDomain {
        ContentDomain(
            kind: .items,
            fields: [
                "title": [.title, .displayName], "created": [.contentCreationDate],
                "modified": [.contentModificationDate],
            ],
            fieldKinds: ["title": .text, "created": .dateRange, "modified": .dateRange], contentTypes: nil)
    }

    /// Text and page documents (plain text, markup, data files, RTF, PDF): authors, keywords and dates.
    public static var documents: ContentDomain {
        ContentDomain(
            kind: .documents,
            fields: [
                "authors": [.authorNames, .authors], "keywords": [.keywords],
                "created": [.contentCreationDate], "modified": [.contentModificationDate],
            ],
            fieldKinds: ["authors": .person, "keywords": .text, "created": .dateRange, "modified": .dateRange],
            // Text and page documents: plain text (Markdown, source code, logs…), markup, PDF; not messages.
            contentTypes: [
                .plainText, .html, .xml, .json, .yaml, "public.comma-separated-values-text", "public.rtf",
                "com.adobe.pdf",
            ])
    }

    /// Messages: sender, recipients, sent and received dates, and topic.
    public static var communications: ContentDomain {
        ContentDomain(
            kind: .communications,
            fields: [
                "from": [.authorNames, .authors, .authorEmailAddresses],
                "to": [.recipientNames, .recipients, .recipientEmailAddresses],
                "sent": [.contentCreationDate], "received": [.contentModificationDate],
                "topic": [.subject, .title],
            ],
            fieldKinds: ["from": .person, "to": .person, "sent": .dateRange, "received": .dateRange, "topic": .text],
            contentTypes: [.message])
    }

    /// Calendar events and tasks: organizer, attendees, location and date.
    public static var calendar: ContentDomain {
        ContentDomain(
            kind: .calendar,
            fields: [
                "organizer": [.authorNames, .authors], "attendees": [.participants, .recipientNames],
                "location": [.namedLocation, .city, .stateOrProvince], "date": [.startDate, .dueDate],
            ],
            fieldKinds: ["organizer": .person, "attendees": .person, "location": .text, "date": .dateRange],
            contentTypes: [.calendarEvent, .task])
    }

    /// Images and movies: people, description, location and date.
    public static var visualMedia: ContentDomain {
        ContentDomain(
            kind: .visualMedia,
            fields: [
                "people": [.authorNames, .participants], "description": [.contentDescription, .title],
                "location": [.namedLocation, .city], "date": [.contentCreationDate],
            ],
            fieldKinds: ["people": .person, "description": .text, "location": .text, "date": .dateRange],
            contentTypes: [.image, .movie])
    }

    /// Audio: artist, album, transcription and date.
    public static var audio: ContentDomain {
        ContentDomain(
            kind: .audio,
            fields: [
                "artist": [.artist], "album": [.album], "transcription": [.textContent], "date": [.contentCreationDate],
            ],
            fieldKinds: ["artist": .text, "album": .text, "transcription": .text, "date": .dateRange],
            contentTypes: [.audio])
    }

    /// The domain named `name` (`items`, `documents`, `communications`, `calendar`, `visualMedia`, `audio`).
    public static func named(_ name: String) -> ContentDomain? {
        switch Kind(rawValue: name) {
        case .items?: return .items
        case .documents?: return .documents
        case .communications?: return .communications
        case .calendar?: return .calendar
        case .visualMedia?: return .visualMedia
        case .audio?: return .audio
        case nil: return nil
        }
    }
}
