import ReplicaCore
public import ReplicaPostgres

/// A test's own PostgreSQL connection (an administrator's, a second writer's), used from async test code.
///
/// ``PostgresConnection``'s calls block their thread on the server and are refused in async code
/// (`noasync`); these run each one on a Dispatch thread (`Blocking.run`), as the library's own code does.
extension PostgresConnection {
    /// Connects off the cooperative pool.
    public static func opening(url: String) async throws -> PostgresConnection {
        try await Blocking.run { try PostgresConnection(url: url) }
    }

    /// ``execute(_:_:)`` off the cooperative pool.
    @discardableResult
    public func run(_ sql: String, _ parameters: [PostgresValue] = []) async throws -> PostgresResult {
        try await Blocking.run { try self.execute(sql, parameters) }
    }

    /// ``executeScript(_:)`` off the cooperative pool.
    public func runScript(_ sql: String) async throws {
        try await Blocking.run { try self.executeScript(sql) }
    }
}
