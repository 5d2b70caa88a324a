import Foundation

/// A comparison on an item's attribute, as the model writes it in `where` and `filter` stages.
struct Predicate: Sendable {
    enum Operator: String, Sendable, CaseIterable {
        case equal = "=", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
        case contains, startsWith, exists
    }

    var attribute: AttributeKey
    var op: Operator
    var value: JSON
    /// Other attributes whose values count as well (a focused field searches several).
    var alternatives: [AttributeKey] = []

    /// Whether `result` passes.
    func matches(_ result: SearchResult) -> Bool {
        let values = ([attribute] + alternatives).flatMap { Attribute.values(of: $0, in: result) }
        if op == .exists { return !values.isEmpty }
        return values.contains { compare($0) }
    }

    private func compare(_ actual: Attribute.Value) -> Bool {
        // A flag (isPriority) is held as the text "true" or "false"; a model may write the value as JSON's
        // true or false.
        let wantedText =
            value.stringValue ?? value.boolValue.map { $0 ? "true" : "false" }
            ?? value.doubleValue.map { JSON.format($0) }
        switch (actual, op) {
        case (.text(let text), .contains):
            return wantedText.map { text.localizedCaseInsensitiveContains($0) } ?? false
        case (.text(let text), .startsWith):
            return wantedText.map { text.lowercased().hasPrefix($0.lowercased()) } ?? false
        case (.text(let text), _):
            guard let wanted = wantedText else { return false }
            return order(text.lowercased().compare(wanted.lowercased()).rawValue)
        case (.number(let number), _):
            guard let wanted = self.value.doubleValue else { return false }
            return order(number < wanted ? -1 : number > wanted ? 1 : 0)
        case (.date(let date), _):
            guard let wanted = self.value.stringValue.flatMap(ToolDates.parse) else { return false }
            return order(date < wanted ? -1 : date > wanted ? 1 : 0)
        }
    }

    private func order(_ comparison: Int) -> Bool {
        switch op {
        case .equal: return comparison == 0
        case .notEqual: return comparison != 0
        case .less: return comparison < 0
        case .lessOrEqual: return comparison <= 0
        case .greater: return comparison > 0
        case .greaterOrEqual: return comparison >= 0
        case .contains, .startsWith, .exists: return false
        }
    }
}

/// Reads an item's attribute for stages, including a few of the result's own facts.
enum Attribute {
    enum Value: Sendable, Equatable {
        case text(String), number(Double), date(Date)
    }

    /// Names stages accept beside attribute names.
    static let pseudo: Set<String> = ["account", "identifier", "domain", "owner", "score"]

    static func values(of key: AttributeKey, in result: SearchResult) -> [Value] {
        switch key.rawValue {
        case "account": return [.text(result.account.rawValue)]
        case "identifier": return [.text(result.item.uniqueIdentifier.rawValue)]
        case "domain": return result.item.domainIdentifier.map { [.text($0.rawValue)] } ?? []
        case "owner": return [.text(result.origin.owner.rawValue)]
        case "score": return [.number(result.score)]
        default: break
        }
        switch result.item.attributeSet[key] {
        case .text(let text)?: return [.text(text)]
        case .texts(let texts)?: return texts.map(Value.text)
        case .people(let people)?:
            return people.flatMap { [$0.displayName].compactMap { $0 } + $0.handles }.map(Value.text)
        case .number(let number)?: return [.number(number)]
        case .date(let date)?: return [.date(date)]
        case .bool(let flag)?: return [.text(flag ? "true" : "false")]
        case .data?, nil: return []
        }
    }

    /// A value for sorting and tables: the first one.
    static func first(of key: AttributeKey, in result: SearchResult) -> Value? { values(of: key, in: result).first }
}
