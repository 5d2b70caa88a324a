import COpenBLAS
import Foundation
import ReplicaCore

/// A BERT encoder with mean pooling, as sentence-transformers runs all-MiniLM-L6-v2: token, position and
/// type embeddings, then post-norm layers of self-attention and a GELU feed-forward network, then the mean
/// of the token vectors, L2-normalised.
///
/// Sequences are not padded: the dense layers run once over the tokens of a whole batch stacked as rows
/// (one matrix product each, through OpenBLAS), and attention runs per sequence and head.
struct BertEncoder: Sendable {
    let hidden = 384
    let heads = 12
    let intermediate = 1536
    let maximumPositions = 512

    /// The large matrices stay where the mapped weights file has them (``SafeTensors/Tensor``); the
    /// stacked query-key-value matrix and the small vectors are arrays of their own.
    private struct Layer: Sendable {
        /// Query, key and value weights stacked: [3 × hidden, hidden], and their biases.
        var qkv: [Float], qkvBias: [Float]
        var attentionOutput: SafeTensors.Tensor, attentionOutputBias: [Float]
        var norm1: [Float], norm1Bias: [Float]
        var up: SafeTensors.Tensor, upBias: [Float]
        var down: SafeTensors.Tensor, downBias: [Float]
        var norm2: [Float], norm2Bias: [Float]
    }

    private let words: SafeTensors.Tensor
    private let positions: SafeTensors.Tensor
    private let tokenType: [Float]
    private let embeddingNorm: [Float], embeddingNormBias: [Float]
    private let layers: [Layer]

    static let wordTableName = "embeddings.word_embeddings.weight"

    /// Reads the weights the encoder needs, checking each tensor's shape and, but for the word table,
    /// that its values are finite numbers: those tensors are read whole by every embedding anyway. The
    /// word table's rows are checked as words use them (``embed(_:)``), so that a query still reads only
    /// its few rows of the 47 MB table.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidConfiguration` for a missing tensor, one of another
    ///   shape, or one holding NaN or infinity.
    init(weights: SafeTensors, vocabularySize: Int, layerCount: Int = 6) throws {
        let h = 384, inner = 1536, positionCount = 512
        words = try weights.tensor(Self.wordTableName, shape: [vocabularySize, h], checkingValues: false)
        positions = try weights.tensor("embeddings.position_embeddings.weight", shape: [positionCount, h])
        tokenType = Array(try weights.tensor("embeddings.token_type_embeddings.weight", shape: [2, h]).values.prefix(h))
        embeddingNorm = try weights.tensor("embeddings.LayerNorm.weight", shape: [h]).array
        embeddingNormBias = try weights.tensor("embeddings.LayerNorm.bias", shape: [h]).array
        layers = try (0..<layerCount).map { n in
            let p = "encoder.layer.\(n)."
            func t(_ name: String, _ shape: [Int]) throws -> SafeTensors.Tensor { try weights.tensor(p + name, shape: shape) }
            func w(_ name: String, _ shape: [Int]) throws -> [Float] { try t(name, shape).array }
            return Layer(
                qkv: try w("attention.self.query.weight", [h, h]) + w("attention.self.key.weight", [h, h]) + w("attention.self.value.weight", [h, h]),
                qkvBias: try w("attention.self.query.bias", [h]) + w("attention.self.key.bias", [h]) + w("attention.self.value.bias", [h]),
                attentionOutput: try t("attention.output.dense.weight", [h, h]), attentionOutputBias: try w("attention.output.dense.bias", [h]),
                norm1: try w("attention.output.LayerNorm.weight", [h]), norm1Bias: try w("attention.output.LayerNorm.bias", [h]),
                up: try t("intermediate.dense.weight", [inner, h]), upBias: try w("intermediate.dense.bias", [inner]),
                down: try t("output.dense.weight", [h, inner]), downBias: try w("output.dense.bias", [h]),
                norm2: try w("output.LayerNorm.weight", [h]), norm2Bias: try w("output.LayerNorm.bias", [h]))
        }
    }

    /// One unit vector per sequence of token ids ([CLS] … [SEP], at most 512).
    ///
    /// - Throws: ``ReplicaError`` with code `invalidConfiguration` when a word's row of the table, or a
    ///   vector made, holds a value that is not a finite number (a damaged weights file): no such vector
    ///   is ever returned.
    func embed(_ sequences: [[Int32]]) throws -> [[Float]] {
        guard !sequences.isEmpty else { return [] }
        let h = hidden
        let rows = sequences.reduce(0) { $0 + $1.count }
        var x = [Float](repeating: 0, count: rows * h)
        var row = 0
        for sequence in sequences {
            for (position, id) in sequence.enumerated() {
                let word = Int(id) * h, place = position * h, target = row * h
                var finite = true
                for i in 0..<h {
                    let value = words.values[word + i]
                    finite = finite && value.isFinite
                    x[target + i] = value + positions.values[place + i] + tokenType[i]
                }
                guard finite else { throw SafeTensors.damaged(Self.wordTableName, row: Int(id)) }
                row += 1
            }
        }
        Self.normalize(&x, rows: rows, width: h, gain: embeddingNorm, bias: embeddingNormBias)
        for layer in layers { apply(layer, to: &x, rows: rows, sequences: sequences) }

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
                throw ReplicaError(.invalidConfiguration, "the model made a vector that is not finite numbers: its weights are damaged or out of range; "
                                   + "install it again (scripts/setup-model.sh)")
            }
            vectors.append(vector)
        }
        return vectors
    }

    private func apply(_ layer: Layer, to x: inout [Float], rows: Int, sequences: [[Int32]]) {
        let h = hidden, headSize = hidden / heads
        var qkv = layer.qkv.withUnsafeBufferPointer { qkv in
            Self.linear(x, rows: rows, inputs: h, weights: qkv.baseAddress!, bias: layer.qkvBias, outputs: 3 * h)
        }
        var context = [Float](repeating: 0, count: rows * h)
        var start = 0
        let scale = 1 / Float(headSize).squareRoot()
        qkv.withUnsafeMutableBufferPointer { qkv in
            context.withUnsafeMutableBufferPointer { context in
                for sequence in sequences {
                    let n = sequence.count
                    var scores = [Float](repeating: 0, count: n * n)
                    for head in 0..<heads {
                        let q = qkv.baseAddress! + start * 3 * h + head * headSize
                        let k = q + h, v = q + 2 * h
                        // scores = Q·Kᵀ/√d, each row a softmax, then context = scores·V.
                        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Int32(n), Int32(n), Int32(headSize),
                                    scale, q, Int32(3 * h), k, Int32(3 * h), 0, &scores, Int32(n))
                        scores.withUnsafeMutableBufferPointer { scores in
                            for r in 0..<n {
                                let row = scores.baseAddress! + r * n
                                var largest = -Float.infinity
                                for c in 0..<n { largest = max(largest, row[c]) }
                                let sum = VectorMath.exponentiate(UnsafeMutableBufferPointer(start: row, count: n), subtracting: largest)
                                let inverse = 1 / sum
                                for c in 0..<n { row[c] *= inverse }
                            }
                        }
                        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Int32(n), Int32(headSize), Int32(n),
                                    1, scores, Int32(n), v, Int32(3 * h), 0, context.baseAddress! + start * h + head * headSize, Int32(h))
                    }
                    start += n
                }
            }
        }
        // The residual is added by the matrix product itself (beta 1 on a copy of the input).
        var attended = Self.linear(context, rows: rows, inputs: h, weights: layer.attentionOutput.values.baseAddress!, bias: layer.attentionOutputBias, outputs: h, adding: x)
        Self.normalize(&attended, rows: rows, width: h, gain: layer.norm1, bias: layer.norm1Bias)
        var up = Self.linear(attended, rows: rows, inputs: h, weights: layer.up.values.baseAddress!, bias: layer.upBias, outputs: intermediate)
        // BERT's GELU: the form with erf, not the tanh approximation.
        up.withUnsafeMutableBufferPointer { VectorMath.gelu($0) }
        var down = Self.linear(up, rows: rows, inputs: intermediate, weights: layer.down.values.baseAddress!, bias: layer.downBias, outputs: h, adding: attended)
        Self.normalize(&down, rows: rows, width: h, gain: layer.norm2, bias: layer.norm2Bias)
        x = down
    }

    /// `input · weightsᵀ + bias (+ residual)` for `rows` rows; weights are [outputs, inputs] as PyTorch
    /// keeps them.
    private static func linear(_ input: [Float], rows: Int, inputs: Int, weights: UnsafePointer<Float>, bias: [Float], outputs: Int,
                               adding residual: [Float]? = nil) -> [Float] {
        var output = residual ?? [Float](repeating: 0, count: rows * outputs)
        output.withUnsafeMutableBufferPointer { output in
            bias.withUnsafeBufferPointer { bias in
                for r in 0..<rows {
                    let row = output.baseAddress! + r * outputs
                    for c in 0..<outputs { row[c] += bias[c] }
                }
            }
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Int32(rows), Int32(outputs), Int32(inputs),
                    1, input, Int32(inputs), weights, Int32(inputs), 1, &output, Int32(outputs))
        return output
    }

    /// Layer normalisation of each row (ε 1e-12, as BERT's).
    private static func normalize(_ x: inout [Float], rows: Int, width: Int, gain: [Float], bias: [Float]) {
        x.withUnsafeMutableBufferPointer { x in
            gain.withUnsafeBufferPointer { gain in
                bias.withUnsafeBufferPointer { bias in
                    for r in 0..<rows {
                        let row = x.baseAddress! + r * width
                        var mean: Float = 0
                        for i in 0..<width { mean += row[i] }
                        mean /= Float(width)
                        var variance: Float = 0
                        for i in 0..<width {
                            let d = row[i] - mean
                            variance += d * d
                        }
                        let inverse = 1 / (variance / Float(width) + 1e-12).squareRoot()
                        for i in 0..<width { row[i] = (row[i] - mean) * inverse * gain[i] + bias[i] }
                    }
                }
            }
        }
    }
}
