public import Foundation

/// What a pipeline stage takes and makes.
public enum PipelineDataType: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Search results, in order (``PipelineData/items(_:)``).
    case items
    /// Search results each with a stage's score (``PipelineData/scoredItems(_:)``).
    case scoredItems
    /// Search results grouped by a shared value (``PipelineData/groupedItems(_:)``).
    case groupedItems
    /// A number of items (``PipelineData/count(_:)``).
    case count
    /// One named aggregate, such as an average (``PipelineData/statistic(name:value:)``).
    case statistic
    /// Rows and typed columns (``PipelineData/table(_:)``).
    case table
    /// Free text (``PipelineData/text(_:)``).
    case text
    /// The type's name, as the model and the replies see it.
    public var description: String { rawValue }
}

/// An item with the score a stage gave it (larger is better; the scale is the stage's).
public struct ScoredItem: Sendable {
    /// The item as the search found it.
    public var item: SearchResult
    /// The score the stage gave it.
    public var score: Double

    /// Pairs an item with a score.
    public init(item: SearchResult, score: Double) {
        self.item = item
        self.score = score
    }
}

/// Items that share a value of an attribute.
public struct ItemGroup: Sendable {
    /// The value the items share, as text.
    public var key: String
    /// The items that hold the value.
    public var items: [SearchResult]

    /// Makes a group of items that share `key`.
    public init(key: String, items: [SearchResult]) {
        self.key = key
        self.items = items
    }
}

/// A table: columns with a type, and rows of values aligned with them.
public struct ResultTable: Sendable, Equatable {
    /// One cell: a value of one of the column types, or `none` when there is no value.
    public enum Value: Sendable, Equatable {
        /// A text value.
        case string(String)
        /// A whole number.
        case integer(Int)
        /// A number with a fraction.
        case double(Double)
        /// A point in time.
        case date(Date)
        /// True or false.
        case boolean(Bool)
        /// No value in this cell.
        case none
    }

    /// A column's name and the type of its values.
    public struct Column: Sendable, Equatable {
        /// The column's name, such as an attribute's key.
        public var name: String
        /// The type of the column's values, as a word such as "string", "integer", "double" or "date".
        public var type: String
        /// Makes a column.
        public init(name: String, type: String) {
            self.name = name
            self.type = type
        }
    }

    /// A caption for the table, if any.
    public var header: String?
    /// The columns, in order.
    public var columns: [Column]
    /// The rows, each with one value per column, in column order.
    public var rows: [[Value]]

    /// Makes a table; each row should hold one value per column.
    public init(header: String? = nil, columns: [Column], rows: [[Value]]) {
        self.header = header
        self.columns = columns
        self.rows = rows
    }
}

/// What flows between stages, and what a reply carries.
public enum PipelineData: Sendable {
    /// Search results, in order.
    case items([SearchResult])
    /// Search results each with the score a stage gave it, in order.
    case scoredItems([ScoredItem])
    /// Search results grouped by a value they share.
    case groupedItems([ItemGroup])
    /// How many items there were.
    case count(Int)
    /// An aggregate such as an average; `nil` when there was nothing to aggregate.
    case statistic(name: String, value: Double?)
    /// A table of typed columns and rows.
    case table(ResultTable)
    /// Free text, such as a summary.
    case text(String)

    /// The type of the value, as stages declare what they take and make.
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

    /// The items this value holds, in order (scored and grouped items too; none for a count, statistic,
    /// table or text).
    public var results: [SearchResult] {
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
///         .scoredItems(input.results.map { result in
///             let age = Date().timeIntervalSince(result.item.attributeSet.contentModificationDate ?? result.indexedAt)
///             return ScoredItem(item: result, score: result.score + 1 / (1 + age / 86_400))
///         })
///     }
/// }
/// ```
public protocol CustomStage: Sendable {
    /// The name the model uses; letters, digits and `_`.
    var name: String { get }
    /// One or two sentences for the model: what the stage does and when to use it.
    var description: String { get }
    /// The types the stage accepts as input; a pipeline that feeds it any other type is refused.
    var inputTypes: [PipelineDataType] { get }
    /// The type `execute` returns, whatever the input; returning another type fails the stage.
    var outputType: PipelineDataType { get }
    /// The stage's arguments as JSON Schema properties (`nil`: none).
    var argumentProperties: JSON? { get }

    /// Runs the stage. `arguments` is what the model wrote beside `"stage"`.
    func execute(_ input: PipelineData, arguments: JSON) async throws -> PipelineData
}

extension CustomStage {
    /// No arguments: the default for stages that take none.
    public var argumentProperties: JSON? { nil }
}
