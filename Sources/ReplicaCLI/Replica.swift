import Foundation
import Replica
import ReplicaPostgresHome
import Synchronization

/// The `replica` command: global options, then one subcommand.
@main
enum ReplicaCommand {
    static let version = "0.1.0"

    static let commands: [any Command.Type] = [
        ImportCommand.self,
        SearchCommand.self,
        SuggestCommand.self,
        QueryCommand.self,
        GetCommand.self,
        EntitiesCommand.self,
        ActivitiesCommand.self,
        RecentCommand.self,
        DeleteCommand.self,
        StatusCommand.self,
        AccountsCommand.self,
        SwitchAccountCommand.self,
        RecordsCommand.self,
        SourcesCommand.self,
        SyncCommand.self,
        WatchCommand.self,
        ToolCommand.self,
        MCPCommand.self,
    ]

    /// The options that come before the command word.
    enum Global {
        static let store = Option.string(
            "--store", "DIR",
            "the store to use (default: $REPLICA_STORE, else $XDG_DATA_HOME/replica,\nelse ~/.local/share/replica)")
        static let database = Option.string(
            "--database", "URL",
            """
            keep the accounts' content in this PostgreSQL database, such as
            postgresql://replica_app:PASSWORD@HOST/replica (default: $REPLICA_DATABASE, else
            SQLite files in the store); --store still names where local files go
            """)
        static let readDatabase = Option.string(
            "--read-database", "URL",
            """
            serve searches from this streaming-replication standby of --database
            (default: $REPLICA_READ_DATABASE); after a write, a search waits for the
            standby to replay it (up to 250 ms), else asks the primary
            """)
        static let config = Option.string(
            "--config", "FILE",
            """
            the configuration file (default: $REPLICA_CONFIG, else config.json in the
            store given by --store or $REPLICA_STORE, else $XDG_CONFIG_HOME/replica/config.json)
            """)
        static let help = Option.flag("--help", "show help (after a command: that command's help); also -h")
        static let version = Option.flag("--version", "print the version")
    }

    static let globalOptions: [any OptionDeclaration] = [
        Global.store, Global.database, Global.readDatabase, Global.config,
        Global.help, Global.version,
    ]

    static var help: String {
        let width = commands.map { $0.name.count }.max() ?? 0
        let list = commands.map {
            "  " + $0.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + $0.summary
        }
        return """
            replica — local, account-scoped search indexes, kept fresh.

            Usage: replica [--store DIR] [--database URL [--read-database URL]] COMMAND [OPTIONS] [ARGUMENTS]

            Commands:
            \(list.joined(separator: "\n"))

            Global options:
            \(Option.helpText(for: globalOptions))

            Exit status: 0 on success, 1 when the work failed, 2 when the command line was wrong.
            Run 'replica COMMAND --help' for a command's options.
            """
    }

    static func main() {
        // Swift repairs bytes that are not UTF-8 into U+FFFD, so two different account IDs would become
        // one account: such an argument is refused instead.
        for position in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[position], String(validatingCString: argument) == nil else {
                continue
            }
            Output.error(
                "argument \(position) is not valid UTF-8 text; replica reads every argument (account IDs, names, words) as UTF-8"
            )
            exit(2)
        }
        // The command links the PostgreSQL home: a followed table may be in PostgreSQL whatever the store's home.
        PostgreSQL.enable()
        let commandLine = Array(CommandLine.arguments.dropFirst())
        let environment = ProcessInfo.processInfo.environment
        finish(status: waitingOnThisThread { await run(commandLine, environment: environment) })
    }

    /// Runs `body` on Swift's cooperative pool and blocks this thread until it has returned.
    ///
    /// The command's work never needs the main thread, and so the process ends where it began: an async
    /// `main` parks the main thread in `dispatch_main`, and on Linux its continuation is resumed only
    /// when a Dispatch worker drains the main queue. `replica watch` was seen (8 runs in 10 of a loaded
    /// test suite) to print "stopped" and then never be resumed there.
    private static func waitingOnThisThread(_ body: @escaping @Sendable () async -> Int32) -> Int32 {
        final class Outcome: Sendable {
            let status = Mutex<Int32>(1)
            let done = DispatchSemaphore(value: 0)
        }
        let outcome = Outcome()
        Task.detached {
            let status = await body()
            outcome.status.withLock { $0 = status }
            outcome.done.signal()
        }
        outcome.done.wait()
        return outcome.status.withLock { $0 }
    }

    /// Ends the process with `status`, after the progress line is cleared (and, for crash tests, how many
    /// crash points were reached is said).
    static func finish(status: Int32) -> Never {
        Progress.clear()
        if CrashPoints.isArmed {
            // For crash tests: how many points this run went through, so a test can aim at any of them.
            Output.write("replica: test: \(CrashPoints.reachedCount) crash points reached\n", to: STDERR_FILENO)
        }
        exit(status)
    }

    /// Runs a command line; returns the exit status.
    static func run(_ commandLine: [String], environment: [String: String]) async -> Int32 {
        // Global options come before the command word: a value is the token after its option, and the
        // first token that is neither an option nor such a value is the command word.
        var rest = commandLine[...]
        do {
            var global: [String] = []
            while let first = rest.first, Arguments.looksLikeOption(first) {
                global.append(first)
                rest = rest.dropFirst()
                let takesValue = globalOptions.contains { $0.option.takesValue && $0.option.name == first }
                if takesValue, let value = rest.first {
                    global.append(value)
                    rest = rest.dropFirst()
                }
            }
            let wantsHelp = Arguments.asksForHelp(global)
            var globals = try Arguments(global.filter { $0 != "-h" }, options: globalOptions)
            if try globals[Global.version] {
                Output.print("replica \(version)")
                return 0
            }
            _ = try globals[Global.help]
            let store = try globals[Global.store]
            let databaseURL = try globals[Global.database]
            let readDatabaseURL = try globals[Global.readDatabase]
            let config = try globals[Global.config]
            try globals.finish()
            guard let word = rest.first else {
                Output.print(help)
                return wantsHelp ? 0 : 2
            }
            if word == "help" {
                if let topic = rest.dropFirst().first, let command = commands.first(where: { $0.name == topic }) {
                    Output.print(command.help)
                } else {
                    Output.print(help)
                }
                return 0
            }
            guard let command = commands.first(where: { $0.name == word }) else {
                throw CLIError.usage(
                    "unknown command '\(word)'", hint: "Run 'replica --help' for the list of commands.")
            }
            if wantsHelp || Arguments.asksForHelp(Array(rest.dropFirst())) {
                Output.print(command.help)
                return 0
            }
            var arguments = try Arguments(Array(rest.dropFirst()), options: command.options)
            let directory = store ?? environment["REPLICA_STORE"].flatMap { $0.isEmpty ? nil : $0 }
            let storeDirectory = directory.map { URL(fileURLWithPath: $0) } ?? Store.defaultDirectory
            let configurationFile = config ?? environment["REPLICA_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
            let url = databaseURL ?? environment["REPLICA_DATABASE"].flatMap { $0.isEmpty ? nil : $0 }
            let readURL = readDatabaseURL ?? environment["REPLICA_READ_DATABASE"].flatMap { $0.isEmpty ? nil : $0 }
            if readURL != nil && url == nil {
                throw CLIError.usage(
                    "--read-database (or $REPLICA_READ_DATABASE) names a standby of the database, and no database was given",
                    hint: "Give the primary with --database URL (or $REPLICA_DATABASE), or leave the read database out."
                )
            }
            let context = Context(
                storeDirectory: storeDirectory,
                database: url.map { .postgres(url: $0) } ?? .sqlite,
                readDatabase: readURL.map { Store.ReadDatabase(url: $0) },
                configurationFile: configurationFile.map { URL(fileURLWithPath: $0) }
                    ?? (directory != nil
                        ? storeDirectory.appendingPathComponent("config.json")
                        : URL(fileURLWithPath: ConfigurationFile.defaultDirectory.path).appendingPathComponent(
                            "config.json")),
                environment: environment)
            try await command.run(&arguments, context: context)
            return 0
        } catch let error as CLIError where error.message.isEmpty {
            return error.status
        } catch let error as CLIError {
            Output.error(error.message)
            if let hint = error.hint {
                Output.write(hint + "\n", to: STDERR_FILENO)
            } else if error.status == 2 {
                let name = rest.first.flatMap { word in commands.first { $0.name == word }?.name }
                Output.write("Run 'replica \(name.map { $0 + " " } ?? "")--help' for usage.\n", to: STDERR_FILENO)
            }
            return error.status
        } catch let error as ReplicaError {
            Output.error(error.message)
            return error.code == .invalidArgument ? 2 : 1
        } catch let error as any StorageFailure {
            Output.error(error.explanation)
            return 1
        } catch {
            Output.error("\(error)")
            return 1
        }
    }
}
