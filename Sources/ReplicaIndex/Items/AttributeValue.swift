public import Foundation
public import ReplicaCore

/// A person named in an item: an author, a recipient.
///
/// For example:
/// ```swift
/// Person(displayName: "Ada Lovelace", handles: ["ada@example.com"])
/// ```
public struct Person: Hashable, Sendable {
    /// The name to show.
    public var displayName: String?
    /// Email addresses, phone numbers or other handles.
    public var handles: [String]

    /// Creates a person from a name to show and any handles.
    public init(displayName: String?, handles: [String] = []) {
        self.displayName = displayName
        self.handles = handles
    }
}

/// The value of one attribute.
public enum AttributeValue: Hashable, Sendable {
    /// One string, such as a title.
    case text(String)
    /// Several strings, such as keywords.
    case texts([String])
    /// A point in time, such as when the content was modified.
    case date(Date)
    /// A number, such as a page count or a rating.
    case number(Double)
    /// Yes or no, such as whether a message was flagged.
    case bool(Bool)
    /// Raw bytes, such as a thumbnail; stored with the item, never matched by a query.
    case data(Data)
    /// People, such as a message's authors or recipients.
    case people([Person])

    /// The kind of a value, which a system key fixes.
    public enum Kind: String, Sendable, CaseIterable {
        /// A ``AttributeValue/text(_:)`` value.
        case text
        /// A ``AttributeValue/texts(_:)`` value.
        case texts
        /// A ``AttributeValue/date(_:)`` value.
        case date
        /// A ``AttributeValue/number(_:)`` value.
        case number
        /// A ``AttributeValue/bool(_:)`` value.
        case bool
        /// A ``AttributeValue/data(_:)`` value.
        case data
        /// A ``AttributeValue/people(_:)`` value.
        case people

        /// How the kind reads in an error message ("a string", "an array of strings", …).
        public var expectation: String {
            switch self {
            case .text: return "a string"
            case .texts: return "an array of strings"
            case .date: return "an ISO 8601 date string such as 2026-11-20T10:00:00Z"
            case .number: return "a number"
            case .bool: return "true or false"
            case .data: return "a base64 string"
            case .people: return "an array of people ({\"displayName\": …, \"handles\": […]}) or of names"
            }
        }
    }

    /// The kind of this value.
    public var kind: Kind {
        switch self {
        case .text: return .text
        case .texts: return .texts
        case .date: return .date
        case .number: return .number
        case .bool: return .bool
        case .data: return .data
        case .people: return .people
        }
    }

    /// The string of a `.text` value, or `nil` for any other kind.
    public var textValue: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// The value's strings: a text, the texts, or the people's names and handles.
    public var strings: [String] {
        switch self {
        case .text(let value): return [value]
        case .texts(let values): return values
        case .people(let people): return people.flatMap { [$0.displayName].compactMap { $0 } + $0.handles }
        default: return []
        }
    }

    /// The date of a `.date` value, or `nil` for any other kind.
    public var dateValue: Date? {
        if case .date(let value) = self { return value }
        return nil
    }

    /// The number of a `.number` value, or `nil` for any other kind.
    public var numberValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }
}

// MARK: - JSON

extension AttributeValue {
    /// Reads a value for `key` from JSON, as `replica import` and plugins give it.
    ///
    /// A system key needs its own kind of value. A custom key takes a string, an array of strings, a
    /// number or a boolean as they are, or a tagged object such as `{"date": "2026-11-20T10:00:00Z"}`
    /// or `{"data": "<base64>"}` for the kinds JSON has no literal for.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidItem` naming the key and the kind it needs.
    public static func fromJSON(_ json: JSON, for key: AttributeKey) throws -> AttributeValue {
        if let kind = key.kind {
            guard let value = decode(json, as: kind) else {
                throw ReplicaError(
                    .invalidItem, "attribute '\(key)' must be \(kind.expectation), not \(json.kindDescription)")
            }
            return value
        }
        switch json {
        case .string(let value): return .text(value)
        case .number(let value): return .number(value)
        case .bool(let value): return .bool(value)
        case .array(let values) where values.allSatisfy({ $0.stringValue != nil }):
            return .texts(values.compactMap(\.stringValue))
        case .object(let members) where members.count == 1:
            let (tag, inner) = members[0]
            if let kind = Kind(rawValue: tag), let value = decode(inner, as: kind) { return value }
        default: break
        }
        throw ReplicaError(
            .invalidItem,
            "custom attribute '\(key)' must be a string, a number, a boolean, an array of "
                + "strings, or an object such as {\"date\": \"2026-11-20T10:00:00Z\"}; it is \(json.kindDescription)")
    }

    private static func decode(_ json: JSON, as kind: Kind) -> AttributeValue? {
        switch kind {
        case .text:
            return json.stringValue.map(AttributeValue.text)
        case .texts:
            guard let array = json.arrayValue else { return nil }
            let strings = array.compactMap(\.stringValue)
            return strings.count == array.count ? .texts(strings) : nil
        case .date:
            return json.stringValue.flatMap(ISO8601.date(from:)).map(AttributeValue.date)
        case .number:
            return json.doubleValue.map(AttributeValue.number)
        case .bool:
            return json.boolValue.map(AttributeValue.bool)
        case .data:
            return json.stringValue.flatMap { Data(base64Encoded: $0) }.map(AttributeValue.data)
        case .people:
            guard let array = json.arrayValue else { return nil }
            var people: [Person] = []
            for element in array {
                if let name = element.stringValue {
                    people.append(Person(displayName: name))
                } else if element.objectValue != nil {
                    let name = element["displayName"]?.stringValue
                    let handles = element["handles"]?.arrayValue?.compactMap(\.stringValue) ?? []
                    guard name != nil || !handles.isEmpty else { return nil }
                    people.append(Person(displayName: name, handles: handles))
                } else {
                    return nil
                }
            }
            return .people(people)
        }
    }

    /// The value as JSON; for custom keys, kinds without a JSON literal are tagged so they read back.
    public func json(forCustomKey isCustom: Bool = false) -> JSON {
        switch self {
        case .text(let value): return .string(value)
        case .texts(let values): return .array(values.map(JSON.string))
        case .date(let value):
            let text = JSON.string(ISO8601.string(from: value))
            return isCustom ? .object([("date", text)]) : text
        case .number(let value): return .number(value)
        case .bool(let value): return .bool(value)
        case .data(let value):
            let text = JSON.string(value.base64EncodedString())
            return isCustom ? .object([("data", text)]) : text
        case .people(let people):
            let array = JSON.array(
                people.map { person in
                    .object(omittingNil: [
                        ("displayName", person.displayName.map(JSON.string)),
                        ("handles", .array(person.handles.map(JSON.string))),
                    ])
                })
            return isCustom ? .object([("people", array)]) : array
        }
    }
}
