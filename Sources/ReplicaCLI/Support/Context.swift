import Foundation
import Replica

/// What every command shares: the global options and the store they point at.
struct Context {
    /// `--store DIR`, or `REPLICA_STORE`, or the XDG data directory.
    var storeDirectory: URL
    /// `--config FILE`, or `REPLICA_CONFIG`, or `config.json` in the store given by `--store` or
    /// `REPLICA_STORE`, or the XDG configuration directory's `replica/config.json`.
    var configurationFile: URL
    var environment: [String: String]

    /// Reads the configuration file (its absence means the defaults).
    func configuration() throws -> ConfigurationFile {
        try ConfigurationFile.load(from: configurationFile)
    }

    /// Opens the store, printing what it notices (rebuilt indexes, finished sign-outs) as notes.
    func openStore() throws -> Store {
        var configuration = Store.Configuration()
        configuration.events = { event in Output.note(event.message) }
        return try Store(directory: storeDirectory, configuration: configuration)
    }
}

/// A `replica` subcommand.
protocol Command: Sendable {
    /// The word that selects the command.
    static var name: String { get }
    /// One line for `replica --help`.
    static var summary: String { get }
    /// The full `--help` text.
    static var help: String { get }

    /// Runs the command; `arguments` hold what follows its name.
    static func run(_ arguments: inout Arguments, context: Context) async throws
}

extension Command {
    /// Reads repeated `--account` options into account IDs, checking each.
    static func accounts(_ arguments: inout Arguments) throws -> [AccountID] {
        try arguments.values("--account").map { text in
            let account = AccountID(text)
            do { try account.validate() } catch let error as ReplicaError { throw CLIError.usage(error.message) }
            return account
        }
    }

    /// Reads the one `--account` a command needs.
    static func requiredAccount(_ arguments: inout Arguments) throws -> AccountID {
        let given = try accounts(&arguments)
        guard given.count == 1 else {
            throw CLIError.usage(given.isEmpty ? "this command needs --account ID" : "give --account once")
        }
        return given[0]
    }

    /// Reads `--index NAME`, defaulting to the default index.
    static func indexName(_ arguments: inout Arguments) throws -> String {
        try arguments.value("--index") ?? Store.defaultIndexName
    }
}
