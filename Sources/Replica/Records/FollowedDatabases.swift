package import Foundation
import Synchronization

/// The kinds of an app's database, besides SQLite files, that followed tables may be in: each registered by
/// the library that reads it (`ReplicaPostgresHome` registers PostgreSQL), so that this library links no
/// other database's client.
package enum FollowedDatabases {
    /// One kind of database, by the schemes of its URLs.
    package struct Kind: Sendable {
        package var schemes: Set<String>
        /// Opens the database at a URL of one of ``schemes`` (a shared connection is fine).
        package var open: @Sendable (URL) throws -> any FollowedDatabase
        /// Something that waits for the databases at these URLs to say a followed table changed.
        package var listener: @Sendable ([String]) -> any TableChangeWaiting

        package init(
            schemes: Set<String>, open: @escaping @Sendable (URL) throws -> any FollowedDatabase,
            listener: @escaping @Sendable ([String]) -> any TableChangeWaiting
        ) {
            self.schemes = schemes
            self.open = open
            self.listener = listener
        }
    }

    private static let kinds = Mutex<[Kind]>([])

    /// Registers a kind; a kind already registered for one of its schemes is kept.
    package static func register(_ kind: Kind) {
        kinds.withLock { kinds in
            guard !kinds.contains(where: { !$0.schemes.isDisjoint(with: kind.schemes) }) else { return }
            kinds.append(kind)
        }
    }

    /// The kind registered for the URL's scheme, if any.
    static func kind(of url: URL) -> Kind? {
        guard let scheme = url.scheme?.lowercased() else { return nil }
        return kinds.withLock { $0.first { $0.schemes.contains(scheme) } }
    }

    /// What waits for the tables' databases to say a table changed: one per kind that has tables; empty
    /// when none does (files are looked at once a second).
    static func listeners(for tables: [FollowedTable]) -> [any TableChangeWaiting] {
        var urls: [String: (Kind, Set<String>)] = [:]
        for table in tables {
            guard let kind = kind(of: table.database), let scheme = kind.schemes.min() else { continue }
            urls[scheme, default: (kind, [])].1.insert(table.database.absoluteString)
        }
        return urls.keys.sorted().map { key in
            let (kind, found) = urls[key]!
            return kind.listener(found.sorted())
        }
    }
}

/// Waits for an app's databases to say that a followed table may have changed.
package protocol TableChangeWaiting: Sendable {
    /// Waits up to `timeout` and returns whether a table may have changed (a notification came, or a
    /// connection was lost or made anew, so changes meanwhile were not heard).
    @available(*, noasync, message: "it waits on the databases; in async code run it in Blocking.run")
    func wait(upTo timeout: Duration) -> Bool
}
