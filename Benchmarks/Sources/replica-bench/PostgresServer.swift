import Foundation
import ReplicaPostgres
import ReplicaSQLite

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL server in a scratch folder, started by `scripts/postgres.sh` (with `fsync` on:
/// never `--fast` for figures that are reported) and stopped by ``stop()``.
final class PostgresServer {
    let directory: String
    let script: String
    /// The URL of `replica_app`, the role replica runs as.
    let appURL: String
    /// The URL of `replica_owner`, which owns the schema and applies its migrations.
    let ownerURL: String
    private var stopped = false

    /// Starts a new server; `name` goes into the scratch folder's name. With `primary`, the server is a
    /// streaming-replication standby of that one (`scripts/postgres.sh standby`).
    init(script: String, name: String, standbyOf primary: PostgresServer? = nil) throws {
        guard FileManager.default.isExecutableFile(atPath: script) else {
            throw BenchError("no scripts/postgres.sh at \(script): run from the package folder, or give --script PATH")
        }
        self.script = script
        // A short path: the server's socket (DIR/.s.PGSQL.5432) must fit in 107 bytes.
        directory = try Measure.scratchDirectory("pg-\(name)")
        if let primary {
            appURL = try Self.run(script, ["standby", primary.directory, directory])
            ownerURL = try Self.run(script, ["owner-url", directory])
        } else {
            appURL = try Self.run(script, ["start", directory])
            ownerURL = try Self.run(script, ["owner-url", directory])
        }
        // For looking at where a search's time goes: every statement's duration in the server's log
        // (DIR/postgres.log; keep it with REPLICA_BENCH_KEEP). It slows every contestant.
        if ProcessInfo.processInfo.environment["REPLICA_BENCH_LOG_STATEMENTS"] != nil {
            let connection = try superuserConnection()
            try connection.executeScript("ALTER SYSTEM SET log_min_duration_statement = 0")
            try connection.executeScript("SELECT pg_reload_conf()")
        }
    }

    /// Stops the server and removes its folder (kept with `REPLICA_BENCH_KEEP`).
    func stop() {
        guard !stopped else { return }
        stopped = true
        _ = try? Self.run(script, ["stop", directory])
        Measure.removeDirectory(directory)
    }

    deinit { stop() }

    /// A connection as the superuser, who signs in on the server's socket without a password
    /// (scripts/postgres.sh): for what only a superuser may do (`CHECKPOINT`, `ALTER SYSTEM`).
    func superuserConnection() throws -> PostgresConnection {
        try PostgresConnection(
            url: ownerURL.replacingOccurrences(of: #"//[^@/]*@"#, with: "//postgres@", options: .regularExpression))
    }

    /// A connection as the owner, for the raw baselines and for reading sizes.
    func ownerConnection() throws -> PostgresConnection {
        try PostgresConnection(url: ownerURL)
    }

    // Synchronous, on a connection of their own: a benchmark waits for the server where it stands (the
    // library's own calls are `noasync`, and async code runs them off the cooperative pool).

    /// Runs a script as the owner.
    func runAsOwner(_ script: String) throws { try ownerConnection().executeScript(script) }

    /// Runs a script as the superuser.
    func runAsSuperuser(_ script: String) throws { try superuserConnection().executeScript(script) }

    /// Runs a statement as the owner and returns its result.
    func queryAsOwner(_ sql: String) throws -> PostgresResult { try ownerConnection().execute(sql) }

    /// Runs the script and returns its standard output's last line; its standard error is shown only
    /// when it fails. Output goes to files, not pipes: the server the script starts must not hold them.
    /// posix_spawn and waitpid, not Foundation's `Process`, whose `waitUntilExit` never returned here
    /// (off the main thread; FilesBenchmark saw the same).
    static func run(_ script: String, _ arguments: [String]) throws -> String {
        let folder = try Measure.scratchDirectory("pg-script")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let out = folder + "/out"
        let err = folder + "/err"
        var pid: pid_t = 0
        let argv = ([script] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard posix_spawn(&pid, script, &actions, nil, argv, environ) == 0 else {
            throw BenchError("cannot start \(script)")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let output = String(decoding: FileManager.default.contents(atPath: out) ?? Data(), as: UTF8.self)
        guard status == 0 else {
            let message = String(decoding: FileManager.default.contents(atPath: err) ?? Data(), as: UTF8.self)
            throw BenchError("\(script) \(arguments.first ?? "") failed (status \(status)): \(message)")
        }
        return output.split(separator: "\n").last.map(String.init) ?? ""
    }
}

/// The baseline on PostgreSQL: one table of (id, title, body) whose `tsvector` column PostgreSQL makes
/// itself with `to_tsvector('simple', …)` (title weighted A, body D), loaded by one `COPY`, and a GIN
/// index on it; searched with `ts_rank_cd` over that index.
final class RawPostgres {
    let connection: PostgresConnection
    /// The table, `bench.NAME`.
    let table: String

    /// Connects as the owner and makes the schema `bench` and, once, the text search configuration
    /// `bench.simple_stop` (`simple` with PostgreSQL's English stop words dropped: words kept as typed).
    init(url: String, name: String) throws {
        connection = try PostgresConnection(url: url)
        table = "bench.\(name)"
        try Self.makeSchema(on: connection)
        try connection.executeScript("DROP TABLE IF EXISTS \(table)")
    }

    /// The schema `bench` and, once, its text search configuration `bench.simple_stop`.
    static func makeSchema(on connection: PostgresConnection) throws {
        try connection.executeScript(
            """
            CREATE SCHEMA IF NOT EXISTS bench;
            DO $$ BEGIN
                IF NOT EXISTS (SELECT FROM pg_ts_config c JOIN pg_namespace n ON n.oid = c.cfgnamespace
                               WHERE n.nspname = 'bench' AND c.cfgname = 'simple_stop') THEN
                    CREATE TEXT SEARCH DICTIONARY bench.simple_stop (TEMPLATE = pg_catalog.simple, STOPWORDS = english);
                    CREATE TEXT SEARCH CONFIGURATION bench.simple_stop (COPY = pg_catalog.simple);
                    ALTER TEXT SEARCH CONFIGURATION bench.simple_stop ALTER MAPPING FOR asciiword, word, numword,
                        asciihword, hword, numhword, hword_asciipart, hword_part, hword_numpart WITH bench.simple_stop;
                END IF;
            END $$;
            """)
    }

    /// Loads the paragraphs in one transaction: the table made, one `COPY`, the GIN index made after
    /// the rows (`indexFirst`: before them, so the `COPY` fills it as it goes).
    func load(_ paragraphs: [Paragraph], indexFirst: Bool) throws {
        let index = "CREATE INDEX ON \(table) USING gin (words)"
        try connection.transaction {
            try connection.executeScript(
                """
                CREATE TABLE \(table) (id bigint NOT NULL, title text NOT NULL, body text NOT NULL,
                    words tsvector GENERATED ALWAYS AS (setweight(to_tsvector('simple', title), 'A')
                                                        || setweight(to_tsvector('simple', body), 'D')) STORED)
                """)
            if indexFirst { try connection.executeScript(index) }
            try connection.copy(
                into: table, columns: ["id", "title", "body"],
                rows: paragraphs.lazy.enumerated().map { number, paragraph -> [PostgresValue] in
                    [.int(Int64(number)), .text(paragraph.title), .text(paragraph.body)]
                })
            if !indexFirst { try connection.executeScript(index) }
        }
    }

    /// A ranked top 20 of the items with any of the words, read into strings; `dropStopWords` leaves
    /// out PostgreSQL's English stop words, as replica's ranked search leaves out function words.
    func timedSearch(_ text: String, dropStopWords: Bool = false) throws -> Double {
        let query =
            dropStopWords
            ? "to_tsquery('simple', replace(plainto_tsquery('bench.simple_stop', $1)::text, ' & ', ' | '))"
            : "to_tsquery('simple', $1)"
        let argument =
            dropStopWords
            ? text
            : text.split(separator: " ").map { Self.quoted(String($0)) }.joined(separator: " | ")
        let start = DispatchTime.now().uptimeNanoseconds
        let result = try connection.execute(
            """
            SELECT id, title, body FROM \(table), \(query) AS q WHERE words @@ q ORDER BY ts_rank_cd(words, q) DESC LIMIT 20
            """, [.text(argument)])
        var bytes = 0
        for row in 0..<result.rowCount {
            bytes += (result.string(row, 1)?.utf8.count ?? 0) + (result.string(row, 2)?.utf8.count ?? 0)
        }
        _ = bytes
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// A word as a `tsquery` operand: in single quotes, quotes and backslashes escaped.
    static func quoted(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// The table's size with its index and TOAST, in bytes.
    var size: Int {
        get throws {
            Int(try connection.execute("SELECT pg_total_relation_size($1::regclass)", [.text(table)]).int(0, 0) ?? 0)
        }
    }

    func drop() throws { try connection.executeScript("DROP TABLE IF EXISTS \(table)") }
}

/// The raw baseline over replica's own rows: `ts_rank_cd` over the `tsvector`s replica wrote and their
/// GIN index, the words OR-ed as the stems replica searches for them. Like for like with replica's
/// search: the same rows match (the raw table of ``RawPostgres`` holds words as typed, unstemmed, so a
/// word matches fewer rows there).
final class RawOverReplicaRows {
    let connection: PostgresConnection
    let partition: String
    /// FTS5 with the index's tokenizer, in memory: replica's stems of a word (its `fts5vocab` instances).
    private let stemmer: Connection

    /// Reads the account's items partition as the schema's owner (no row-level policy applies to it).
    convenience init(_ server: PostgresServer, account: String) throws {
        try self.init(ownerURL: server.ownerURL, account: account)
    }

    init(ownerURL: String, account: String) throws {
        connection = try PostgresConnection(url: ownerURL)
        try RawPostgres.makeSchema(on: connection)
        partition =
            try connection.execute("SELECT replica.partition_name('items', $1)", [.text(account)]).string(0, 0) ?? ""
        stemmer = try Connection(path: ":memory:")
        try stemmer.execute("CREATE VIRTUAL TABLE words USING fts5(x, tokenize = '\(IndexBenchmark.tokenizer)')")
        try stemmer.execute("CREATE VIRTUAL TABLE stems USING fts5vocab(words, 'instance')")
    }

    /// The query as replica ranks it: the stems of the words PostgreSQL's English stop list keeps (replica
    /// leaves out its own, nearly the same, list of function words), or of every word when none is kept.
    func tsquery(_ text: String) throws -> String {
        let kept = try connection.execute(
            "SELECT word FROM unnest(string_to_array($1, ' ')) AS word WHERE to_tsvector('bench.simple_stop', word) <> ''",
            [.text(text)])
        let words =
            kept.rowCount > 0
            ? (0..<kept.rowCount).compactMap { kept.string($0, 0) } : text.split(separator: " ").map(String.init)
        try stemmer.execute("DELETE FROM words")
        try stemmer.execute("INSERT INTO words(x) VALUES (?)", [.text(words.joined(separator: " "))])
        let stems = try stemmer.cached("SELECT DISTINCT term FROM stems").rows { $0.text(0) }
        return stems.map(RawPostgres.quoted).joined(separator: " | ")
    }

    /// Whether any row holds any of the stems.
    func matches(_ tsquery: String) throws -> Bool {
        try connection.execute(
            "SELECT EXISTS (SELECT 1 FROM replica.\(partition) AS i WHERE i.words @@ CAST($1 AS tsquery))",
            [.text(tsquery)]
        )
        .bool(0, 0) ?? false
    }

    /// A ranked top 20 of the rows with any of the stems, read into strings (the query made beforehand).
    func timedSearch(_ tsquery: String) throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        let result = try connection.execute(
            """
            SELECT i.id, i.title, i.body FROM replica.\(partition) AS i, CAST($1 AS tsquery) AS q WHERE i.words @@ q
            ORDER BY ts_rank_cd(i.words, q) DESC LIMIT 20
            """, [.text(tsquery)])
        var bytes = 0
        for row in 0..<result.rowCount {
            bytes += (result.string(row, 1)?.utf8.count ?? 0) + (result.string(row, 2)?.utf8.count ?? 0)
        }
        _ = bytes
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}
