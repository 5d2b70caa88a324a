import Foundation
import Replica
import ReplicaExec
import ReplicaFileTree
import ReplicaGit

extension SourceRegistry {
    /// The sources this build knows: file trees, git repositories and out-of-process plugins.
    static let builtIn: SourceRegistry = {
        var registry = SourceRegistry()
        registry.register(.files) { definition, store in try FileTreeSource(definition, storeDirectory: store.directory)
        }
        registry.register(.git) { definition, _ in try GitSource(definition) }
        registry.register(.exec) { definition, _ in try ExecSource(definition) }
        return registry
    }()
}

/// `replica sources`: add, list and remove the sources a store keeps.
enum SourcesCommand: Command {
    static let name = "sources"
    static let summary = "add, list or remove file-tree, git and plugin sources"
    static let about = """
        Sources are kept in the store; 'replica sync' catches them up once, 'replica watch' follows them.
          files   a folder tree: text extracted from plain text, Markdown, reStructuredText, HTML, source
                  code and email (.eml, mbox); kept fresh with inotify. The store must not be inside it.
          git     the tree at a branch's head (default: the branch HEAD points at), with the commit, its
                  author and date; new commits are followed.
          exec    any program speaking the line-delimited JSON protocol in Plugins/README.md.
        A source is named NAME, or files-1, git-1, exec-1, … Removing one removes every item it made.

        """
    static let account = CommonOptions.account.only(["add"]).help(
        "the account whose index the source fills (signed in: see `accounts sign-in`)"
    ).required()
    static let sourceName = Option.string("--name", "NAME", only: ["add"], "the source's name")
    static let branch = Option.string("--branch", "NAME", only: ["add git"], "the branch to follow")
    static let json = Option.flag(
        "--json", only: ["list"], "one JSON object: {\"sources\": [{\"name\", \"kind\", \"account\", \"settings\"}]}")
    static let options: [any OptionDeclaration] = [account, sourceName, branch, json]

    enum Action: String, CaseIterable { case add, list, remove }
    /// The kinds of source `sources add` makes.
    enum Kind: String, CaseIterable { case files, git, exec }
    static let folder = Operand.one(
        "PATH", missing: "sources add files needs one folder", tooMany: "sources add files needs one folder")
    static let repository = Operand.one(
        "REPO", missing: "sources add git needs one repository", tooMany: "sources add git needs one repository")
    static let command = Operand.oneOrMore(
        "COMMAND", afterDashes: true, missing: "sources add exec needs the plugin's command after --")
    static let sourceToRemove = Operand.one(
        "NAME", missing: "sources remove needs one source name", tooMany: "sources remove needs one source name")
    static let synopses = [
        Synopsis("add files", folder), Synopsis("add git", repository), Synopsis("add exec", command),
        Synopsis("list"), Synopsis("remove", sourceToRemove),
    ]

    static func run(_ arguments: inout Arguments, context: Context) async throws {
        let action: Action = try arguments.action(of: name)
        switch action {
        case .add: try await add(&arguments, context: context)
        case .list:
            let json = try arguments[Self.json]
            try arguments.finish()
            let store = try context.openStore()
            let sources = try await store.sources()
            if json {
                Output.printJSON(
                    .object([
                        (
                            "sources",
                            .array(
                                sources.map { source in
                                    .object([
                                        ("name", .string(source.name)), ("kind", .string(source.kind.rawValue)),
                                        ("account", .string(source.account.rawValue)),
                                        ("index", .string(source.indexName)),
                                        ("settings", source.settings),
                                    ])
                                })
                        )
                    ]))
            } else {
                for source in sources {
                    Output.line("\(source.name)  \(source.kind)  account \(source.account)  \(describe(source))")
                }
            }
        case .remove:
            let name = try arguments[operand: Self.sourceToRemove]
            let store = try context.openStore()
            do {
                try await store.removeSource(named: name)
            } catch let error as ReplicaError where error.code == .notFound {
                throw CLIError.failure(error.message)
            }
            Output.note("removed source '\(name)' and every item it made")
        }
    }

    static func describe(_ source: SourceDefinition) -> String {
        switch source.kind {
        case .files: return source.settings["root"]?.stringValue ?? ""
        case .git:
            return (source.settings["repository"]?.stringValue ?? "")
                + (source.settings["branch"]?.stringValue.map { " (\($0))" } ?? "")
        case .exec:
            return source.settings["command"]?.arrayValue?.compactMap(\.stringValue).joined(separator: " ") ?? ""
        default: return source.settings.serialized()
        }
    }

    private static func add(_ arguments: inout Arguments, context: Context) async throws {
        let kind: Kind = try arguments.action(of: "sources add")
        let account = try requiredAccount(&arguments)
        let name = try arguments[Self.sourceName] ?? ""
        var settings: [(String, JSON)] = []
        switch kind {
        case .files:
            settings.append(("root", .string(absolute(try arguments[operand: Self.folder]))))
        case .git:
            let branch = try arguments[Self.branch]
            settings.append(("repository", .string(absolute(try arguments[operand: Self.repository]))))
            if let branch { settings.append(("branch", .string(branch))) }
        case .exec:
            let command = try arguments[operand: Self.command]
            settings.append(("command", .array(command.map(JSON.string))))
        }
        let store = try context.openStore()
        var definition = SourceDefinition(
            name: name, kind: SourceKind(rawValue: kind.rawValue), account: account, settings: .object(settings))
        // Check the settings before keeping them: a root that holds the store, a repository that cannot be opened.
        definition.name = name.isEmpty ? "check" : name
        do {
            _ = try SourceRegistry.builtIn.makeSource(for: definition, store: store)
        } catch let error as ReplicaError {
            throw CLIError.failure(error.message.replacingOccurrences(of: "source 'check'", with: "the source"))
        }
        definition.name = name
        let added = try await store.addSource(definition)
        Output.note(
            "added source '\(added.name)' for account '\(account)'; run 'replica sync' to index it, or 'replica watch' to follow it"
        )
    }

    static func absolute(_ path: String) -> String {
        let url =
            path.hasPrefix("/")
            ? URL(fileURLWithPath: path)
            : URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(path)
        return url.standardizedFileURL.path
    }
}
