import Foundation
import Replica

/// `replica status`: accounts, item counts, index sizes, client states.
enum StatusCommand: Command {
    static let name = "status"
    static let summary = "show accounts, item counts, index sizes and client states"
    static let help = """
        Usage: replica [--store DIR] status [--json]

        Shows the store's signed-in accounts, and for each its named indexes with their item counts
        (expired items not counted), sizes on disk and the client state of the last ended batch.

        Options:
          --json   one JSON object: {"store": …, "accounts": [{"id", "itemCount", "indexBytes",
                   "lastClientState", "signedInAt", "indexes": […]}]}
        """

    static func run(_ arguments: inout Arguments, context: Context) async throws {
        let json = arguments.flag("--json")
        try arguments.finish()
        let store = try context.openStore()
        let status = try await store.status()
        if json {
            Output.printJSON(status.json)
            return
        }
        Output.print("store: \(status.directory.path)")
        if status.accounts.isEmpty {
            Output.print("no accounts signed in")
        }
        for account in status.accounts {
            Output.print("account \(account.id): \(account.itemCount) items, \(formatBytes(account.indexBytes))")
            for index in account.indexes {
                var line = "  index \(index.name): \(index.itemCount) items, \(formatBytes(index.bytes))"
                if case .string(let state) = StoreStatus.describe(clientState: index.lastClientState) {
                    line += ", client state \(state)"
                }
                Output.print(line)
            }
        }
    }

    static func formatBytes(_ bytes: Int) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        if bytes < 1 << 20 { return String(format: "%.1f KiB", Double(bytes) / 1024) }
        if bytes < 1 << 30 { return String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
        return String(format: "%.2f GiB", Double(bytes) / 1_073_741_824)
    }
}
