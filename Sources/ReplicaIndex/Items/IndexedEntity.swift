import Foundation
public import ReplicaCore

/// An app entity that can be indexed directly, as App Intents' `IndexedEntity` is: a type name, a stable
/// identifier, a display representation, and properties mapped to attribute keys.
///
/// The item an entity becomes is built from, in order of precedence (a later source never overwrites an
/// earlier one): the display representation (title → `title`, subtitle → `headline`); the properties
/// mapped to a system key (`indexingKey`) or a custom key (`customIndexingKey`); then the entity's own
/// ``attributeSet`` for everything else. Its identifier is `entity:<type name>:<identifier>`, so indexing
/// the same entity again updates it, and search results of entities say which entity they are.
///
/// For example:
/// ```swift
/// struct LandmarkEntity: IndexedEntity {
///     static let typeName = "LandmarkEntity"
///     var id: String
///     var name: String
///     var summary: String
///     var continent: String
///
///     var displayRepresentation: EntityDisplayRepresentation { EntityDisplayRepresentation(title: name) }
///     var indexedProperties: [EntityProperty] {
///         [EntityProperty(indexingKey: .contentDescription, value: .text(summary)),
///          EntityProperty(customIndexingKey: "com_example_continent", value: .text(continent))]
///     }
/// }
/// try await index.indexEntities([LandmarkEntity(id: "42", name: "Matterhorn", summary: "A pyramid-shaped peak",
///                                               continent: "Europe")], priority: 10)
/// ```
public protocol IndexedEntity: Sendable {
    /// The entity type's name, such as `LandmarkEntity`: letters, digits, `.`, `-` and `_`.
    static var typeName: String { get }
    /// The entity's stable identifier within its type.
    var id: String { get }
    /// How the entity is shown: its title and subtitle.
    var displayRepresentation: EntityDisplayRepresentation { get }
    /// Properties indexed under a system or custom key. Empty by default.
    var indexedProperties: [EntityProperty] { get }
    /// Everything else to index; properties and the display representation win over it. Empty by default.
    var attributeSet: AttributeSet { get }
}

extension IndexedEntity {
    /// No properties, by default.
    public var indexedProperties: [EntityProperty] { [] }
    /// No attributes, by default.
    public var attributeSet: AttributeSet { AttributeSet() }
}

/// How an entity is shown: a title and an optional subtitle.
public struct EntityDisplayRepresentation: Hashable, Sendable {
    /// The entity's title, indexed as `title`.
    public var title: String
    /// The entity's subtitle, indexed as `headline`.
    public var subtitle: String?

    /// Creates a display representation from a title and an optional subtitle.
    public init(title: String, subtitle: String? = nil) {
        self.title = title
        self.subtitle = subtitle
    }
}

/// One property of an entity and the attribute key it is indexed under.
public struct EntityProperty: Hashable, Sendable {
    /// The attribute the property fills: a Core Spotlight system key or an app's custom key.
    public var key: AttributeKey
    /// The property's value.
    public var value: AttributeValue

    /// A property indexed under a system key (App Intents' `indexingKey`).
    public init(indexingKey: AttributeKey, value: AttributeValue) {
        key = indexingKey
        self.value = value
    }

    /// A property indexed under a key of the app's own (App Intents' `customIndexingKey`).
    public init(customIndexingKey: String, value: AttributeValue) {
        key = AttributeKey(customIndexingKey)
        self.value = value
    }
}

/// Which entity a searchable item is: its type name and identifier.
public struct EntityReference: Hashable, Sendable {
    /// The entity type's name, such as `LandmarkEntity`.
    public var typeName: String
    /// The entity's identifier within its type.
    public var id: String

    /// Creates a reference from an entity type's name and an identifier, without validating them (see ``validate()``).
    public init(typeName: String, id: String) {
        self.typeName = typeName
        self.id = id
    }

    /// The item identifier an entity is indexed under: `entity:<type name>:<identifier>`.
    public var itemIdentifier: ItemIdentifier { ItemIdentifier("entity:\(typeName):\(id)") }

    /// `{"type": …, "id": …}`, as results and `replica get` print it.
    public var json: JSON { .object([("type", .string(typeName)), ("id", .string(id))]) }

    /// Checks the type name: 1 to 128 letters, digits, `.`, `-` and `_` (it is part of item identifiers).
    public func validate() throws {
        let valid =
            !typeName.isEmpty && typeName.count <= 128
            && typeName.unicodeScalars.allSatisfy {
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "." || $0 == "-" || $0 == "_")
            }
        guard valid else {
            throw ReplicaError(
                .invalidItem, "entity type '\(typeName)' must be 1 to 128 ASCII letters, digits, '.', '-' or '_'")
        }
        guard !id.isEmpty else { throw ReplicaError(.invalidItem, "an entity of type '\(typeName)' has an empty id") }
        guard !id.utf8.contains(0) else {
            throw ReplicaError(
                .invalidItem,
                "an entity of type '\(typeName)' has an id holding the character U+0000 (NUL), which no command can name: take it out"
            )
        }
    }
}

extension AttributeKey {
    /// The type name of the entity an item is (internal: never shown to a model as an attribute).
    public static let entityType: AttributeKey = "replica.entityType"
    /// The identifier of the entity an item is.
    public static let entityID: AttributeKey = "replica.entityID"
    /// The ranking priority an entity was indexed with, 0 to 100.
    public static let entityPriority: AttributeKey = "replica.entityPriority"
}

extension SearchableItem {
    /// The item an entity becomes (see ``IndexedEntity``), with its priority (0–100) recorded.
    public init<Entity: IndexedEntity>(entity: Entity, priority: Int = 0, domainIdentifier: DomainIdentifier? = nil) {
        let reference = EntityReference(typeName: Entity.typeName, id: entity.id)
        var attributes = entity.attributeSet
        for property in entity.indexedProperties { attributes[property.key] = property.value }
        let display = entity.displayRepresentation
        attributes.title = display.title
        if let subtitle = display.subtitle { attributes[.headline] = .text(subtitle) }
        self.init(reference: reference, attributes: attributes, priority: priority, domainIdentifier: domainIdentifier)
    }

    /// The item of an entity given by its parts (`replica entities import` reads these).
    public init(
        reference: EntityReference, attributes: AttributeSet, priority: Int, domainIdentifier: DomainIdentifier? = nil
    ) {
        var attributes = attributes
        attributes[.entityType] = .text(reference.typeName)
        attributes[.entityID] = .text(reference.id)
        attributes[.entityPriority] = priority == 0 ? nil : .number(Double(min(max(priority, 0), 100)))
        self.init(
            uniqueIdentifier: reference.itemIdentifier, domainIdentifier: domainIdentifier, attributeSet: attributes,
            expirationDate: .distantFuture)
    }

    /// The entity this item is, if it is one.
    public var entity: EntityReference? {
        guard let type = attributeSet[.entityType]?.textValue, let id = attributeSet[.entityID]?.textValue else {
            return nil
        }
        return EntityReference(typeName: type, id: id)
    }
}
