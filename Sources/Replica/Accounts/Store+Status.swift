import Foundation

/// What a store holds, for `replica status`.
public struct StoreStatus: Sendable {
    /// One named index of one account.
    public struct IndexStatus: Sendable {
        public var name: String
        public var itemCount: Int
        public var bytes: Int
        public var lastClientState: Data?
    }

    /// One account.
    public struct AccountStatus: Sendable {
        public var id: AccountID
        public var state: AccountRecord.State
        public var signedInAt: Date
        public var indexes: [IndexStatus]

        public var itemCount: Int { indexes.reduce(0) { $0 + $1.itemCount } }
        public var indexBytes: Int { indexes.reduce(0) { $0 + $1.bytes } }
        /// The client state of the default index, or of the only index when there is one.
        public var lastClientState: Data? {
            (indexes.first { $0.name == Store.defaultIndexName } ?? (indexes.count == 1 ? indexes.first : nil))?.lastClientState
        }
    }

    public var directory: URL
    public var accounts: [AccountStatus]
}

extension Store {
    /// Accounts, their indexes, item counts, sizes and last client states.
    public func status() async throws -> StoreStatus {
        var accounts: [StoreStatus.AccountStatus] = []
        for record in try signedInAccounts() {
            var indexes: [StoreStatus.IndexStatus] = []
            for name in try indexNames(for: record.id) {
                guard let index = try existingIndex(named: name, account: record.id) else { continue }
                indexes.append(StoreStatus.IndexStatus(
                    name: name,
                    itemCount: try await index.itemCount(),
                    bytes: index.fileSize(),
                    lastClientState: try await index.fetchLastClientState()))
            }
            accounts.append(StoreStatus.AccountStatus(id: record.id, state: record.state, signedInAt: record.signedInAt, indexes: indexes))
        }
        return StoreStatus(directory: directory, accounts: accounts)
    }
}

extension StoreStatus {
    /// A client state for display: its text when it is UTF-8, otherwise `base64:` and its bytes.
    public static func describe(clientState: Data?) -> JSON {
        guard let clientState else { return .null }
        if let text = String(data: clientState, encoding: .utf8) { return .string(text) }
        return .string("base64:" + clientState.base64EncodedString())
    }

    /// The status as `replica status --json` prints it.
    public var json: JSON {
        .object([
            ("store", .string(directory.path)),
            ("accounts", .array(accounts.map { account in
                .object([
                    ("id", .string(account.id.rawValue)),
                    ("itemCount", .number(Double(account.itemCount))),
                    ("indexBytes", .number(Double(account.indexBytes))),
                    ("lastClientState", Self.describe(clientState: account.lastClientState)),
                    ("signedInAt", .string(ISO8601.string(from: account.signedInAt))),
                    ("indexes", .array(account.indexes.map { index in
                        .object([
                            ("name", .string(index.name)),
                            ("itemCount", .number(Double(index.itemCount))),
                            ("bytes", .number(Double(index.bytes))),
                            ("lastClientState", Self.describe(clientState: index.lastClientState)),
                        ])
                    })),
                ])
            })),
        ])
    }
}
