public import Foundation
import ReplicaCore
public import ReplicaIndex

/// The sentence-embedding models replica runs, by the names `REPLICA_MODEL` and the configuration file's
/// `model` take.
public enum EmbeddingModel: String, Sendable, CaseIterable {
    /// all-MiniLM-L6-v2: English, six layers (``MiniLMEmbedder``).
    case miniLM = "all-MiniLM-L6-v2"
    /// multilingual-e5-small: about a hundred languages, twelve layers (``MultilingualE5Embedder``).
    case multilingualE5 = "multilingual-e5-small"

    /// The model used when none is named: multilingual-e5-small, whose hybrid search scored the higher
    /// mean nDCG@10 over every question set measured, each weighing the same (two English FAQ sets, where
    /// MiniLM is 0.02–0.03 better, and eight in other languages, where MiniLM reads nothing and e5 adds
    /// 0.01 to 0.07 to the words: docs/benchmarks/languages.md), at 0.6 times MiniLM's passages a second.
    public static let `default` = EmbeddingModel.multilingualE5

    /// The model `REPLICA_MODEL` names, else `configured`, else ``default`` (`nil` for `off`, in either),
    /// and what chose it: `REPLICA_MODEL`, `the configuration file's model` or `the default`.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidConfiguration` for a name of no model, listing them.
    public static func choice(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        configured: String? = nil
    ) throws -> (model: EmbeddingModel?, chosenBy: String) {
        let given = environment["REPLICA_MODEL"].flatMap { $0.isEmpty ? nil : $0 }
        let chosenBy =
            given != nil ? "REPLICA_MODEL" : configured != nil ? "the configuration file's model" : "the default"
        guard let named = given ?? configured else { return (.default, chosenBy) }
        if named == "off" { return (nil, chosenBy) }
        guard let model = EmbeddingModel(rawValue: named) else {
            throw ReplicaError(
                .invalidConfiguration,
                "there is no embedding model '\(named)': name one of "
                    + allCases.map(\.rawValue).joined(separator: ", ") + ", or off")
        }
        return (model, chosenBy)
    }

    /// The model, to be loaded at its first use.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidConfiguration` when it is not installed.
    public func lazyEmbedder() throws -> any Embedder {
        switch self {
        case .miniLM: try LazyMiniLMEmbedder()
        case .multilingualE5: try LazyMultilingualE5Embedder()
        }
    }
}
