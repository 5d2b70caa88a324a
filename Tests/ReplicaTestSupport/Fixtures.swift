import Foundation
import Replica

/// Small builders for items and stores used across tests.
public enum Fixtures {
    /// A plain-text item with a title and body text.
    public static func item(_ identifier: String, title: String? = nil, text: String? = nil, domain: String? = nil,
                            contentType: ContentType = .plainText, modified: Date? = nil,
                            expiration: Date? = .distantFuture) -> SearchableItem {
        var attributes = AttributeSet(contentType: contentType)
        attributes.title = title
        attributes.textContent = text
        attributes.contentModificationDate = modified
        return SearchableItem(uniqueIdentifier: ItemIdentifier(identifier), domainIdentifier: domain.map(DomainIdentifier.init(rawValue:)),
                              attributeSet: attributes, expirationDate: expiration)
    }

    /// A clock that tests move by hand.
    public final class ManualClock: @unchecked Sendable {
        private let lock = NSLock()
        private var current: Date

        public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = start }

        public var now: Date { lock.withLock { current } }

        public func advance(by seconds: TimeInterval) { lock.withLock { current += seconds } }

        /// The clock as a store configuration reads it.
        public var function: @Sendable () -> Date { { [self] in now } }
    }

    /// A store configuration whose indexes read `clock`.
    public static func configuration(clock: ManualClock) -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.index.clock = clock.function
        return configuration
    }
}

extension Fixtures {
    /// Signs accounts in to the store at `path` (created if needed), as `replica accounts sign-in` would:
    /// writes for an account that is not signed in are refused.
    public static func signIn(store path: String, _ accounts: AccountID...) throws {
        let store = try Store(directory: URL(fileURLWithPath: path))
        for account in accounts { try store.signIn(account) }
    }
}
