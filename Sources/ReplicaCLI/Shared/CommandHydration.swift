import Foundation
import Replica

extension Context {
    /// How the commands that show indexed content check it with its owners first (search, query, get,
    /// suggest, recent; `ToolOptions.makeTool` builds the same for tool and mcp): the configuration file's
    /// projections and followed tables, and the sources this build can run. One place, so that no command
    /// forgets a part.
    func hydration(store: Store) throws -> Hydration {
        let file = try configuration()
        return Hydration(
            projections: file.projections, followedTables: file.followedTables,
            sourceResolver: CommandSourceResolver(store: store))
    }
}
