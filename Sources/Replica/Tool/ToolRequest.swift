import Foundation

/// One query of a tool call, read from the model's arguments and checked against the guidance.
struct ToolQuery: Sendable {
    var text: String?
    var label: String?
    var contentTypes: [ContentType] = []
    var created: DateRange?
    var modified: DateRange?
    var authors: [String] = []
    var recipients: [String] = []
    var predicates: [Predicate] = []
    var limit = 20
    /// Only items with every word (the `allWords` argument, offered with complete guidance only).
    var requiresAllWords = false
    var stages: [Stage] = []
    /// The first query's arguments, for the label of replies.
    var summary: String { text.map { "“\($0)”" } ?? "filters only" }
}

/// Reads tool arguments: what the model may use is what the guidance allows; anything else is refused
/// with a sentence that says what to fix.
struct ToolRequestReader {
    let guide: Guide
    let customStages: [any CustomStage]
    let me: ResolvedContact?
    let now: Date

    static let maximumLimit = 100

    var profile: GuidanceProfile {
        switch guide.level {
        case .complete: return .all
        case .dynamic(let profile): return profile
        case .focused: return GuidanceProfile(textMatch: true)
        }
    }

    /// The queries of a call: `{"query": …, …}` or `{"queries": [{…}, …]}`.
    func read(_ arguments: JSON) throws -> [ToolQuery] {
        guard arguments.objectValue != nil else {
            throw ToolError("the arguments must be a JSON object such as {\"query\": \"some words\"}")
        }
        if let queries = arguments["queries"] {
            guard case .complete = guide.level else { throw ToolError("'queries' is not available; send one query") }
            guard let list = queries.arrayValue, !list.isEmpty, list.count <= 5 else {
                throw ToolError("'queries' must be a list of 1 to 5 query objects")
            }
            if let other = arguments.objectValue?.first(where: { $0.0 != "queries" }) {
                throw ToolError("'\(other.0)' goes inside each query when 'queries' is used")
            }
            return try list.enumerated().map { index, query in
                do { return try readQuery(query) } catch let error as ToolError {
                    throw ToolError("query \(index + 1): \(error.description)")
                }
            }
        }
        return [try readQuery(arguments)]
    }

    private func readQuery(_ json: JSON) throws -> ToolQuery {
        guard let members = json.objectValue else { throw ToolError("each query must be a JSON object") }
        var query = ToolQuery()
        let allowed: Set<String>
        switch guide.level {
        case .focused(let domain): allowed = Set(["query", "limit"] + domain.fields.keys)
        case .complete: allowed = ["query", "allWords", "filters", "limit", "stages", "label"]
        case .dynamic: allowed = ["query", "filters", "limit", "stages", "label"]
        }
        for (key, value) in members {
            guard allowed.contains(key) else {
                throw ToolError(
                    "unknown argument '\(key)'; the arguments are \(allowed.sorted().joined(separator: ", "))")
            }
            switch key {
            case "query":
                guard let text = value.stringValue else { throw ToolError("'query' must be a string of words") }
                query.text = text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? nil : text
            case "label":
                query.label = value.stringValue
            case "allWords":
                guard let flag = value.boolValue else { throw ToolError("'allWords' must be true or false") }
                query.requiresAllWords = flag
            case "limit":
                guard let limit = value.intValue, (1...Self.maximumLimit).contains(limit) else {
                    throw ToolError("'limit' must be a whole number from 1 to \(Self.maximumLimit)")
                }
                query.limit = limit
            case "filters":
                try readFilters(value, into: &query)
            case "stages":
                query.stages = try readStages(value)
            default:
                if case .focused(let domain) = guide.level { try readField(key, value, domain: domain, into: &query) }
            }
        }
        if case .focused(let domain) = guide.level, let types = domain.contentTypes {
            query.contentTypes = types
        }
        try checkTypes(query.stages)
        return query
    }

    // MARK: Filters

    private func readFilters(_ json: JSON, into query: inout ToolQuery) throws {
        guard let members = json.objectValue else { throw ToolError("'filters' must be an object") }
        let profile = profile
        for (key, value) in members {
            switch key {
            case "types" where profile.contentType:
                guard let list = value.arrayValue?.compactMap(\.stringValue), !list.isEmpty else {
                    throw ToolError("'filters.types' must be a list of type identifiers such as \"public.text\"")
                }
                query.contentTypes = try list.flatMap(contentTypes)
            case "created" where profile.dates: query.created = try readRange(value, "filters.created")
            case "modified" where profile.dates: query.modified = try readRange(value, "filters.modified")
            case "authors" where profile.people: query.authors = try readPeople(value, "filters.authors")
            case "recipients" where profile.people: query.recipients = try readPeople(value, "filters.recipients")
            case "where" where profile.numericMatch || profile.textMatch:
                guard let list = value.arrayValue else {
                    throw ToolError("'filters.where' must be a list of {attribute, op, value}")
                }
                query.predicates += try list.map(readPredicate)
            default:
                let names = [
                    (profile.contentType, "types"), (profile.dates, "created, modified"),
                    (profile.people, "authors, recipients"),
                    (profile.numericMatch || profile.textMatch, "where"),
                ].filter(\.0).map(\.1)
                throw ToolError("unknown filter '\(key)'; the filters are \(names.joined(separator: ", "))")
            }
        }
    }

    /// A type identifier (`public.text`), or a content domain's name for its types (`communications`).
    func contentTypes(_ name: String) throws -> [ContentType] {
        if name.contains(".") { return [ContentType(rawValue: name)] }
        guard let domain = ContentDomain.named(name) else {
            throw ToolError(
                "'\(name)' is neither a type identifier such as public.text nor a content domain ("
                    + ContentDomain.Kind.allCases.map(\.rawValue).joined(separator: ", ") + ")")
        }
        return domain.contentTypes ?? []
    }

    func readRange(_ json: JSON, _ name: String) throws -> DateRange {
        guard let members = json.objectValue, !members.isEmpty else {
            throw ToolError("'\(name)' must be {\"after\": DATE, \"before\": DATE} (either may be left out)")
        }
        var range = DateRange()
        for (key, value) in members {
            guard key == "after" || key == "before" else {
                throw ToolError("'\(name)' takes 'after' and 'before', not '\(key)'")
            }
            guard let text = value.stringValue, let date = ToolDates.parse(text, now: now) else {
                throw ToolError(
                    "'\(name).\(key)' is not a date; use 2026-11-20, 2026-11-20T10:00:00Z, today, yesterday or -7d")
            }
            if key == "after" { range.start = date } else { range.end = date }
        }
        return range
    }

    /// People as written; "me", "I" and "my" become the resolved identity's names and handles.
    func readPeople(_ json: JSON, _ name: String) throws -> [String] {
        let list = json.stringValue.map { [$0] } ?? json.arrayValue?.compactMap(\.stringValue)
        guard let list, !list.isEmpty else {
            throw ToolError("'\(name)' must be a name, an address, or a list of them")
        }
        return try list.flatMap { person -> [String] in
            guard ["me", "i", "my", "myself", "mine"].contains(person.lowercased()) else { return [person] }
            guard let me else {
                throw ToolError("'\(person)' cannot be resolved: no identity is known; name the person")
            }
            return me.allHandles
        }
    }

    func readPredicate(_ json: JSON) throws -> Predicate {
        guard let attribute = json["attribute"]?.stringValue, let opName = json["op"]?.stringValue else {
            throw ToolError("each condition needs an 'attribute', an 'op' and a 'value'")
        }
        guard let op = Predicate.Operator(rawValue: opName) else {
            throw ToolError(
                "'\(opName)' is not an operator; use "
                    + Predicate.Operator.allCases.map(\.rawValue).joined(separator: ", "))
        }
        let key = try checkAttribute(attribute)
        let value = json["value"] ?? .null
        let profile = profile
        switch op {
        case .contains, .startsWith:
            guard profile.textMatch else { throw ToolError("text comparisons ('\(opName)') are not available") }
            guard value.stringValue != nil else { throw ToolError("'\(opName)' needs a string value") }
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard profile.numericMatch || profile.dates else {
                throw ToolError("comparisons ('\(opName)') are not available")
            }
            guard value.doubleValue != nil || value.stringValue.flatMap({ ToolDates.parse($0, now: now) }) != nil else {
                throw ToolError("'\(opName)' on '\(attribute)' needs a number or a date")
            }
        case .equal, .notEqual:
            guard !value.isNull else { throw ToolError("'\(opName)' needs a value") }
        case .exists:
            break
        }
        return Predicate(attribute: key, op: op, value: value)
    }

    func checkAttribute(_ name: String) throws -> AttributeKey {
        let key = AttributeKey(name)
        guard !key.isInternal else { throw ToolError("'\(name)' is not an attribute you can use") }
        if let whitelist = profile.attributes, !whitelist.contains(key), !Attribute.pseudo.contains(name) {
            throw ToolError(
                "'\(name)' is not available; the attributes are " + whitelist.map(\.rawValue).joined(separator: ", "))
        }
        return key
    }

    // MARK: Focused fields

    private func readField(_ field: String, _ value: JSON, domain: ContentDomain, into query: inout ToolQuery) throws {
        let attributes = domain.fields[field] ?? []
        switch domain.fieldKinds[field] {
        case .dateRange?:
            let range = try readRange(value, field)
            guard let attribute = attributes.first else { return }
            if attribute == .contentCreationDate {
                query.created = range
            } else if attribute == .contentModificationDate {
                query.modified = range
            } else {
                let others = Array(attributes.dropFirst())
                if let start = range.start {
                    query.predicates.append(
                        Predicate(
                            attribute: attribute, op: .greaterOrEqual, value: .string(ISO8601.string(from: start)),
                            alternatives: others))
                }
                if let end = range.end {
                    query.predicates.append(
                        Predicate(
                            attribute: attribute, op: .less, value: .string(ISO8601.string(from: end)),
                            alternatives: others))
                }
            }
        case .person?:
            let people = try readPeople(value, field)
            if attributes.contains(.authorNames) || attributes.contains(.authors) {
                query.authors += people
            } else if attributes.contains(.recipientNames) || attributes.contains(.recipients)
                || attributes.contains(.participants)
            {
                query.recipients += people
            }
        default:
            guard let text = value.stringValue, !text.isEmpty else { throw ToolError("'\(field)' must be text") }
            guard let first = attributes.first else { return }
            query.predicates.append(
                Predicate(
                    attribute: first, op: .contains, value: .string(text), alternatives: Array(attributes.dropFirst())))
        }
    }

    // MARK: Stages

    private func readStages(_ json: JSON) throws -> [Stage] {
        guard let list = json.arrayValue else {
            throw ToolError("'stages' must be a list of stage objects such as {\"stage\": \"count\"}")
        }
        guard list.count <= 8 else { throw ToolError("a pipeline can have at most 8 stages") }
        return try list.enumerated().map { index, stage in
            do { return try readStage(stage) } catch let error as ToolError {
                throw ToolError("stage \(index + 1): \(error.description)")
            }
        }
    }

    private func readStage(_ json: JSON) throws -> Stage {
        guard let name = json["stage"]?.stringValue else { throw ToolError("each stage needs a \"stage\" name") }
        func attribute(_ key: String) throws -> AttributeKey {
            guard let text = json[key]?.stringValue else {
                throw ToolError("'\(name)' needs '\(key)' (an attribute name)")
            }
            return try checkAttribute(text)
        }
        switch name {
        case "filter":
            guard let list = json["where"]?.arrayValue, !list.isEmpty else {
                throw ToolError("'filter' needs 'where': a list of {attribute, op, value}")
            }
            return Stage(kind: .filter(try list.map(readPredicate)), name: name)
        case "sort":
            let by = json["by"]?.stringValue
            let key = by == nil || by == "relevance" ? nil : try checkAttribute(by!)
            guard json["order"] == nil || ["asc", "desc"].contains(json["order"]?.stringValue ?? "") else {
                throw ToolError("'order' must be \"asc\" or \"desc\"")
            }
            var limit: Int?
            if let value = json["limit"] {
                guard let number = value.intValue, (1...Self.maximumLimit).contains(number) else {
                    throw ToolError("'limit' must be a whole number from 1 to \(Self.maximumLimit)")
                }
                limit = number
            }
            return Stage(
                kind: .sort(by: key, descending: json["order"]?.stringValue != "asc", limit: limit), name: name)
        case "score":
            let recency = json["recency"]?.doubleValue ?? 0
            let priority = json["priority"]?.doubleValue ?? 0
            let engagement = json["engagement"]?.doubleValue ?? 0
            guard (0...10).contains(recency), (0...10).contains(priority), (0...10).contains(engagement) else {
                throw ToolError("'recency', 'priority' and 'engagement' are weights from 0 to 10")
            }
            return Stage(kind: .score(recency: recency, priority: priority, engagement: engagement), name: name)
        case "group":
            return Stage(kind: .group(by: try attribute("by")), name: name)
        case "count":
            return Stage(kind: .count, name: name)
        case "table":
            guard let columns = json["columns"]?.arrayValue?.compactMap(\.stringValue), !columns.isEmpty,
                columns.count <= 8
            else {
                throw ToolError("'table' needs 'columns': a list of 1 to 8 attribute names")
            }
            return Stage(kind: .table(columns: try columns.map(checkAttribute)), name: name)
        case "statistic":
            guard let function = json["function"]?.stringValue, Stage.statisticFunctions.contains(function) else {
                throw ToolError(
                    "'statistic' needs 'function': one of " + Stage.statisticFunctions.joined(separator: ", "))
            }
            let key = try attribute("attribute")
            if let holding = Stage.holding(key), let refusal = Stage.refusal(function, key, holding: holding) {
                throw ToolError(refusal)
            }
            return Stage(kind: .statistic(function: function, attribute: key), name: name)
        case "text":
            return Stage(kind: .text, name: name)
        default:
            guard let custom = customStages.first(where: { $0.name == name }) else {
                throw ToolError(
                    "unknown stage '\(name)'; the stages are "
                        + (Stage.builtInNames + customStages.map(\.name)).joined(separator: ", "))
            }
            let arguments = JSON.object((json.objectValue ?? []).filter { $0.0 != "stage" })
            return Stage(kind: .custom(custom, arguments: arguments), name: name)
        }
    }

    /// Checks that each stage takes what the one before it makes (the first takes items).
    private func checkTypes(_ stages: [Stage]) throws {
        var current = PipelineDataType.items
        for (index, stage) in stages.enumerated() {
            guard let next = stage.outputType(for: current) else {
                let before = index == 0 ? "the search" : "stage \(index) (\(stages[index - 1].name))"
                throw ToolError(
                    "stage \(index + 1) (\(stage.name)) cannot follow \(before), which makes \(current); "
                        + "\(stage.name) takes " + stage.accepted.map(\.rawValue).joined(separator: " or "))
            }
            current = next
        }
    }
}
