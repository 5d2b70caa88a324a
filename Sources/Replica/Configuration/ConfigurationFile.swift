public import Foundation
import ReplicaEmbedding

/// replica's configuration file: JSON with `//` and `/* */` comments (see `config/README.md`).
///
/// For example:
/// ```swift
/// let configuration = try ConfigurationFile.load(from: URL(fileURLWithPath: "config.json"))
/// let engine = ProjectionEngine(store: store, projections: configuration.projections)
/// ```
public struct ConfigurationFile: Sendable {
    /// How records become items.
    public var projections = ProjectionSet(indexName: Store.defaultIndexName)
    /// Tables of apps' own databases to follow through triggers.
    public var followedTables: [FollowedTable] = []
    /// Who writes summaries and classifies priority, and who "me" is in each account (`enrichment`).
    public var enrichment = Enrichment()
    /// The sentence-embedding model semantic search runs (`model`): an ``EmbeddingModel``'s name, or
    /// `off`; `nil` for ``EmbeddingModel/default``. `REPLICA_MODEL` goes before it.
    public var model: String?

    /// The `enrichment` setting: each enricher built in, off, or a program speaking the plugin protocol
    /// (``ExecEnricher``), and each account's own names and addresses.
    public struct Enrichment: Sendable {
        /// One enricher's choice.
        public enum Choice: Sendable, Equatable {
            /// The built-in one (``ExtractiveSummarizer``, ``RuleBasedPriorityClassifier``).
            case builtIn
            /// None: that enrichment is off.
            case off
            /// A program and its arguments.
            case program([String])
        }

        /// Who writes summaries.
        public var summarizer = Choice.builtIn
        /// Who classifies priority.
        public var priority = Choice.builtIn
        /// Each account's own names and addresses, for "sent to me".
        public var me: [AccountID: [String]] = [:]
        /// The longest wait for a program's answer, in seconds.
        public var timeout: TimeInterval = 60

        /// The defaults: both built-in, no "me".
        public init() {}

        /// Applies these choices to a store's enrichment settings.
        public func apply(to configuration: inout EnrichmentConfiguration) {
            // One program named for both is one process: a model behind it loads once.
            var programs: [[String]: ExecEnricher] = [:]
            func program(_ command: [String]) -> ExecEnricher {
                if let running = programs[command] { return running }
                let enricher = ExecEnricher(command: command, timeout: timeout)
                programs[command] = enricher
                return enricher
            }
            switch summarizer {
            case .builtIn: configuration.summarizer = ExtractiveSummarizer()
            case .off: configuration.summarizer = nil
            case .program(let command): configuration.summarizer = program(command)
            }
            switch priority {
            case .builtIn: configuration.priorityClassifier = RuleBasedPriorityClassifier()
            case .off: configuration.priorityClassifier = nil
            case .program(let command): configuration.priorityClassifier = program(command)
            }
            let me = self.me
            configuration.me = { account in me[account] ?? [] }
        }
    }

    /// Makes the defaults: no declared projections, records projected into the default index, no followed tables.
    public init() {}

    /// Where the configuration lives when no store is named: `$XDG_CONFIG_HOME/replica`, or
    /// `~/.config/replica`.
    public static var defaultDirectory: URL {
        URL(fileURLWithPath: FileSystem.defaultConfigDirectory())
    }

    /// Reads a configuration file; a file that does not exist gives the defaults.
    ///
    /// - Throws: `ReplicaError` with code `invalidConfiguration` saying which file, where and what is wrong.
    public static func load(from url: URL) throws -> ConfigurationFile {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            if FileManager.default.fileExists(atPath: url.path) {
                throw ReplicaError(.invalidConfiguration, "\(url.path): cannot be read")
            }
            return ConfigurationFile()
        }
        do {
            return try parse(String(decoding: data, as: UTF8.self), relativeTo: url.deletingLastPathComponent())
        } catch let error as ReplicaError {
            throw ReplicaError(.invalidConfiguration, "\(url.path): \(error.message)")
        }
    }

    /// Reads a configuration from its text; relative paths in it are taken from `base`.
    public static func parse(_ text: String, relativeTo base: URL = URL(fileURLWithPath: ".")) throws
        -> ConfigurationFile
    {
        let json: JSON
        do {
            json = try JSON.parse(text, allowComments: true)
        } catch let error as JSONParseError {
            let line = text.utf8.prefix(error.column - 1).filter { $0 == 0x0A }.count + 1
            throw ReplicaError(.invalidConfiguration, "not valid JSON on line \(line): \(error.reason)")
        }
        guard let members = json.objectValue else {
            throw ReplicaError(.invalidConfiguration, "the configuration must be a JSON object")
        }
        var configuration = ConfigurationFile()
        for (key, value) in members {
            switch key {
            case "index":
                guard let name = value.stringValue else { throw invalid("'index' must be the name of an index") }
                try Store.validateIndexName(name)
                configuration.projections.indexName = name
            case "projections":
                guard let kinds = value.objectValue else {
                    throw invalid("'projections' must be an object of record kinds")
                }
                for (kind, declaration) in kinds {
                    configuration.projections.projections[kind] = try projection(kind: kind, from: declaration)
                }
            case "follow":
                guard let tables = value.arrayValue else { throw invalid("'follow' must be a list of tables") }
                configuration.followedTables = try tables.map {
                    try FollowedTable.fromConfiguration($0, relativeTo: base)
                }
            case "enrichment":
                configuration.enrichment = try enrichment(from: value)
            case "watch":
                break  // accepted; nothing reads it yet
            case "model":
                let names = EmbeddingModel.allCases.map(\.rawValue) + ["off"]
                guard let name = value.stringValue, names.contains(name) else {
                    throw invalid("'model' must be one of " + names.map { "\"\($0)\"" }.joined(separator: ", "))
                }
                configuration.model = name
            default:
                throw invalid(
                    "unknown setting '\(key)'; the settings are index, projections, follow, enrichment, model and watch"
                )
            }
        }
        return configuration
    }

    private static func enrichment(from json: JSON) throws -> Enrichment {
        guard let members = json.objectValue else { throw invalid("'enrichment' must be an object") }
        var enrichment = Enrichment()
        func choice(_ value: JSON, _ name: String) throws -> Enrichment.Choice {
            switch value {
            case .string("builtin"): return .builtIn
            case .string("off"): return .off
            case .array(let parts) where !parts.isEmpty && parts.allSatisfy({ $0.stringValue?.isEmpty == false }):
                return .program(parts.compactMap(\.stringValue))
            default:
                throw invalid(
                    "'enrichment': '\(name)' must be \"builtin\", \"off\", or a program and its arguments as a list of strings, such as [\"/usr/local/bin/summarize-thread\", \"--model\", \"small\"]"
                )
            }
        }
        for (key, value) in members {
            switch key {
            case "summarizer": enrichment.summarizer = try choice(value, key)
            case "priority": enrichment.priority = try choice(value, key)
            case "timeout":
                guard let seconds = duration(value), seconds > 0, seconds <= 86_400 else {
                    throw invalid(
                        "'enrichment': 'timeout' must be a duration up to a day, such as \"90s\" or a number of seconds"
                    )
                }
                enrichment.timeout = seconds
            case "me":
                guard let accounts = value.objectValue else {
                    throw invalid("'enrichment': 'me' must map account identifiers to lists of names and addresses")
                }
                for (account, names) in accounts {
                    let id = AccountID(account)
                    do { try id.validate() } catch let error as ReplicaError {
                        throw invalid("'enrichment': 'me': \(error.message)")
                    }
                    guard let list = names.arrayValue, list.allSatisfy({ $0.stringValue != nil }) else {
                        throw invalid(
                            "'enrichment': 'me': account '\(account)' needs a list of names and addresses, such as [\"ada@example.com\", \"Ada Lovelace\"]"
                        )
                    }
                    enrichment.me[id] = list.compactMap(\.stringValue)
                }
            default:
                throw invalid(
                    "'enrichment' has an unknown setting '\(key)'; the settings are summarizer, priority, timeout and me"
                )
            }
        }
        return enrichment
    }

    private static func invalid(_ message: String) -> ReplicaError {
        ReplicaError(.invalidConfiguration, message)
    }

    private static func projection(kind: String, from json: JSON) throws -> Projection {
        do { try Record.validateKind(kind) } catch let error as ReplicaError { throw invalid(error.message) }
        guard let members = json.objectValue else { throw invalid("projection '\(kind)' must be an object") }
        var projection = Projection.default(for: kind)
        for (key, value) in members {
            let place = "projection '\(kind)': '\(key)'"
            switch key {
            case "version":
                guard let version = value.intValue, version >= 1 else {
                    throw invalid("\(place) must be a whole number from 1")
                }
                projection.version = version
            case "contentType":
                guard let type = value.stringValue, !type.isEmpty else {
                    throw invalid("\(place) must be a type identifier such as public.plain-text")
                }
                projection.contentType = ContentType(type)
            case "expiresAfter":
                guard let seconds = duration(value) else {
                    throw invalid(
                        "\(place) must be a duration such as \"30d\", \"12h\", \"90m\" or a number of seconds")
                }
                projection.lifetime = seconds
            case "identifier":
                guard let template = value.stringValue, template.contains("{id}") else {
                    throw invalid("\(place) must be a template containing {id}, such as \"{kind}:{account}:{id}\"")
                }
                projection.identifierTemplate = template
            case "attributes":
                guard let mapping = value.objectValue else {
                    throw invalid("\(place) must map attribute names to field names")
                }
                projection.attributes = try mapping.map { attribute, fields in
                    if let field = fields.stringValue { return (AttributeKey(attribute), [field]) }
                    if let list = fields.arrayValue, !list.isEmpty, list.allSatisfy({ $0.stringValue != nil }) {
                        return (AttributeKey(attribute), list.compactMap(\.stringValue))
                    }
                    throw invalid("\(place): attribute '\(attribute)' needs a field name or a list of field names")
                }
            default:
                throw invalid(
                    "projection '\(kind)' has an unknown setting '\(key)'; the settings are version, contentType, expiresAfter, identifier and attributes"
                )
            }
        }
        return projection
    }

    /// `"30d"`, `"12h"`, `"90m"`, `"45s"` or a number of seconds.
    static func duration(_ value: JSON) -> TimeInterval? {
        if let seconds = value.doubleValue, seconds > 0 { return seconds }
        guard let text = value.stringValue, let unit = text.last, let number = Double(text.dropLast()), number > 0
        else { return nil }
        switch unit {
        case "d": return number * 86_400
        case "h": return number * 3_600
        case "m": return number * 60
        case "s": return number
        default: return nil
        }
    }
}
