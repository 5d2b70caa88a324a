import Foundation
public import ReplicaCore

extension SearchableItem {
    /// Reads an entity from one line of `replica entities import`:
    ///
    ///     {"type": "LandmarkEntity", "id": "42", "title": "…", "subtitle": "…", "priority": 0–100,
    ///      "domainIdentifier": "…",
    ///      "properties": {"description": {"key": "contentDescription", "value": "…"},
    ///                     "continent": {"customKey": "com_example_continent", "value": "…"}},
    ///      "attributes": {…}}
    ///
    /// Property values take the kind their key does (a system key's, or any kind for a custom key), as
    /// attribute values do. The precedence is ``IndexedEntity``'s: the title and subtitle, then the
    /// properties, then the attributes.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidItem` naming the field at fault.
    public init(entityJSON json: JSON) throws {
        guard json.objectValue != nil else {
            throw ReplicaError(.invalidItem, "each line must be a JSON object, not \(json.kindDescription)")
        }
        guard let type = json["type"]?.stringValue, let id = json["id"]?.stringValue else {
            throw ReplicaError(.invalidItem, "an entity needs a \"type\" and an \"id\", both strings")
        }
        let reference = EntityReference(typeName: type, id: id)
        try reference.validate()
        func fail(_ problem: String) -> ReplicaError {
            ReplicaError(.invalidItem, "entity \(type) '\(id)': \(problem)")
        }
        var attributes: AttributeSet
        do {
            attributes = try json["attributes"].map(AttributeSet.init(json:)) ?? AttributeSet()
        } catch let error as ReplicaError {
            throw fail(error.message)
        }
        if let properties = json["properties"], !properties.isNull {
            guard let members = properties.objectValue else {
                throw fail("'properties' must be an object of named properties")
            }
            var mapped = AttributeSet()
            for (name, property) in members {
                let key: AttributeKey
                if let system = property["key"]?.stringValue {
                    key = AttributeKey(system)
                    guard key.isSystem else {
                        throw fail(
                            "property '\(name)': '\(system)' is not a Core Spotlight key; use \"customKey\" for your own"
                        )
                    }
                } else if let custom = property["customKey"]?.stringValue, !custom.isEmpty {
                    key = AttributeKey(custom)
                    guard !key.isSystem, !key.isInternal else {
                        throw fail("property '\(name)': customKey '\(custom)' is a system or reserved key; use \"key\"")
                    }
                } else {
                    throw fail("property '\(name)' needs a \"key\" (a Core Spotlight key) or a \"customKey\"")
                }
                do {
                    let one = try AttributeSet(json: .object([(key.rawValue, property["value"] ?? .null)]))
                    mapped[key] = one[key]
                } catch let error as ReplicaError {
                    throw fail("property '\(name)': \(error.message)")
                }
            }
            for key in mapped.keys { attributes[key] = mapped[key] }
        }
        guard let title = json["title"]?.stringValue, !title.isEmpty else {
            throw fail("an entity needs a non-empty \"title\"")
        }
        attributes.title = title
        if let subtitle = json["subtitle"], !subtitle.isNull {
            guard let text = subtitle.stringValue else { throw fail("'subtitle' must be a string") }
            attributes[.headline] = .text(text)
        }
        var priority = 0
        if let value = json["priority"], !value.isNull {
            guard let number = value.intValue, (0...100).contains(number) else {
                throw fail("'priority' must be a whole number from 0 to 100")
            }
            priority = number
        }
        var domain: DomainIdentifier?
        if let value = json["domainIdentifier"], !value.isNull {
            guard let text = value.stringValue else { throw fail("'domainIdentifier' must be a string") }
            domain = DomainIdentifier(text)
        }
        self.init(reference: reference, attributes: attributes, priority: priority, domainIdentifier: domain)
        try validate()
    }
}
