public import Foundation
public import Replica

/// Small builders for items and stores used across tests.
public enum Fixtures {
    /// A plain-text item with a title and body text.
    public static func item(
        _ identifier: String, title: String? = nil, text: String? = nil, domain: String? = nil,
        contentType: ContentType = .plainText, modified: Date? = nil,
        expiration: Date? = .distantFuture
    ) -> SearchableItem {
        var attributes = AttributeSet(contentType: contentType)
        attributes.title = title
        attributes.textContent = text
        attributes.contentModificationDate = modified
        return SearchableItem(
            uniqueIdentifier: ItemIdentifier(identifier),
            domainIdentifier: domain.map(DomainIdentifier.init(rawValue:)),
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

/// SplitMix64: random numbers that a seed replays, for tests whose inputs are random but must be
/// reproducible from the seed they print.
public struct SplitMix: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
