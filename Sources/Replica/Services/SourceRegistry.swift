/// Makes the running form of the sources a store keeps, by kind.
///
/// The `Replica` library knows no source of its own: the package's `ReplicaFileTree`, `ReplicaGit` and
/// `ReplicaExec` products register theirs, and a host registers its own kinds beside them.
///
/// For example:
/// ```swift
/// var registry = SourceRegistry()
/// print(registry.kinds.isEmpty)   // true: the library registers no source of its own
/// // With ReplicaFileTree imported:
/// // registry.register(.files) { definition, store in try FileTreeSource(definition, storeDirectory: store.directory) }
/// registry.register(.exec) { definition, _ in
///     throw ReplicaError(.invalidConfiguration, "source '\(definition.name)': this app runs no plugins")
/// }
/// ```
public struct SourceRegistry: Sendable {
    /// Makes a source from its definition, for a store.
    public typealias Maker = @Sendable (SourceDefinition, Store) throws -> any Source

    private var makers: [SourceKind: Maker] = [:]

    /// An empty registry.
    public init() {}

    /// Makes sources of `kind` with `maker`, in place of any registered before.
    public mutating func register(_ kind: SourceKind, _ maker: @escaping Maker) {
        makers[kind] = maker
    }

    /// The kinds registered.
    public var kinds: Set<SourceKind> { Set(makers.keys) }

    /// The running form of `definition`.
    ///
    /// - Throws: `ReplicaError` with code `invalidConfiguration` for a kind nobody registered; whatever
    ///   the kind's maker throws for settings it cannot use.
    public func makeSource(for definition: SourceDefinition, store: Store) throws -> any Source {
        guard let maker = makers[definition.kind] else {
            throw ReplicaError(
                .invalidConfiguration,
                "source '\(definition.name)' is of kind '\(definition.kind)', which this build does not know")
        }
        return try maker(definition, store)
    }
}
