import Foundation
import Replica

/// The options `replica tool` and `replica mcp` share: how the search tool is set up.
struct ToolOptions {
    static let guidance = Option.string(
        "--guidance", "LEVEL",
        """
        complete (default), focused:DOMAIN or dynamic:TECHNIQUE,…
        domains: items, documents, communications, calendar, visualMedia, audio
        techniques: textMatch, numericMatch, dates, people, contentType
        """)
    static let attributes = Option.repeatable(
        "--attributes", "NAME,…",
        """
        attributes shown with each result (besides title, snippet, type, dates
        and provenance); with dynamic guidance, also the only ones filters,
        sorts, groups, tables and statistics may name
        """)
    static let format = Option.string("--format", "FORMAT", "structured (default) or compact (one line per result)")
    static let me = Option.string(
        "--me", "NAME,EMAIL,…", "who \"me\" is: a display name, then other names, email addresses and phone\nnumbers")
    static let account = CommonOptions.accounts.help("search only this signed-in account")
    static let language = Option.repeatable(
        "--language", "TAG",
        "the language the person types in (BCP 47: de, pt-BR): the words are\nstemmed for it; by default, the query's own when clear, else English"
    )
    static let exact = Option.flag("--exact", "the words as typed: no words a typo may have meant")
    static let options: [any OptionDeclaration] = [guidance, attributes, format, me, account, language, exact]

    var guide = Guide()
    var attributes: [AttributeKey] = []
    var me: ResolvedContact?
    var accounts: [AccountID] = []
    var languages: [String] = []
    var typoTolerance = true

    /// Reads the options out of `arguments`.
    static func read(_ arguments: inout Arguments) throws -> ToolOptions {
        var options = ToolOptions()
        options.attributes = try arguments[Self.attributes].flatMap(list).map { AttributeKey($0) }
        if let level = try arguments[Self.guidance] {
            options.guide.level = try guidanceLevel(level, attributes: options.attributes)
        }
        if let format = try arguments[Self.format] {
            guard let parsed = FormatLevel(rawValue: format) else {
                throw CLIError.usage("--format is structured or compact, not '\(format)'")
            }
            options.guide.format = parsed
        }
        if let me = try arguments[Self.me] {
            options.me = try contact(list(me))
        }
        options.accounts = try arguments[Self.account].map(ToolCommand.account)
        options.languages = try arguments[Self.language]
        options.typoTolerance = try !arguments[Self.exact]
        return options
    }

    static func guidanceLevel(_ text: String, attributes: [AttributeKey]) throws -> GuidanceLevel {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        switch parts.first {
        case "complete" where parts.count == 1:
            return .complete
        case "focused":
            let name = parts.count == 2 ? parts[1] : "items"
            guard let domain = ContentDomain.named(name) else {
                throw CLIError.usage(
                    "unknown content domain '\(name)'; the domains are "
                        + ContentDomain.Kind.allCases.map(\.rawValue).joined(separator: ", "))
            }
            return .focused(domain)
        case "dynamic":
            var profile = GuidanceProfile(attributes: attributes.isEmpty ? nil : attributes)
            for technique in parts.count == 2 ? list(parts[1]) : [] {
                switch technique {
                case "textMatch": profile.textMatch = true
                case "numericMatch": profile.numericMatch = true
                case "dates": profile.dates = true
                case "people": profile.people = true
                case "contentType": profile.contentType = true
                default:
                    throw CLIError.usage(
                        "unknown technique '\(technique)'; the techniques are textMatch, numericMatch, dates, people, contentType"
                    )
                }
            }
            return .dynamic(profile)
        default:
            throw CLIError.usage("--guidance is complete, focused:DOMAIN or dynamic:TECHNIQUE,…, not '\(text)'")
        }
    }

    /// `Ada Lovelace,Ada,ada@example.com,+44 20 7946 0000`: the first entry is the display name; entries
    /// with `@` are addresses, entries of digits (and `+ -()` and spaces) phone numbers, the rest names.
    static func contact(_ entries: [String]) throws -> ResolvedContact {
        guard let first = entries.first else {
            throw CLIError.usage("--me needs at least a name, as in --me 'Ada Lovelace,ada@example.com'")
        }
        var contact = ResolvedContact(displayName: first)
        for entry in entries.dropFirst() {
            if entry.contains("@") {
                contact.emailAddresses.append(entry)
            } else if entry.contains(where: \.isNumber), entry.allSatisfy({ $0.isNumber || "+-() .".contains($0) }) {
                contact.phoneNumbers.append(entry)
            } else {
                contact.names.append(entry)
            }
        }
        return contact
    }

    static func list(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The tool over `store`, with this command line's options and the configuration file's projections.
    func makeTool(store: Store, context: Context) throws -> SearchTool {
        let file = try context.configuration()
        var configuration = SearchTool.Configuration()
        configuration.guide = guide
        configuration.sources = [
            .index(IndexSource(fetchAttributes: attributes)), .files(FileSource(fetchAttributes: attributes)),
        ]
        configuration.contactResolver = me.map(FixedContactResolver.init)
        configuration.accounts = accounts
        configuration.languages = languages
        configuration.typoTolerance = typoTolerance
        configuration.hydration = Hydration(
            projections: file.projections, followedTables: file.followedTables,
            sourceResolver: CommandSourceResolver(store: store))
        return SearchTool(store: store, configuration: configuration)
    }
}

/// Lets hydration ask the sources this build knows about their items.
struct CommandSourceResolver: SourceResolver {
    let store: Store

    func source(for definition: SourceDefinition) throws -> any Source {
        try SourceRegistry.builtIn.makeSource(for: definition, store: store)
    }
}
