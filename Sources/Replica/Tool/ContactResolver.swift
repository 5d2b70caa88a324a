import Foundation

/// Who the person using the app is: what "I", "me" and "my" mean in a prompt.
///
/// For example:
/// ```swift
/// struct AccountOwner: ContactResolver {
///     func userIdentity() -> ResolvedContact {
///         ResolvedContact(displayName: "Ada Lovelace", emailAddresses: ["ada@example.com"])
///     }
/// }
/// let tool = SearchTool(store: store, configuration: .init(contactResolver: AccountOwner()))
/// ```
public protocol ContactResolver: Sendable {
    func userIdentity() -> ResolvedContact
}

/// A person's names and handles.
public struct ResolvedContact: Sendable, Equatable {
    public var displayName: String
    /// Other names the person goes by.
    public var names: [String]
    public var emailAddresses: [String]
    public var phoneNumbers: [String]

    public init(displayName: String, names: [String] = [], emailAddresses: [String] = [], phoneNumbers: [String] = []) {
        self.displayName = displayName
        self.names = names
        self.emailAddresses = emailAddresses
        self.phoneNumbers = phoneNumbers
    }

    /// Every name and handle, the display name first, each once.
    public var allHandles: [String] {
        var seen = Set<String>()
        return ([displayName] + names + emailAddresses + phoneNumbers).filter { !$0.isEmpty && seen.insert($0.lowercased()).inserted }
    }
}

/// A resolver that always answers with the same identity (the command line's `--me`).
public struct FixedContactResolver: ContactResolver {
    public let identity: ResolvedContact
    public init(_ identity: ResolvedContact) { self.identity = identity }
    public func userIdentity() -> ResolvedContact { identity }
}
