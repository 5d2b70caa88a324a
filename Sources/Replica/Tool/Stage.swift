import Foundation

/// One step of a pipeline, parsed and checked.
struct Stage: Sendable {
    enum Kind: Sendable {
        case filter([Predicate])
        case sort(by: AttributeKey?, descending: Bool, limit: Int?)
        case score(recency: Double, priority: Double, engagement: Double)
        case group(by: AttributeKey)
        case count
        case table(columns: [AttributeKey])
        case statistic(function: String, attribute: AttributeKey)
        case text
        case custom(any CustomStage, arguments: JSON)
    }

    var kind: Kind
    /// The name the model used.
    var name: String

    static let builtInNames = ["filter", "sort", "score", "group", "count", "table", "statistic", "text"]
    static let statisticFunctions = ["min", "max", "sum", "average", "count"]

    /// The type this stage makes from `input`, or `nil` when it does not take `input`.
    func outputType(for input: PipelineDataType) -> PipelineDataType? {
        let itemLike: Set<PipelineDataType> = [.items, .scoredItems]
        switch kind {
        case .filter, .sort: return itemLike.contains(input) ? input : nil
        case .score: return input == .items || input == .scoredItems ? .scoredItems : nil
        case .group: return itemLike.contains(input) ? .groupedItems : nil
        case .count: return itemLike.contains(input) || input == .groupedItems ? .count : nil
        case .table: return itemLike.contains(input) || input == .groupedItems ? .table : nil
        case .statistic: return itemLike.contains(input) ? .statistic : nil
        case .text: return .text
        case .custom(let stage, _): return stage.inputTypes.contains(input) ? stage.outputType : nil
        }
    }

    /// What the stage takes, for error messages.
    var accepted: [PipelineDataType] {
        switch kind {
        case .filter, .sort, .score, .statistic: return [.items, .scoredItems]
        case .group: return [.items, .scoredItems]
        case .count, .table: return [.items, .scoredItems, .groupedItems]
        case .text: return PipelineDataType.allCases
        case .custom(let stage, _): return stage.inputTypes
        }
    }

    /// A short label for replies.
    var label: String {
        switch kind {
        case .filter(let predicates):
            return "filter "
                + predicates.map { "\($0.attribute) \($0.op.rawValue) \($0.value.serialized())" }.joined(
                    separator: ", ")
        case .sort(let by, let descending, _):
            return "sort by \(by?.rawValue ?? "relevance")\(descending ? "" : " ascending")"
        case .score: return "score"
        case .group(let by): return "group by \(by)"
        case .count: return "count"
        case .table(let columns): return "table of " + columns.map(\.rawValue).joined(separator: ", ")
        case .statistic(let function, let attribute): return "\(function) of \(attribute)"
        case .text: return "text"
        case .custom(let stage, _): return stage.name
        }
    }

    // MARK: Running

    func run(_ input: PipelineData, now: Date) async throws -> PipelineData {
        switch (kind, input) {
        case (.filter(let predicates), .items(let items)):
            return .items(items.filter { item in predicates.allSatisfy { $0.matches(item) } })
        case (.filter(let predicates), .scoredItems(let items)):
            return .scoredItems(items.filter { item in predicates.allSatisfy { $0.matches(item.item) } })
        case (.sort(let by, let descending, let limit), .items(let items)):
            let sorted = Self.sort(items.map { ScoredItem(item: $0, score: $0.score) }, by: by, descending: descending)
            return .items(Array(sorted.prefix(limit ?? .max)).map(\.item))
        case (.sort(let by, let descending, let limit), .scoredItems(let items)):
            return .scoredItems(Array(Self.sort(items, by: by, descending: descending).prefix(limit ?? .max)))
        case (.score(let recency, let priority, let engagement), _):
            return .scoredItems(
                Self.score(input.results, recency: recency, priority: priority, engagement: engagement, now: now))
        case (.group(let by), _):
            return .groupedItems(Self.group(input.results, by: by))
        case (.count, .groupedItems(let groups)):
            return .count(Set(groups.flatMap { $0.items.map(\.item.uniqueIdentifier) }).count)
        case (.count, _):
            return .count(input.results.count)
        case (.table, .groupedItems(let groups)):
            return .table(
                ResultTable(
                    columns: [.init(name: "group", type: "string"), .init(name: "count", type: "integer")],
                    rows: groups.map { [.string($0.key), .integer($0.items.count)] }))
        case (.table(let columns), _):
            return .table(Self.table(input.results, columns: columns))
        case (.statistic(let function, let attribute), _):
            return try Self.statistic(function, attribute, input.results)
        case (.text, _):
            return .text(ToolOutput.plainText(input))
        case (.custom(let stage, let arguments), _):
            let output = try await stage.execute(input, arguments: arguments)
            guard output.type == stage.outputType else {
                throw ToolError("stage '\(stage.name)' made \(output.type) but declares \(stage.outputType)")
            }
            return output
        default:
            throw ToolError("stage '\(name)' cannot take \(input.type)")
        }
    }

    static func sort(_ items: [ScoredItem], by key: AttributeKey?, descending: Bool) -> [ScoredItem] {
        guard let key else {
            return items.sorted { descending ? $0.score > $1.score : $0.score < $1.score }
        }
        // Items without the attribute go last, whichever the order.
        return items.enumerated().sorted { a, b in
            let left = Attribute.first(of: key, in: a.element.item)
            let right = Attribute.first(of: key, in: b.element.item)
            switch (left, right) {
            case (nil, nil): return a.offset < b.offset
            case (nil, _): return false
            case (_, nil): return true
            case (let l?, let r?):
                let order = compare(l, r)
                return order == 0 ? a.offset < b.offset : (descending ? order > 0 : order < 0)
            }
        }.map(\.element)
    }

    static func compare(_ a: Attribute.Value, _ b: Attribute.Value) -> Int {
        switch (a, b) {
        case (.number(let x), .number(let y)): return x < y ? -1 : x > y ? 1 : 0
        case (.date(let x), .date(let y)): return x < y ? -1 : x > y ? 1 : 0
        case (.text(let x), .text(let y)): return x.localizedCaseInsensitiveCompare(y).rawValue
        default: return 0
        }
    }

    /// Relevance (the best score scaled to 1) plus weighted recency (halving every 30 days), priority
    /// (`isPriority` as 1 or 0, else a numeric `priority` attribute, else the rating out of 5), and
    /// engagement (from the account's user activities, 0 to 1: `Engagement`). Relevance already holds a
    /// little engagement (at most `Engagement.weight`, as every search ranks); the weight here adds more,
    /// so that a model asking for "what I use most" can have it lead.
    static func score(_ items: [SearchResult], recency: Double, priority: Double, engagement: Double = 0, now: Date)
        -> [ScoredItem]
    {
        let best = items.map(\.score).max() ?? 0
        return items.map { item in
            var score = best > 0 ? item.score / best : 0
            let date = item.item.attributeSet.contentModificationDate ?? item.indexedAt
            let days = max(0, now.timeIntervalSince(date) / 86_400)
            score += recency * pow(0.5, days / 30)
            let attributes = item.item.attributeSet
            if let value = attributes.isPriority.map({ $0 ? 1.0 : 0 }) ?? attributes[AttributeKey("priority")]?
                .numberValue ?? attributes.rating.map({ $0 / 5 })
            {
                score += priority * value
            }
            score += engagement * item.engagement
            return ScoredItem(item: item, score: (score * 10_000).rounded() / 10_000)
        }.sorted { $0.score > $1.score }
    }

    static func group(_ items: [SearchResult], by key: AttributeKey) -> [ItemGroup] {
        var groups: [String: [SearchResult]] = [:]
        var order: [String] = []
        for item in items {
            let keys = Attribute.values(of: key, in: item).map { value -> String in
                switch value {
                case .text(let text): return text
                case .number(let number): return JSON.format(number)
                case .date(let date): return String(ISO8601.string(from: date).prefix(10))
                }
            }
            for group in Set(keys.isEmpty ? ["(none)"] : keys).sorted() {
                if groups[group] == nil { order.append(group) }
                groups[group, default: []].append(item)
            }
        }
        return order.map { ItemGroup(key: $0, items: groups[$0]!) }.sorted {
            $0.items.count > $1.items.count || ($0.items.count == $1.items.count && $0.key < $1.key)
        }
    }

    static func table(_ items: [SearchResult], columns: [AttributeKey]) -> ResultTable {
        var types: [String] = Array(repeating: "string", count: columns.count)
        let rows: [[ResultTable.Value]] = items.map { item in
            columns.enumerated().map { index, key in
                switch Attribute.first(of: key, in: item) {
                case .text(let text)?: return .string(text)
                case .number(let number)?:
                    types[index] = number.rounded() == number ? "integer" : "double"
                    return number.rounded() == number && abs(number) < 1e15 ? .integer(Int(number)) : .double(number)
                case .date(let date)?:
                    types[index] = "date"
                    return .date(date)
                case nil: return .none
                }
            }
        }
        return ResultTable(columns: zip(columns, types).map { .init(name: $0.rawValue, type: $1) }, rows: rows)
    }

    /// What each statistic function takes, for the model when it asks for one that cannot be computed.
    static let statisticRule =
        "sum takes numbers (such as rating, fileSize, pageCount, duration, or a custom attribute that holds "
        + "numbers); average, min and max take numbers or dates; count takes any attribute and counts the items that have it"

    /// What an attribute holds when that is known before any item is read ("text", "dates", "numbers",
    /// …), or `nil` for a custom attribute, whose values tell.
    static func holding(_ key: AttributeKey) -> String? {
        switch key.rawValue {
        case "account", "identifier", "domain", "owner": return "text"
        case "score": return "numbers"
        default: break
        }
        switch key.kind {
        case .text?, .texts?: return "text"
        case .people?: return "people"
        case .bool?: return "true or false"
        case .data?: return "data"
        case .date?: return "dates"
        case .number?: return "numbers"
        case nil: return nil
        }
    }

    /// Why `function` cannot be computed over an attribute holding `holding`, or `nil` when it can.
    static func refusal(_ function: String, _ key: AttributeKey, holding: String) -> String? {
        if function == "count" || holding == "numbers" || (holding == "dates" && function != "sum") { return nil }
        return "'\(function)' cannot use '\(key)', which holds \(holding); " + statisticRule
    }

    /// `count` counts the items that have the attribute, whatever it holds; the others compute over its
    /// numbers (and, but for `sum`, dates). An attribute whose kind is not declared (a custom one) is
    /// refused here when the items hold only text in it.
    static func statistic(_ function: String, _ attribute: AttributeKey, _ items: [SearchResult]) throws -> PipelineData
    {
        let name = "\(function) \(attribute)"
        if function == "count" {
            return .statistic(
                name: name, value: Double(items.filter { !Attribute.values(of: attribute, in: $0).isEmpty }.count))
        }
        var numbers: [Double] = []
        var dates: [Double] = []
        var texts = 0
        for item in items {
            switch Attribute.first(of: attribute, in: item) {
            case .number(let number)?: numbers.append(number)
            case .date(let date)?: dates.append(date.timeIntervalSince1970)
            case .text?: texts += 1
            case nil: break
            }
        }
        if numbers.isEmpty {
            if !dates.isEmpty, let refusal = refusal(function, attribute, holding: "dates") { throw ToolError(refusal) }
            if dates.isEmpty && texts > 0, let refusal = refusal(function, attribute, holding: "text") {
                throw ToolError(refusal)
            }
        }
        // An attribute holds one kind of value; should items disagree, the numbers count.
        let values = numbers.isEmpty ? dates : numbers
        switch function {
        case "sum": return .statistic(name: name, value: values.reduce(0, +))
        case "min": return .statistic(name: name, value: values.min())
        case "max": return .statistic(name: name, value: values.max())
        default: return .statistic(name: name, value: values.isEmpty ? nil : values.reduce(0, +) / Double(values.count))
        }
    }
}
