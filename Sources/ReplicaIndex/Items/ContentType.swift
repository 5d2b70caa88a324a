import Foundation
import ReplicaCore

/// A uniform type identifier such as `public.plain-text`, and the types it conforms to.
///
/// Types form a hierarchy: a filter on `public.text` matches `public.plain-text`,
/// `net.daringfireball.markdown`, `public.html`, `public.email-message` and everything else under it.
/// An item may bring its own `contentTypeTree` for types replica does not know; otherwise the tree
/// comes from the table below.
///
/// For example:
/// ```swift
/// ContentType.markdown.conforms(to: .text)        // true
/// ContentType("com.example.recipe").tree          // ["com.example.recipe", "public.item"]
/// ```
public struct ContentType: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The type identifier, such as `public.plain-text`.
    public let rawValue: String

    /// Creates a content type from its identifier.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates a content type from its identifier.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// Creates a content type from a string literal holding its identifier.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// The type identifier.
    public var description: String { rawValue }

    /// The root of the hierarchy, which every type conforms to (`public.item`).
    public static let item: ContentType = "public.item"
    /// Any content a person reads, views or listens to (`public.content`).
    public static let content: ContentType = "public.content"
    /// Any stream of bytes (`public.data`).
    public static let data: ContentType = "public.data"
    /// Any text (`public.text`).
    public static let text: ContentType = "public.text"
    /// Text without markup (`public.plain-text`).
    public static let plainText: ContentType = "public.plain-text"
    /// Plain text in UTF-8 (`public.utf8-plain-text`).
    public static let utf8PlainText: ContentType = "public.utf8-plain-text"
    /// An HTML document (`public.html`).
    public static let html: ContentType = "public.html"
    /// An XML document (`public.xml`).
    public static let xml: ContentType = "public.xml"
    /// A JSON document (`public.json`).
    public static let json: ContentType = "public.json"
    /// A YAML document (`public.yaml`).
    public static let yaml: ContentType = "public.yaml"
    /// A Markdown document (`net.daringfireball.markdown`).
    public static let markdown: ContentType = "net.daringfireball.markdown"
    /// A reStructuredText document (`org.docutils.restructuredtext`).
    public static let restructuredText: ContentType = "org.docutils.restructuredtext"
    /// Source code in any language (`public.source-code`).
    public static let sourceCode: ContentType = "public.source-code"
    /// A script, such as a shell or Python script (`public.script`).
    public static let script: ContentType = "public.script"
    /// Any message (`public.message`).
    public static let message: ContentType = "public.message"
    /// A mail message (`public.email-message`).
    public static let emailMessage: ContentType = "public.email-message"
    /// A mailbox in mbox format (`com.apple.mail.mbox`).
    public static let mbox: ContentType = "com.apple.mail.mbox"
    /// A calendar event (`public.calendar-event`).
    public static let calendarEvent: ContentType = "public.calendar-event"
    /// A to-do item (`public.to-do-item`).
    public static let task: ContentType = "public.to-do-item"
    /// A contact card (`public.contact`).
    public static let contact: ContentType = "public.contact"
    /// An image (`public.image`).
    public static let image: ContentType = "public.image"
    /// A video (`public.movie`).
    public static let movie: ContentType = "public.movie"
    /// An audio recording or track (`public.audio`).
    public static let audio: ContentType = "public.audio"
    /// A recording of speech, such as a voice memo or a voicemail.
    public static let voiceAudio: ContentType = "public.voice-audio"
    /// A chat or SMS message.
    public static let instantMessage: ContentType = "public.instant-message"
    /// A folder (`public.folder`).
    public static let folder: ContentType = "public.folder"

    /// Each known type and the type it directly conforms to (some have two).
    static let parents: [String: [String]] = {
        var table: [String: [String]] = [
            "public.content": ["public.item"],
            "public.data": ["public.item"],
            "public.text": ["public.content", "public.data"],
            "public.plain-text": ["public.text"],
            "public.utf8-plain-text": ["public.plain-text"],
            "public.utf16-plain-text": ["public.plain-text"],
            "public.html": ["public.text"],
            "public.xml": ["public.text"],
            "public.json": ["public.text"],
            "public.yaml": ["public.text"],
            "public.comma-separated-values-text": ["public.text"],
            "public.rtf": ["public.text"],
            "net.daringfireball.markdown": ["public.plain-text"],
            "org.docutils.restructuredtext": ["public.plain-text"],
            "public.log": ["public.plain-text"],
            "public.source-code": ["public.plain-text"],
            "public.script": ["public.source-code"],
            "public.message": ["public.content"],
            "public.email-message": ["public.message", "public.text"],
            "com.apple.mail.mbox": ["public.email-message"],
            "public.instant-message": ["public.message", "public.text"],
            "public.calendar-event": ["public.content"],
            "public.to-do-item": ["public.content"],
            "public.contact": ["public.content"],
            "public.image": ["public.content", "public.data"],
            "public.audiovisual-content": ["public.content", "public.data"],
            "public.movie": ["public.audiovisual-content"],
            "public.audio": ["public.audiovisual-content"],
            "public.voice-audio": ["public.audio"],
            "public.folder": ["public.item"],
            "public.archive": ["public.data"],
            "com.adobe.pdf": ["public.content", "public.data"],
        ]
        for source in [
            "public.c-source", "public.c-header", "public.c-plus-plus-source", "public.swift-source",
            "public.objective-c-source", "com.sun.java-source", "public.rust-source", "public.go-source",
            "public.css", "public.assembly-source", "public.make-source",
        ] {
            table[source] = ["public.source-code"]
        }
        for script in [
            "public.shell-script", "public.python-script", "public.ruby-script", "public.perl-script",
            "com.netscape.javascript-source", "public.php-script", "public.lua-script",
        ] {
            table[script] = ["public.script"]
        }
        return table
    }()

    /// This type and every type it conforms to, most specific first.
    public var tree: [String] {
        Self.knownTrees[rawValue] ?? Self.computeTree(rawValue)
    }

    /// The trees of the known types, worked out once.
    private static let knownTrees: [String: [String]] = {
        var trees: [String: [String]] = [:]
        for name in parents.keys { trees[name] = computeTree(name) }
        trees[item.rawValue] = computeTree(item.rawValue)
        return trees
    }()

    private static func computeTree(_ rawValue: String) -> [String] {
        var result: [String] = []
        var queue = [rawValue]
        while !queue.isEmpty {
            let next = queue.removeFirst()
            guard !result.contains(next) else { continue }
            result.append(next)
            queue.append(contentsOf: parents[next] ?? [])
        }
        if !result.contains(item.rawValue) { result.append(item.rawValue) }
        return result
    }

    /// A tree as an index stores it (`content_types.tree`): the names with a space on each side of each,
    /// so a filter finds a type in it with `instr(tree, ' name ')`.
    package static func storedTree(_ tree: [String]) -> String {
        " " + tree.joined(separator: " ") + " "
    }

    /// Whether this type is `other` or lies under it.
    public func conforms(to other: ContentType) -> Bool { tree.contains(other.rawValue) }

    /// Whether replica's table knows this type.
    public var isKnown: Bool { Self.parents[rawValue] != nil || self == .item }
}
