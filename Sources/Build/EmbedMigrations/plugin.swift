import Foundation
import PackagePlugin

/// Embeds the numbered SQL files under `migrations/` into the target as Swift source.
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let migrations = context.package.directoryURL.appending(path: "migrations")
        let inputs =
            (FileManager.default.enumerator(at: migrations, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }
            .filter { $0.pathExtension == "sql" } ?? [])
            .sorted { $0.path < $1.path }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
        // A target on SQLite gets ReplicaSQLite's `Migration`, which its migrator runs; another (the
        // PostgreSQL store) a `Migration` of its own, so that it needs no SQLite.
        let onSQLite = target.dependencies.contains { dependency in
            if case .target(let target) = dependency { target.name == "ReplicaSQLite" } else { false }
        }
        return [
            .buildCommand(
                displayName: "Embedding \(inputs.count) migrations",
                executable: try context.tool(named: "embed-migrations").url,
                arguments: [migrations.path, output.path, onSQLite ? "sqlite" : "standalone"],
                inputFiles: inputs,
                outputFiles: [output])
        ]
    }
}
