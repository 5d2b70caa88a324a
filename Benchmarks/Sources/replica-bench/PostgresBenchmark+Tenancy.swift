import Foundation
import Replica

// Issue 20 §6, tenancy: many accounts in one database. One account's search beside the same account
// alone in a database of its own (a second server, searched in turn with the first, query by query), and
// one account's sign-out beside the same sign-out on SQLite.
extension PostgresBenchmark {
    static func tenancy(_ server: PostgresServer, _ options: Options) async throws {
        let corpus = try require(options.corpus, "the tenancy part needs --corpus DIR")
        let accounts = options.accounts
        let size = options.accountItems
        // Accounts take consecutive slices of one pool of paragraphs (at most 100,000, then again from
        // the start): each account has its own statistics, whatever the others hold.
        let pool = try Corpus.paragraphs(in: corpus, count: min(accounts * size, 100_000))
        let items = pool.map(IndexBenchmark.makeItem)
        func slice(_ account: Int) -> [SearchableItem] { (0..<size).map { items[(account * size + $0) % items.count] } }
        func name(_ account: Int) -> AccountID { AccountID(String(format: "tenant-%05d", account)) }
        let measured = accounts / 2
        print("\n## Tenancy: \(accounts) accounts × \(size) items in one database; account \(name(measured)) measured")

        let alone = try PostgresServer(script: options.script, name: "alone")
        defer { alone.stop() }
        try migrate(alone)
        let sharedDirectory = try Measure.scratchDirectory("pg-shared")
        let aloneDirectory = try Measure.scratchDirectory("pg-alone")
        let laterDirectory = try Measure.scratchDirectory("pg-later")
        defer {
            Measure.removeDirectory(sharedDirectory)
            Measure.removeDirectory(aloneDirectory)
            Measure.removeDirectory(laterDirectory)
        }
        let shared = try postgresStore(sharedDirectory, url: server.appURL)
        let single = try postgresStore(aloneDirectory, url: alone.appURL)
        var signInTimes: [Double] = []
        let loading = try await Measure.seconds {
            for account in 0..<accounts {
                signInTimes.append(try await Measure.seconds { _ = try await shared.signIn(name(account)) })
                try await shared.index(account: name(account)).indexItems(slice(account))
                if (account + 1) % 100 == 0 {
                    FileHandle.standardError.write(Data("tenancy: \(account + 1) accounts loaded\n".utf8))
                }
            }
        }
        try await single.signIn(name(measured))
        try await single.index(account: name(measured)).indexItems(slice(measured))
        try settle(server)
        try settle(alone)
        let databaseSize =
            try server.queryAsOwner("SELECT pg_database_size(current_database())").int(0, 0) ?? 0
        print(
            "loaded in \(Measure.format(loading)) s (\(Int(Double(accounts * size) / loading)) items/s, sign-ins included; "
                + "sign-in p50 \(Measure.format(Measure.median(signInTimes) * 1000)) ms); database \(databaseSize / 1_048_576) MiB"
        )

        // The measured account's own words: two-word queries and eight-word questions from its items.
        let texts = (0..<size).map { pool[(measured * size + $0) % pool.count] }
        let classes: [(name: String, queries: [String])] = [
            ("two words", Corpus.queries(from: texts, count: options.queryCount, seed: 2028)),
            ("eight-word questions", Corpus.questions(from: texts, count: max(options.queryCount / 2, 1), seed: 2029)),
        ]
        func timed(_ store: Store, _ text: String) async throws -> Double {
            var query = SearchQuery(text, limit: 20)
            query.accounts = [name(measured)]
            return try await Measure.seconds { _ = try await store.search(query) }
        }
        // Also among all the accounts, a store opened after the load: its connections' server processes
        // have not read the other accounts' tables (the loading store's have read every one).
        let later = try postgresStore(laterDirectory, url: server.appURL)
        for query in classes[0].queries.prefix(10) {
            _ = try await timed(shared, query)
            _ = try await timed(single, query)
            _ = try await timed(later, query)
        }
        print(
            """

            | measure | among \(accounts) accounts | alone in its database | ratio | target |
            |---|---|---|---|---|
            """)
        var afterLoad: [(label: String, times: [Double], apart: [Double])] = []
        for (label, queries) in classes {
            var among: [Double] = []
            var apart: [Double] = []
            var opened: [Double] = []
            for (number, query) in queries.enumerated() {
                // Alternate who goes first.
                if number % 2 == 0 {
                    among.append(try await timed(shared, query))
                    apart.append(try await timed(single, query))
                    opened.append(try await timed(later, query))
                } else {
                    opened.append(try await timed(later, query))
                    apart.append(try await timed(single, query))
                    among.append(try await timed(shared, query))
                }
            }
            afterLoad.append((label, opened, apart))
            for p in [50.0, 99.0] {
                let a = Measure.percentile(among, p)
                let b = Measure.percentile(apart, p)
                print(
                    "| one account's ranked top 20, \(label) (\(queries.count)), p\(Int(p)) (ms) | \(Measure.format(a * 1000)) | \(Measure.format(b * 1000)) "
                        + "| \(Measure.format(a / b)) | \(p == 50 ? "≤ 1.2" : "") |")
            }
        }

        for (label, opened, apart) in afterLoad {
            let a = Measure.percentile(opened, 50)
            let b = Measure.percentile(apart, 50)
            print(
                "| the same, \(label), p50, a store opened after the load (ms) | \(Measure.format(a * 1000)) | \(Measure.format(b * 1000)) "
                    + "| \(Measure.format(a / b)) | |")
        }

        // Sign-outs of accounts spread over the database (not the measured one), beside the same
        // accounts' sign-outs from a SQLite store.
        let leaving = stride(from: 0, to: accounts, by: max(accounts / options.signOuts, 1)).filter { $0 != measured }
            .prefix(options.signOuts)
        var remote: [Double] = []
        for account in leaving {
            remote.append(try await Measure.seconds { _ = try await shared.signOut(name(account)) })
        }
        let sqliteDirectory = try Measure.scratchDirectory("sqlite-tenants")
        defer { Measure.removeDirectory(sqliteDirectory) }
        let local = try Store(directory: URL(fileURLWithPath: sqliteDirectory))
        for account in leaving {
            try await local.signIn(name(account))
            try await local.index(account: name(account)).indexItems(slice(account))
        }
        var localTimes: [Double] = []
        for account in leaving {
            localTimes.append(try await Measure.seconds { _ = try await local.signOut(name(account)) })
        }
        let (a, b) = (Measure.median(remote), Measure.median(localTimes))
        print(
            "| sign-out of a \(size)-item account, p50 (\(remote.count) accounts) (ms) | \(Measure.format(a * 1000)) | SQLite store: \(Measure.format(b * 1000)) "
                + "| \(Measure.format(a / b)) | ≤ 100 ms |")
        print(
            "| the same, max (ms) | \(Measure.format((remote.max() ?? .nan) * 1000)) | \(Measure.format((localTimes.max() ?? .nan) * 1000)) | | |"
        )
    }
}
