import ReplicaPostgres

/// The ``PostgresError`` `body` throws; `nil` when it returns or throws something else.
func postgresError<T>(_ body: () throws -> T) -> PostgresError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error as? PostgresError
    }
}
