import Foundation
import Replica
import ReplicaEmbedding
import Synchronization

/// What every command shares: the global options and the store they point at.
struct Context {
    /// `--store DIR`, or `REPLICA_STORE`, or the XDG data directory.
    var storeDirectory: URL
    /// `--database URL`, or `REPLICA_DATABASE`: where the accounts' content is kept (SQLite files in the
    /// store's directory when neither is given).
    var database: Store.Database = .sqlite
    /// `--read-database URL`, or `REPLICA_READ_DATABASE`: a standby of the database that serves searches.
    var readDatabase: Store.ReadDatabase?
    /// `--config FILE`, or `REPLICA_CONFIG`, or `config.json` in the store given by `--store` or
    /// `REPLICA_STORE`, or the XDG configuration directory's `replica/config.json`.
    var configurationFile: URL
    var environment: [String: String]

    /// Reads the configuration file (its absence means the defaults).
    func configuration() throws -> ConfigurationFile {
        try ConfigurationFile.load(from: configurationFile)
    }

    /// Opens the store, printing what it notices (rebuilt indexes, finished sign-outs) as notes; for a
    /// command that enriches (`enriching`), with the configuration file's enrichment settings (which
    /// enrichers, who "me" is), so the others never fail on the configuration file. Semantic
    /// search uses the shipped model when it is installed (loaded at first use); without it, search
    /// answers by the words and `status` says why. A long-running process (`watch`, `mcp`) keeps 8 MiB of
    /// page cache per index connection instead of 64: its memory levels off, and its small batches do not
    /// need more.
    func openStore(longRunning: Bool = false, enriching: Bool = false) throws -> Store {
        var configuration = Store.Configuration()
        if longRunning { configuration.index.cacheKiB = 8_192 }
        configuration.readDatabase = readDatabase
        configuration.events = { event in Output.note(event.message) }
        do {
            // REPLICA_MODEL names the model (off: none); REPLICA_MODEL_DIR=off turns it off too.
            let choice = try Self.chosenModel(configurationFile)
            Self.openedModel.withLock { $0 = choice }
            if let model = choice.model {
                configuration.embedder = try model.lazyEmbedder()
                // The other installed model answers for the items still holding its vectors until they
                // are embedded again (loaded only then).
                configuration.formerEmbedders = EmbeddingModel.allCases.filter { $0 != model }.compactMap {
                    try? $0.lazyEmbedder()
                }
            }
        } catch {
            // A model asked for by name and not used is said on every command, once: the others are
            // said where the model would be used (embedding, status).
            if !Self.semanticSearchTurnedOff && (Self.modelFolderNamed || Self.precisionNamed || Self.modelNamed) {
                Output.note("semantic search is off: \(ReplicaError.message(of: error))")
            }
        }
        if enriching { try self.configuration().enrichment.apply(to: &configuration.enrichment) }
        return try Store(directory: storeDirectory, database: database, configuration: configuration)
    }

    /// Whether semantic search was turned off on purpose (`REPLICA_MODEL_DIR=off`): nothing to warn of.
    static var semanticSearchTurnedOff: Bool { ProcessInfo.processInfo.environment["REPLICA_MODEL_DIR"] == "off" }

    /// Whether `REPLICA_MODEL_DIR` names a model folder: if it cannot be used, ``openStore(longRunning:enriching:)``
    /// has said so already.
    static var modelFolderNamed: Bool {
        let named = ProcessInfo.processInfo.environment["REPLICA_MODEL_DIR"] ?? ""
        return !named.isEmpty && named != "off"
    }

    /// The embedding model `REPLICA_MODEL` names, else the configuration file's `model` (a file that cannot
    /// be read names none here: the commands that use it say why), else the default; `nil` when off.
    static func chosenModel(_ file: URL) throws -> (model: EmbeddingModel?, chosenBy: String) {
        try EmbeddingModel.choice(configured: (try? ConfigurationFile.load(from: file))?.model)
    }

    /// The model the store was opened with (``openStore(longRunning:enriching:)``; `nil` when off) and
    /// what chose it, for `status`; `nil` before, or when the name could not be read.
    static let openedModel = Mutex<(model: EmbeddingModel?, chosenBy: String)?>(nil)

    /// Whether `REPLICA_MODEL` names a model: if it cannot be used, ``openStore(longRunning:enriching:)``
    /// has said so already.
    static var modelNamed: Bool { !(ProcessInfo.processInfo.environment["REPLICA_MODEL"] ?? "").isEmpty }

    /// Whether `REPLICA_EMBEDDING_PRECISION` is set: a value it cannot use was asked for by name, so
    /// ``openStore(longRunning:enriching:)`` says so on every command rather than searching by the words
    /// alone in silence.
    static var precisionNamed: Bool {
        !(ProcessInfo.processInfo.environment["REPLICA_EMBEDDING_PRECISION"] ?? "").isEmpty
    }

    /// Why semantic search is off, or `nil` when a model was found (loading it may still fail: that is
    /// said where it is used).
    static var missingModelReason: String? {
        if semanticSearchTurnedOff { return "semantic search is off (REPLICA_MODEL_DIR=off)" }
        do {
            let choice = try openedModel.withLock({ $0 }) ?? EmbeddingModel.choice()
            switch choice.model {
            case nil: return "semantic search is off (\(choice.chosenBy) says off)"
            case .miniLM?: _ = try MiniLMEmbedder.locateDirectory()
            case .multilingualE5?: _ = try MultilingualE5Embedder.locateFile()
            }
            return nil
        } catch {
            return "semantic search is off: \(ReplicaError.message(of: error))"
        }
    }

    /// Why semantic search is off, for a command about to embed to say once; `nil` when it was turned
    /// off on purpose, or said already when the store was opened.
    static var unsaidMissingModelReason: String? {
        semanticSearchTurnedOff || modelFolderNamed || precisionNamed || modelNamed ? nil : missingModelReason
    }
}

/// A `replica` subcommand.
protocol Command: Sendable {
    /// The word that selects the command.
    static var name: String { get }
    /// One line for `replica --help`.
    static var summary: String { get }
    /// The ways to call it, from which its usage lines are written: its actions and operands.
    static var synopses: [Synopsis] { get }
    /// What the command does: the help's text between the usage lines and the options.
    static var about: String { get }
    /// Every option the command accepts: what drives both its parsing and its help.
    static var options: [any OptionDeclaration] { get }
    /// The help's text after its options, if any.
    static var notes: String { get }

    /// Runs the command; `arguments` hold what follows its name.
    static func run(_ arguments: inout Arguments, context: Context) async throws
}

extension Command {
    static var notes: String { "" }
    static var synopses: [Synopsis] { [Synopsis()] }

    /// The usage lines, written from the declarations.
    static var usage: String { Synopsis.usage(command: name, synopses: synopses, options: options) }

    /// The full `--help` text: the usage lines, what the command does, the options as declared, the
    /// notes.
    static var help: String {
        var text = usage
        let about = String(about.reversed().drop { $0 == "\n" }.reversed())
        if !about.isEmpty { text += "\n\n" + about }
        if !options.isEmpty { text += "\n\nOptions:\n" + Option.helpText(for: options) }
        if !notes.isEmpty { text += "\n\n" + notes }
        return text
    }

    /// Reads repeated `--account` options into account IDs, checking each.
    static func accounts(_ arguments: inout Arguments) throws -> [AccountID] {
        try arguments[CommonOptions.accounts].map(account)
    }

    /// Reads the one `--account` a command needs.
    static func requiredAccount(_ arguments: inout Arguments) throws -> AccountID {
        guard let text = try arguments[CommonOptions.account] else {
            throw CLIError.usage("this command needs --account ID")
        }
        return try account(text)
    }

    /// An account ID given on the command line, checked: a bad one is a usage error.
    static func account(_ text: String) throws -> AccountID {
        let account = AccountID(text)
        do { try account.validate() } catch let error as ReplicaError { throw CLIError.usage(error.message) }
        return account
    }

    /// Reads `--index NAME`, defaulting to the default index.
    static func indexName(_ arguments: inout Arguments) throws -> String {
        try arguments[CommonOptions.index] ?? Store.defaultIndexName
    }
}

/// Options several commands take, read by the helpers above. A command lists its own copy, with the
/// help it gives (`CommonOptions.account.help("the account to import into (required)")`), since reading
/// goes by the option's name and kind.
enum CommonOptions {
    /// `--account ID`, repeatable: the accounts to search.
    static let accounts = Option.repeatable("--account", "ID", "only this account")
    /// `--account ID`, once: the account a command works on.
    static let account = Option.string("--account", "ID", "the account (required)")
    /// `--index NAME`, once.
    static let index = Option.string("--index", "NAME", "the named index (default: default)")
    /// `--no-embed`, beside ``Embedding/Plan/option``.
    static let noEmbed = Option.flag(
        "--no-embed", "leave new items to be embedded later (by watch or the next command)"
    ).oneOf("embedding")
}

/// The one action of `records` and `entities`.
enum ImportAction: String, CaseIterable { case `import` }

/// The file of JSON lines `import`, `records import` and `entities import` read.
enum ImportFile {
    static let operand = Operand.one(
        "FILE|-", missing: "name the file to import, or - for standard input", tooMany: "import one file at a time")
}
