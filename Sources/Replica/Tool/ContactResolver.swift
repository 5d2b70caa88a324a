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
    /// The person using the app, whose names and handles stand in for "I", "me" and "my".
    /// Asked when the tool describes itself and at each call, so it should answer quickly.
    func userIdentity() -> ResolvedContact
}

/// A person's names and handles.
public struct ResolvedContact: Sendable, Equatable {
    /// The name to show for the person.
    public var displayName: String
    /// Other names the person goes by.
    public var names: [String]
    /// The person's email addresses.
    public var emailAddresses: [String]
    /// The person's phone numbers.
    public var phoneNumbers: [String]

    /// Makes a contact from a display name and any other names and handles.
    public init(displayName: String, names: [String] = [], emailAddresses: [String] = [], phoneNumbers: [String] = []) {
        self.displayName = displayName
        self.names = names
        self.emailAddresses = emailAddresses
        self.phoneNumbers = phoneNumbers
    }

    /// Every name and handle, the display name first, each once.
    public var allHandles: [String] {
        var seen = Set<String>()
        return ([displayName] + names + emailAddresses + phoneNumbers).filter {
            !$0.isEmpty && seen.insert($0.lowercased()).inserted
        }
    }
}

/// A resolver that always answers with the same identity (the command line's `--me`).
public struct FixedContactResolver: ContactResolver {
    /// The identity every call answers with.
    public let identity: ResolvedContact
    /// Makes a resolver that answers with `identity`.
    public init(_ identity: ResolvedContact) { self.identity = identity }
    /// The fixed identity.
    public func userIdentity() -> ResolvedContact { identity }
}
