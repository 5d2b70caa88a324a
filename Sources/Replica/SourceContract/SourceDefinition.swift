import Foundation

/// What kind of source something is: a file tree, a git repository, an out-of-process plugin, or another
/// a host registers.
public struct SourceKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The kind's name, as stored and as written in configuration ("files", "git", "exec", …).
    public let rawValue: String
    /// Makes a kind from its name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The kind's name.
    public var description: String { rawValue }

    /// A tree of files under a root folder.
    public static let files = SourceKind(rawValue: "files")
    /// A git repository.
    public static let git = SourceKind(rawValue: "git")
    /// An out-of-process plugin.
    public static let exec = SourceKind(rawValue: "exec")
}

/// A source as a store keeps it: its name, kind, account, the index it fills and its settings.
///
/// For example:
/// ```swift
/// let docs = try await store.addSource(SourceDefinition(kind: .files, account: "alice",
///                                                 settings: .object([("root", "/home/alice/Documents")])))
/// docs.name   // "files-1"
/// ```
public struct SourceDefinition: Sendable, Equatable {
    /// Unique in the store; `files-1`, `git-1`, `exec-1`, … when not chosen.
    public var name: String
    /// What kind of source this is.
    public var kind: SourceKind
    /// The account whose index the source fills.
    public var account: AccountID
    /// The name of the account's index the source fills.
    public var indexName: String
    /// The kind's own settings, such as `root` for a file tree.
    public var settings: JSON

    /// Makes a definition.
    ///
    /// - Parameters:
    ///   - name: The source's name; empty to have `Store.addSource(_:)` choose `<kind>-<n>`.
    ///   - kind: What kind of source it is.
    ///   - account: The account whose index it fills.
    ///   - indexName: The index it fills; the store's default index when not given.
    ///   - settings: The kind's own settings.
    public init(
        name: String = "", kind: SourceKind, account: AccountID, indexName: String = Store.defaultIndexName,
        settings: JSON
    ) {
        self.name = name
        self.kind = kind
        self.account = account
        self.indexName = indexName
        self.settings = settings
    }

    /// The item owner of everything this source makes: `source:<name>`.
    public var owner: ItemOwner { .source(name) }

    /// The domain of everything this source makes: `account.<account>.source.<name>`.
    public var domain: DomainIdentifier { DomainIdentifier("account.\(account.rawValue).source.\(name)") }

    /// The identifier of an item: `<name>:<key>`, where the key is the source's own (a path within a root).
    public func identifier(_ key: String) -> ItemIdentifier { ItemIdentifier("\(name):\(key)") }

    /// The key of an identifier this source made, or `nil` if another source made it.
    public func key(of identifier: ItemIdentifier) -> String? {
        identifier.rawValue.hasPrefix(name + ":") ? String(identifier.rawValue.dropFirst(name.count + 1)) : nil
    }

    /// Fails with code `invalidArgument` unless `name` is 1 to 64 letters, digits, `.`, `-` or `_`, not
    /// starting with `.`: what a catalog storage checks before it adds a source.
    package static func validateName(_ name: String) throws {
        let valid =
            !name.isEmpty && name.count <= 64
            && name.unicodeScalars.allSatisfy {
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" || $0 == ".")
            } && !name.hasPrefix(".")
        if !valid {
            throw ReplicaError(
                .invalidArgument, "a source name must be 1 to 64 letters, digits, '.', '-' or '_'; '\(name)' is not")
        }
    }
}
