import ReplicaPostgres

/// The ``PostgresError`` `body` throws; `nil` when it returns or throws something else.
func postgresError(_ body: () throws -> Any) -> PostgresError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error as? PostgresError
    }
}
