import ReplicaSQLite

/// Raw access to a store file, for tests that damage or inspect it behind replica's back.
enum ReplicaSQLiteAccess {
    static func connection(_ path: String) throws -> (String) throws -> Void {
        let connection = try Connection(
            path: path,
            options: {
                var options = Connection.Options()
                options.create = false
                return options
            }())
        return { sql in try connection.execute(sql) }
    }
}
