import ReplicaFileTree
import Testing

/// A test failure for an extraction result of the wrong kind.
struct UnexpectedExtractionResult: Error, CustomStringConvertible {
    let description: String
}

/// The documents of a result, failing the test when the file was skipped.
func documents(_ result: ExtractionResult) throws -> [ExtractedDocument] {
    guard case .documents(let documents) = result else {
        throw UnexpectedExtractionResult(description: "expected documents, got \(result)")
    }
    return documents
}

/// The only document of a result, failing the test when there is not exactly one.
func onlyDocument(_ result: ExtractionResult) throws -> ExtractedDocument {
    let all = try documents(result)
    guard all.count == 1 else {
        throw UnexpectedExtractionResult(description: "expected one document, got \(all.count)")
    }
    return all[0]
}

/// The skip reason of a result, failing the test when the file was extracted.
func skipReason(_ result: ExtractionResult) throws -> String {
    guard case .skipped(let reason) = result else {
        throw UnexpectedExtractionResult(description: "expected a skipped result, got \(result)")
    }
    return reason
}

/// Extracts a file given as a string (UTF-8).
func extract(_ fileName: String, _ text: String, limits: ExtractionLimits = ExtractionLimits()) -> ExtractionResult {
    TextExtractor.extract(fileName: fileName, bytes: Array(text.utf8), limits: limits)
}
