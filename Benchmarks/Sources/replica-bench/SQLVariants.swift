import Foundation
import Replica
import ReplicaSQLite

/// What each part of the index schema costs per insert, each beside raw FTS5: the table under "Where the
/// indexing time goes" in `docs/benchmarks/indexing.md`.
enum SQLVariants {
    static func run(corpus: String, itemCount: Int) async throws {
        let paragraphs = try Corpus.paragraphs(in: corpus, count: itemCount)
        let tok = IndexBenchmark.tokenizer
        let items = """
            CREATE TABLE items (id INTEGER PRIMARY KEY, identifier TEXT NOT NULL UNIQUE, domain TEXT, content_type TEXT,
              type_tree TEXT NOT NULL, created REAL, modified REAL, expires REAL NOT NULL, authors TEXT NOT NULL DEFAULT '',
              recipients TEXT NOT NULL DEFAULT '', attributes TEXT NOT NULL, owner TEXT NOT NULL DEFAULT 'api', source_version TEXT,
              indexed REAL NOT NULL) STRICT;
            """
        let fts5 = "CREATE VIRTUAL TABLE t USING fts5(title, keywords, people, description, body, tokenize = '\(tok)');"
        let variants: [(String, String, (Connection, Int, Paragraph) throws -> Void)] = [
            (
                "raw fts5 (title, body)", "CREATE VIRTUAL TABLE t USING fts5(title, body, tokenize = '\(tok)');",
                { c, _, p in
                    try c.cached("INSERT INTO t(title, body) VALUES (?, ?)").run([.text(p.title), .text(p.body)])
                }
            ),
            (
                "fts5 with 5 columns", fts5,
                { c, _, p in
                    try c.cached("INSERT INTO t(title, keywords, people, description, body) VALUES (?, '', '', '', ?)")
                        .run([.text(p.title), .text(p.body)])
                }
            ),
            ("+ items row, unique identifier", items + fts5, { c, i, p in try insertItem(c, i, p, lookup: false) }),
            (
                "+ domain and expires indexes",
                items + "CREATE INDEX d ON items(domain); CREATE INDEX e ON items(expires);" + fts5,
                { c, i, p in try insertItem(c, i, p, lookup: false) }
            ),
            (
                "+ owner index",
                items
                    + "CREATE INDEX d ON items(domain); CREATE INDEX e ON items(expires); CREATE INDEX o ON items(owner);"
                    + fts5, { c, i, p in try insertItem(c, i, p, lookup: false) }
            ),
            (
                "+ lookup before insert",
                items
                    + "CREATE INDEX d ON items(domain); CREATE INDEX e ON items(expires); CREATE INDEX o ON items(owner);"
                    + fts5, { c, i, p in try insertItem(c, i, p, lookup: true) }
            ),
        ]
        let external = """
            CREATE TABLE items (id INTEGER PRIMARY KEY, identifier TEXT NOT NULL UNIQUE, domain TEXT, content_type TEXT,
              created REAL, modified REAL, expires REAL NOT NULL, authors TEXT, recipients TEXT, attributes TEXT NOT NULL,
              owner TEXT NOT NULL DEFAULT 'api', source_version TEXT, indexed REAL NOT NULL, title TEXT NOT NULL DEFAULT '',
              keywords TEXT NOT NULL DEFAULT '', people TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
              body TEXT NOT NULL DEFAULT '') STRICT;
            CREATE VIRTUAL TABLE t USING fts5(title, keywords, people, description, body, content='items', content_rowid='id', tokenize = '\(tok)');
            """
        let externalVariants: [(String, String, (Connection, Int, Paragraph) throws -> Void)] = [
            ("external content, insert-select", external, { c, i, p in try insertExternal(c, i, p, select: true) }),
            ("external content, bind twice", external, { c, i, p in try insertExternal(c, i, p, select: false) }),
            (
                "external content + partial indexes",
                external
                    + "CREATE INDEX d ON items(domain) WHERE domain IS NOT NULL; CREATE INDEX e ON items(expires) WHERE expires < 32503680000;",
                { c, i, p in try insertExternal(c, i, p, select: false) }
            ),
            (
                "external content + partial indexes, trigger",
                external
                    + "CREATE INDEX d ON items(domain) WHERE domain IS NOT NULL; CREATE INDEX e ON items(expires) WHERE expires < 32503680000; CREATE TRIGGER ai AFTER INSERT ON items BEGIN INSERT INTO t(rowid, title, keywords, people, description, body) VALUES (new.id, new.title, new.keywords, new.people, new.description, new.body); END;",
                { c, i, p in try insertExternal(c, i, p, select: nil) }
            ),
            (
                "raw fts5 again", "CREATE VIRTUAL TABLE t USING fts5(title, body, tokenize = '\(tok)');",
                { c, _, p in
                    try c.cached("INSERT INTO t(title, body) VALUES (?, ?)").run([.text(p.title), .text(p.body)])
                }
            ),
        ]
        var rates: [String: [Double]] = [:]
        let all = variants + externalVariants
        let searchableItems = paragraphs.map(IndexBenchmark.makeItem)
        for _ in 0..<5 {
            let directory = try Measure.scratchDirectory("replica")
            let index = try await signedInStore(directory).index(account: "bench")
            let seconds = try await Measure.seconds { try await index.indexItems(searchableItems) }
            rates["replica", default: []].append(Double(searchableItems.count) / seconds)
            Measure.removeDirectory(directory)
            rates["replica's SQL alone", default: []].append(try await replicaSQLRate(paragraphs, bulk: false))
            rates["replica's bulk SQL alone", default: []].append(try await replicaSQLRate(paragraphs, bulk: true))
            for (name, schema, insert) in all {
                let directory = try Measure.scratchDirectory("variant")
                defer { Measure.removeDirectory(directory) }
                let connection = try Connection(path: directory + "/v.sqlite")
                try connection.execute(schema)
                let start = DispatchTime.now().uptimeNanoseconds
                try connection.transaction { for (i, p) in paragraphs.enumerated() { try insert(connection, i, p) } }
                rates[name, default: []].append(
                    Double(paragraphs.count) / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9))
            }
        }
        let baseline = Measure.median(rates[all[0].0]!)
        for name in all.map(\.0) + ["replica's SQL alone", "replica's bulk SQL alone", "replica"] {
            let rate = Measure.median(rates[name]!)
            print("\(name): \(Int(rate))/s (\(Measure.format(rate / baseline)) of raw)")
        }
    }

    /// Items per second for replica's own statements on replica's schema, bound from Swift without
    /// replica's Swift work. `bulk` runs them as a bulk load into an empty index does: the identifier,
    /// domain and expiration indexes dropped first and built at the end, no conflict clause.
    static func replicaSQLRate(_ paragraphs: [Paragraph], bulk: Bool) async throws -> Double {
        let directory = try Measure.scratchDirectory("schema")
        defer { Measure.removeDirectory(directory) }
        _ = try await signedInStore(directory).index(account: "bench")
        let connection = try Connection(path: directory + "/accounts/bench/indexes/default.sqlite")
        let insert = """
            INSERT INTO items(identifier, domain, content_type, created, modified, expires, authors, recipients, attributes,
                owner, source_version, indexed, title, keywords, people, description, body)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
            """ + (bulk ? "" : "\nON CONFLICT(identifier) DO NOTHING")
        let start = DispatchTime.now().uptimeNanoseconds
        try connection.transaction {
            let indexes =
                bulk
                ? try connection.prepare(
                    "SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'items' AND sql IS NOT NULL"
                )
                .rows { ($0.text(0), $0.text(1)) }
                : []
            for (name, _) in indexes { try connection.execute("DROP INDEX \(name)") }
            for (i, p) in paragraphs.enumerated() {
                try connection.cached(insert).run([
                    .text("p\(i)"), .text("bench.docs"), .text("public.plain-text"), .null, .null, .real(6.3e10), .null,
                    .null,
                    .text("{\"title\":\"\(p.title)\"}"), .text("api"), .null, .real(1.7e9), .text(p.title), .text(""),
                    .text(""), .text(""), .text(p.body),
                ])
                try connection.cached(
                    "INSERT INTO items_text(rowid, title, keywords, people, description, body) VALUES (?, ?, ?, ?, ?, ?)"
                )
                .run([
                    .integer(connection.lastInsertRowID), .text(p.title), .text(""), .text(""), .text(""),
                    .text(p.body),
                ])
            }
            for (_, sql) in indexes { try connection.execute(sql) }
        }
        return Double(paragraphs.count) / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }

    static func insertExternal(_ c: Connection, _ i: Int, _ p: Paragraph, select: Bool?) throws {
        try c.cached(
            """
            INSERT INTO items(identifier, domain, content_type, created, modified, expires, authors, recipients, attributes, owner, source_version, indexed, title, keywords, people, description, body)
            VALUES (?, 'bench.docs', 'public.plain-text', NULL, NULL, 6.3e10, NULL, NULL, ?, 'api', NULL, 1.7e9, ?, '', '', '', ?)
            ON CONFLICT(identifier) DO NOTHING
            """
        ).run([
            .text("p\(i)"), .text("{\"contentType\":\"public.plain-text\",\"title\":\"\(p.title.count)\"}"),
            .text(p.title), .text(p.body),
        ])
        guard let select else { return }
        if select {
            try c.cached(
                "INSERT INTO t(rowid, title, keywords, people, description, body) SELECT id, title, keywords, people, description, body FROM items WHERE id = ?"
            ).run([.integer(c.lastInsertRowID)])
        } else {
            try c.cached(
                "INSERT INTO t(rowid, title, keywords, people, description, body) VALUES (?, ?, '', '', '', ?)"
            ).run([.integer(c.lastInsertRowID), .text(p.title), .text(p.body)])
        }
    }

    static func insertItem(_ c: Connection, _ i: Int, _ p: Paragraph, lookup: Bool) throws {
        if lookup {
            _ = try c.cached("SELECT id FROM items WHERE identifier = ?").firstRow([.text("p\(i)")]) { $0.int64(0) }
        }
        try c.cached(
            """
            INSERT INTO items(identifier, domain, content_type, type_tree, created, modified, expires, authors, recipients, attributes, owner, source_version, indexed)
            VALUES (?, 'bench.docs', 'public.plain-text', ' public.plain-text public.text public.content public.data public.item ', NULL, NULL, 6.3e10, '', '', ?, 'api', NULL, 1.7e9)
            """
        ).run([.text("p\(i)"), .text("{\"contentType\":\"public.plain-text\",\"title\":\"\(p.title.count)\"}")])
        try c.cached("INSERT INTO t(rowid, title, keywords, people, description, body) VALUES (?, ?, '', '', '', ?)")
            .run([.integer(c.lastInsertRowID), .text(p.title), .text(p.body)])
    }
}

/// A store at `directory` with the benchmark's account signed in.
func signedInStore(_ directory: String) async throws -> Store {
    let store = try Store(directory: URL(fileURLWithPath: directory))
    try await store.signIn("bench")
    return store
}
