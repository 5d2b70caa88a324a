import Foundation

/// What a pipeline stage takes and makes.
public enum PipelineDataType: String, Sendable, CaseIterable, CustomStringConvertible {
    case items, scoredItems, groupedItems, count, statistic, table, text
    public var description: String { rawValue }
}

/// An item with the score a stage gave it (larger is better; the scale is the stage's).
public struct ScoredItem: Sendable {
    public var item: SearchResult
    public var score: Double

    public init(item: SearchResult, score: Double) {
        self.item = item
        self.score = score
    }
}

/// Items that share a value of an attribute.
public struct ItemGroup: Sendable {
    public var key: String
    public var items: [SearchResult]

    public init(key: String, items: [SearchResult]) {
        self.key = key
        self.items = items
    }
}

/// A table: columns with a type, and rows of values aligned with them.
public struct ResultTable: Sendable, Equatable {
    public enum Value: Sendable, Equatable {
        case string(String), integer(Int), double(Double), date(Date), boolean(Bool), none
    }

    public struct Column: Sendable, Equatable {
        public var name: String
        public var type: String
        public init(name: String, type: String) {
            self.name = name
            self.type = type
        }
    }

    public var header: String?
    public var columns: [Column]
    public var rows: [[Value]]

    public init(header: String? = nil, columns: [Column], rows: [[Value]]) {
        self.header = header
        self.columns = columns
        self.rows = rows
    }
}

/// What flows between stages, and what a reply carries.
public enum PipelineData: Sendable {
    case items([SearchResult])
    case scoredItems([ScoredItem])
    case groupedItems([ItemGroup])
    case count(Int)
    /// An aggregate such as an average; `nil` when there was nothing to aggregate.
    case statistic(name: String, value: Double?)
    case table(ResultTable)
    case text(String)

    public var type: PipelineDataType {
        switch self {
        case .items: return .items
        case .scoredItems: return .scoredItems
        case .groupedItems: return .groupedItems
        case .count: return .count
        case .statistic: return .statistic
        case .table: return .table
        case .text: return .text
        }
    }

    /// The items this value holds, in order (scored and grouped items too).
    var results: [SearchResult] {
        switch self {
        case .items(let items): return items
        case .scoredItems(let scored): return scored.map(\.item)
        case .groupedItems(let groups): return groups.flatMap(\.items)
        default: return []
        }
    }
}

/// A stage a host adds to what the model may put in a pipeline: it takes some types and makes one.
///
/// The model writes `{"stage": "<name>", …arguments}`; the arguments reach `execute` as JSON. A stage must
/// not keep state between runs: pipelines may run it in any order, several at once.
///
/// For example:
/// ```swift
/// struct RecencyBoost: CustomStage {
///     let name = "recency_boost"
///     let description = "Ranks recently modified items higher."
///     let inputTypes: [PipelineDataType] = [.items]
///     let outputType: PipelineDataType = .scoredItems
///     func execute(_ input: PipelineData, arguments: JSON) async throws -> PipelineData {
///         .scoredItems(input.results.map { ScoredItem(item: $0, score: … ) })
///     }
/// }
/// ```
public protocol CustomStage: Sendable {
    /// The name the model uses; letters, digits and `_`.
    var name: String { get }
    /// One or two sentences for the model: what the stage does and when to use it.
    var description: String { get }
    var inputTypes: [PipelineDataType] { get }
    var outputType: PipelineDataType { get }
    /// The stage's arguments as JSON Schema properties (`nil`: none).
    var argumentProperties: JSON? { get }

    /// Runs the stage. `arguments` is what the model wrote beside `"stage"`.
    func execute(_ input: PipelineData, arguments: JSON) async throws -> PipelineData
}

extension CustomStage {
    public var argumentProperties: JSON? { nil }
}
