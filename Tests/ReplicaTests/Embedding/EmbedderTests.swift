import CVectorKernels
import Foundation
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaEmbedding
@testable import ReplicaIndex

/// The in-process model against its reference, and semantic search with real model output.
@Suite(.serialized) struct EmbedderTests {
    static let quality = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Benchmarks/quality")

    /// Loaded once for the suite: the weights are 91 MB.
    static let embedder: MiniLMEmbedder? = try? MiniLMEmbedder()
    static let float32: MiniLMEmbedder? = try? MiniLMEmbedder(precision: .float32)
    static let int8: MiniLMEmbedder? = try? MiniLMEmbedder(precision: .int8)

    func model(_ precision: MiniLMEmbedder.Precision? = nil) throws -> MiniLMEmbedder {
        let loaded =
            switch precision {
            case nil: Self.embedder
            case .float32: Self.float32
            case .int8: Self.int8
            }
        return try #require(loaded, "the embedding model is not installed: run scripts/setup-model.sh")
    }

    /// A store in `directory` that searches by meaning with the model.
    func storeWithModel(in directory: TemporaryDirectory) throws -> Store {
        var configuration = Store.Configuration()
        configuration.embedder = try model()
        return try Store(directory: directory.url, configuration: configuration)
    }

    /// Both precisions against the reference implementation's vectors: float32 within cosine 0.999 of
    /// them, int8 within 0.99 (and within 0.99 of float32's own).
    @Test(arguments: MiniLMEmbedder.Precision.allCases)
    func vectorsMatchTheReferenceImplementation(_ precision: MiniLMEmbedder.Precision) throws {
        let embedder = try model(precision)
        let least: Float = precision == .float32 ? 0.999 : 0.99
        let sentences = try String(
            contentsOf: Self.quality.appendingPathComponent("reference-sentences.txt"), encoding: .utf8
        )
        .split(separator: "\n", omittingEmptySubsequences: false).map(String.init).prefix(30)
        let reference = try #require(
            try JSON.parse(
                String(contentsOf: Self.quality.appendingPathComponent("reference-vectors.json"), encoding: .utf8)
            ).arrayValue)
        var compared = 0
        for (number, (sentence, expected)) in zip(sentences, reference).enumerated() {
            // Line 24 holds a literal "[SEP]", which the reference (as Hugging Face's tokenizer) reads as
            // the special token; replica reads it as text, so that line differs by design.
            guard number + 1 != 24 else { continue }
            let vector = try embedder.embed(query: sentence)
            let want = (expected.arrayValue ?? []).compactMap(\.doubleValue).map(Float.init)
            #expect(vector.count == 384 && want.count == 384)
            let cosine =
                zip(vector, want).reduce(0) { $0 + $1.0 * $1.1 } / (want.reduce(0) { $0 + $1 * $1 }.squareRoot())
            #expect(cosine >= least, "\(precision), line \(number + 1): cosine \(cosine)")
            if precision == .int8 {
                let float = try model(.float32).embed(query: sentence)
                let agreement = zip(vector, float).reduce(0) { $0 + $1.0 * $1.1 }
                #expect(agreement >= 0.99, "line \(number + 1): cosine \(agreement) with float32")
            }
            compared += 1
        }
        #expect(compared >= 20)
    }

    /// The encoder's erf and exp against glibc's, on a dense grid over the ranges GELU and softmax meet
    /// (and past them, where erf saturates and exp reaches the smallest normal floats); the softmax and
    /// GELU built on them, on the vector path this processor takes and in plain C, against the C library.
    @Test func fastErfAndExpAgreeWithTheCLibrary() {
        let erfError = stride(from: Float(-12), to: 12, by: 0.0007).map { abs(replica_erf($0) - erff($0)) }.max()!
        let expError = stride(from: Float(-87), to: 20, by: 0.0031).map { abs(replica_exp($0) - expf($0)) / expf($0) }
            .max()!
        #expect(erfError < 1e-6, "erf is off by \(erfError)")
        #expect(expError < 1e-6, "exp is off by \(expError) of its value")
        // Widths the vector loops do not divide, and rows whose largest value sits anywhere.
        var generator = SystemRandomNumberGenerator()
        for width in [1, 7, 8, 15, 16, 17, 37, 200] {
            let rows = 3
            let input = (0..<rows * width).map { _ in Float.random(in: -30...12, using: &generator) }
            for (path, softmax) in [("chosen", replica_softmax_rows), ("plain", replica_softmax_rows_plain)] {
                var values = input
                softmax(&values, rows, width)
                for r in 0..<rows {
                    let row = input[(r * width)..<((r + 1) * width)].map(Double.init)
                    let exponentials = row.map { Foundation.exp($0 - row.max()!) }
                    let sum = exponentials.reduce(0, +)
                    for c in 0..<width {
                        let expected = exponentials[c] / sum
                        // x − largest is rounded to a float first: its error, up to half a unit in its last
                        // place, moves e^(x − largest) by that much of itself.
                        let rounding = abs(row[c] - row.max()!) * Double(Float.ulpOfOne)
                        #expect(
                            abs(Double(values[r * width + c]) - expected) <= (2e-6 + rounding) * expected + 1e-37,
                            "\(path), width \(width), row \(r), column \(c): \(values[r * width + c]) against \(expected)"
                        )
                    }
                }
            }
        }
        let grid = Array(stride(from: Float(-12), to: 12, by: 0.0013))
        let gelu = grid.map { 0.5 * $0 * (1 + erff($0 * 0.70710678)) }
        for (path, apply) in [("chosen", replica_gelu), ("plain", replica_gelu_plain)] {
            var values = grid
            apply(&values, values.count)
            let error = zip(values, gelu).map { abs($0 - $1) }.max()!
            #expect(error <= 2e-6, "\(path) GELU is off by \(error)")
        }
    }

    /// One head's attention on the vector path and in plain C against double arithmetic: sequences the
    /// four-row blocks and the vector widths do not divide, head sizes each path takes (and one no vector
    /// path takes), the queries, keys and values interleaved in rows as the encoder keeps them.
    @Test func attentionMatchesDoubleArithmetic() {
        var generator = SystemRandomNumberGenerator()
        for size in [8, 12, 16, 32] {
            for n in [1, 2, 3, 4, 5, 17, 33, 97] {
                let hidden = size * 2
                let stride = 3 * hidden
                let rows = (0..<n * stride).map { _ in Float.random(in: -3...3, using: &generator) }
                let scale = 1 / Float(size).squareRoot()
                let column = 5 % hidden < hidden - size ? 5 : 0  // the head's first column within the hidden width
                var expected = [Double](repeating: 0, count: n * size)
                for i in 0..<n {
                    let scores = (0..<n).map { j in
                        (0..<size).reduce(0.0) {
                            $0 + Double(rows[i * stride + column + $1])
                                * Double(rows[j * stride + hidden + column + $1])
                        }
                            * Double(scale)
                    }
                    let exponentials = scores.map { Foundation.exp($0 - scores.max()!) }
                    let sum = exponentials.reduce(0, +)
                    for c in 0..<size {
                        expected[i * size + c] = (0..<n).reduce(0.0) {
                            $0 + exponentials[$1] / sum * Double(rows[$1 * stride + 2 * hidden + column + c])
                        }
                    }
                }
                var outputs: [String: [Float]] = [:]
                for (path, attend) in [("chosen", replica_attention), ("plain", replica_attention_plain)] {
                    var out = [Float](repeating: .nan, count: n * hidden)
                    var scratch = [Float](repeating: .nan, count: replica_attention_scratch(n, size))
                    rows.withUnsafeBufferPointer { rows in
                        let q = rows.baseAddress! + column
                        out.withUnsafeMutableBufferPointer { out in
                            attend(
                                q, q + hidden, q + 2 * hidden, stride, n, size, scale, out.baseAddress! + column,
                                hidden, &scratch)
                        }
                    }
                    let kept = (0..<n).flatMap { i in out[(i * hidden + column)..<(i * hidden + column + size)] }
                    let error = zip(kept, expected).map { abs(Double($0) - $1) }.max()!
                    #expect(error <= 2e-5, "\(path), head size \(size), \(n) tokens: off by \(error)")
                    // Only the head's own columns are written.
                    #expect(
                        out.enumerated().allSatisfy { index, value in
                            (column..<(column + size)).contains(index % hidden) || value.isNaN
                        },
                        "\(path), head size \(size), \(n) tokens: wrote outside its columns")
                    outputs[path] = kept
                }
                // The paths differ only in the order of the softmax's sums, which moves each weight by
                // a unit or two in its last place: values up to 3 move by a few millionths.
                let apart = zip(outputs["chosen"]!, outputs["plain"]!).map { abs($0 - $1) }.max()!
                #expect(apart <= 4e-6, "head size \(size), \(n) tokens: the paths differ by \(apart)")
            }
        }
    }

    /// Layer normalisation on the vector path and in plain C against double arithmetic, for widths the
    /// vector loops do not divide and rows far from mean 0 (a hidden state's outsized column included).
    @Test func layerNormalisationMatchesDoubleArithmetic() {
        var generator = SystemRandomNumberGenerator()
        for width in [1, 5, 16, 23, 384] {
            let rows = 4
            var input = (0..<rows * width).map { _ in Float.random(in: -2...6, using: &generator) }
            input[width / 2] = 40
            let gain = (0..<width).map { _ in Float.random(in: 0.5...1.5, using: &generator) }
            let bias = (0..<width).map { _ in Float.random(in: -1...1, using: &generator) }
            for (path, normalize) in [("chosen", replica_layer_norm), ("plain", replica_layer_norm_plain)] {
                var values = input
                normalize(&values, rows, width, gain, bias)
                for r in 0..<rows {
                    let row = input[(r * width)..<((r + 1) * width)].map(Double.init)
                    let mean = row.reduce(0, +) / Double(width)
                    let deviation = (row.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(width) + 1e-12)
                        .squareRoot()
                    for c in 0..<width {
                        let expected = (row[c] - mean) / deviation * Double(gain[c]) + Double(bias[c])
                        #expect(
                            abs(Double(values[r * width + c]) - expected) <= 1e-5 * max(1, abs(expected)),
                            "\(path), width \(width), row \(r), column \(c): \(values[r * width + c]) against \(expected)"
                        )
                    }
                }
            }
        }
    }

    /// The int8 matrix products, on every path this processor can take (AVX-512 VNNI, AVX2, plain C), against the
    /// product of the float matrices in double precision: each output within what quantising can move
    /// it (half a step of each weight times its input, half a step of each input times its weight), for
    /// shapes the vector loops do not divide, with and without columns left to float32 (those are
    /// exact, and leave the other columns' steps finer). A weight read from the wrong place breaks the bound.
    /// The paths agree to the bit.
    @Test func int8ProductsStayWithinTheirQuantisationBound() {
        var generator = SystemRandomNumberGenerator()
        for (rows, inputs, outputs, outliers) in [
            (1, 4, 16, [Int]()), (3, 7, 5, [2]), (4, 384, 32, []), (9, 33, 17, [0, 32]),
            (70, 40, 48, [5, 6, 7, 39]), (5, 1536, 24, [99, 1000]), (19, 64, 40, [3]), (130, 96, 80, []),
        ] {
            var input = (0..<rows * inputs).map { _ in Float.random(in: -3...2, using: &generator) }
            // The outlier columns hold values far out of the others' range.
            for r in 0..<rows {
                for k in outliers { input[r * inputs + k] = Float.random(in: 20...40, using: &generator) }
            }
            let weights = (0..<outputs * inputs).map { _ in Float.random(in: -0.2...0.25, using: &generator) }
            // Every other shape without a residual; the bias padded as the kernel reads it.
            let residual: [Float]? =
                outputs % 2 == 0 ? (0..<rows * outputs).map { _ in Float.random(in: -1...1, using: &generator) } : nil
            let paddedOutputs = replica_int8_padded_outputs(outputs)
            let paddedInputs = replica_int8_padded_inputs(inputs)
            var packed = [Int8](repeating: 0, count: paddedOutputs * paddedInputs)
            var scales = [Float](repeating: 0, count: paddedOutputs)
            var sums = [Int32](repeating: 0, count: paddedOutputs)
            replica_int8_pack(weights, outputs, inputs, &packed, &scales, &sums)
            let bias = (0..<paddedOutputs).map { $0 < outputs ? Float.random(in: -0.5...0.5, using: &generator) : 0 }
            var outlierWeights = [Float](repeating: 0, count: outliers.count * paddedOutputs)
            for (j, k) in outliers.enumerated() {
                for o in 0..<outputs { outlierWeights[j * paddedOutputs + o] = weights[o * inputs + k] }
            }
            var results: [String: [Float]] = [:]
            // Every path this processor runs: the one chosen (AVX-512 VNNI where there is one), AVX-VNNI's
            // (AVX2's where there is none), AVX2's, plain C's.
            let paths: [(String, Int32)] = [
                ("chosen", Int32(REPLICA_INT8_ALL)), ("avx-vnni", Int32(REPLICA_INT8_AVX2 | REPLICA_INT8_AVX_VNNI)),
                ("avx2", Int32(REPLICA_INT8_AVX2)), ("plain", 0),
            ]
            for (path, kernel) in paths {
                results[path] = outliers.withUnsafeBufferPointer { columns in
                    outlierWeights.withUnsafeBufferPointer { outlierWeights in
                        let left = replica_int8_outliers(
                            columns: columns.baseAddress, count: columns.count, weights: outlierWeights.baseAddress)
                        func product(adding residual: UnsafePointer<Float>?) -> [Float] {
                            Self.int8Linear(
                                kernel, input, rows: rows, inputs: inputs, packed: packed, scales: scales, sums: sums,
                                bias: bias,
                                outputs: outputs, outliers: left, residual: residual, epilogue: Self.noEpilogue)
                        }
                        if let residual { return residual.withUnsafeBufferPointer { product(adding: $0.baseAddress) } }
                        return product(adding: nil)
                    }
                }
            }
            for r in 0..<rows {
                let row = (0..<inputs).map { outliers.contains($0) ? 0 : input[r * inputs + $0] }
                let inputStep = Double(max(row.max()!, 0) - min(row.min()!, 0)) / 126
                for o in 0..<outputs {
                    let column = weights[(o * inputs)..<((o + 1) * inputs)]
                    let weightStep = Double(column.map(abs).max()!) / 127
                    var exact = Double(bias[o]) + Double(residual?[r * outputs + o] ?? 0)
                    var bound = 0.0
                    var magnitude = 0.0
                    for (k, w) in column.enumerated() {
                        let a = Double(input[r * inputs + k])
                        exact += a * Double(w)
                        magnitude += abs(a * Double(w))
                        if !outliers.contains(k) {
                            bound +=
                                abs(a) * weightStep / 2 + abs(Double(w)) * inputStep / 2 + inputStep * weightStep / 4
                        }
                    }
                    bound += 1e-5 * (magnitude + 1)
                    for (path, out) in results {
                        #expect(
                            abs(Double(out[r * outputs + o]) - exact) <= bound,
                            "\(path), \(rows)×\(inputs)·\(outputs), row \(r), output \(o): \(out[r * outputs + o]) against \(exact) ± \(bound)"
                        )
                    }
                    let (chosen, avx2, plain) = (
                        results["chosen"]![r * outputs + o], results["avx2"]![r * outputs + o],
                        results["plain"]![r * outputs + o]
                    )
                    let avxVNNI = results["avx-vnni"]![r * outputs + o]
                    // Every path sums the same integers and finishes them with the same operations (the outlier
                    // columns' products added by fused multiply-adds, `fmaf` in plain C).
                    #expect(chosen == avx2, "VNNI and AVX2 differ at row \(r), output \(o): \(chosen) and \(avx2)")
                    #expect(
                        avxVNNI == avx2, "AVX-VNNI and AVX2 differ at row \(r), output \(o): \(avxVNNI) and \(avx2)")
                    #expect(plain == avx2, "plain C and AVX2 differ at row \(r), output \(o): \(plain) and \(avx2)")
                }
            }
        }
    }

    /// `replica_int8_linear_using` on `kernel`'s path, with buffers of its own and every output NaN
    /// before, so that one left unwritten shows.
    static func int8Linear(
        _ kernel: Int32, _ input: [Float], rows: Int, inputs: Int, packed: [Int8], scales: [Float], sums: [Int32],
        bias: [Float], outputs: Int, outliers: replica_int8_outliers, residual: UnsafePointer<Float>?,
        epilogue: replica_int8_epilogue
    ) -> [Float] {
        var out = [Float](repeating: .nan, count: rows * outputs)
        var scratch = [UInt8](repeating: 0, count: rows * replica_int8_padded_inputs(inputs))
        var rowScales = [Float](repeating: 0, count: rows)
        var zeros = [Int32](repeating: 0, count: rows)
        var copy = [Float](repeating: 0, count: inputs)
        replica_int8_linear_using(
            kernel, input, rows, inputs, packed, scales, sums, bias, outputs, outliers, residual, &out,
            &scratch, &rowScales, &zeros, &copy, epilogue)
        return out
    }

    static var noEpilogue: replica_int8_epilogue {
        replica_int8_epilogue(kind: Int32(REPLICA_EPILOGUE_NONE), gain: nil, bias: nil, maxima: nil)
    }

    /// The int8 products' epilogues, on every path: layer normalisation or GELU applied to each group of
    /// rows as it is completed, and the columns' largest magnitudes noted, give exactly what the product
    /// alone and then a pass of each over all the rows give, for row counts the groups of 8 and 4 do not
    /// divide.
    @Test func int8EpiloguesGiveWhatTheirSeparatePassesGive() {
        var generator = SystemRandomNumberGenerator()
        for (rows, inputs, outputs) in [(1, 8, 16), (11, 40, 48), (70, 64, 40), (33, 96, 384)] {
            let input = (0..<rows * inputs).map { _ in Float.random(in: -3...2, using: &generator) }
            let weights = (0..<outputs * inputs).map { _ in Float.random(in: -0.2...0.25, using: &generator) }
            let paddedOutputs = replica_int8_padded_outputs(outputs)
            let paddedInputs = replica_int8_padded_inputs(inputs)
            var packed = [Int8](repeating: 0, count: paddedOutputs * paddedInputs)
            var scales = [Float](repeating: 0, count: paddedOutputs)
            var sums = [Int32](repeating: 0, count: paddedOutputs)
            replica_int8_pack(weights, outputs, inputs, &packed, &scales, &sums)
            let bias = (0..<paddedOutputs).map { $0 < outputs ? Float.random(in: -0.5...0.5, using: &generator) : 0 }
            let gain = (0..<outputs).map { _ in Float.random(in: 0.5...1.5, using: &generator) }
            let shift = (0..<outputs).map { _ in Float.random(in: -1...1, using: &generator) }
            let none = replica_int8_outliers(columns: nil, count: 0, weights: nil)
            for kernel in [
                Int32(REPLICA_INT8_ALL), Int32(REPLICA_INT8_AVX2 | REPLICA_INT8_AVX_VNNI), Int32(REPLICA_INT8_AVX2), 0,
            ] {
                func product(_ kind: Int, noting maxima: UnsafeMutablePointer<Float>?) -> [Float] {
                    gain.withUnsafeBufferPointer { gain in
                        shift.withUnsafeBufferPointer { shift in
                            let epilogue = replica_int8_epilogue(
                                kind: Int32(kind), gain: gain.baseAddress, bias: shift.baseAddress, maxima: maxima)
                            return Self.int8Linear(
                                kernel, input, rows: rows, inputs: inputs, packed: packed, scales: scales, sums: sums,
                                bias: bias, outputs: outputs, outliers: none, residual: nil, epilogue: epilogue)
                        }
                    }
                }
                let plain = product(REPLICA_EPILOGUE_NONE, noting: nil)
                var normalised = plain
                var activated = plain
                replica_layer_norm(&normalised, rows, outputs, gain, shift)
                replica_gelu(&activated, rows * outputs)
                for (kind, expected) in [(REPLICA_EPILOGUE_LAYER_NORM, normalised), (REPLICA_EPILOGUE_GELU, activated)]
                {
                    var maxima = [Float](repeating: 0, count: outputs)
                    var expectedMaxima = [Float](repeating: 0, count: outputs)
                    let out = product(kind, noting: &maxima)
                    replica_column_maxima(expected, rows, outputs, &expectedMaxima)
                    #expect(out == expected, "kernel \(kernel), epilogue \(kind), \(rows)×\(inputs)·\(outputs)")
                    #expect(
                        maxima == expectedMaxima,
                        "kernel \(kernel), epilogue \(kind), \(rows)×\(inputs)·\(outputs): maxima")
                }
            }
        }
    }

    /// The column maxima the outlier columns are chosen by, on both paths, every width.
    @Test func columnMaximaAreTheLargestMagnitudes() {
        var generator = SystemRandomNumberGenerator()
        for width in [1, 7, 8, 9, 384, 385] {
            let rows = 5
            let x = (0..<rows * width).map { _ in Float.random(in: -4...4, using: &generator) }
            let expected = (0..<width).map { k in (0..<rows).map { abs(x[$0 * width + k]) }.max()! }
            for (path, maxima) in [("chosen", replica_column_maxima), ("plain", replica_column_maxima_plain)] {
                var found = [Float](repeating: 0, count: width)
                maxima(x, rows, width, &found)
                #expect(found == expected, "\(path), width \(width)")
            }
        }
    }

    /// The int8 products' instruction sets by name, and a name that is none of them refused with the
    /// ones to write instead.
    @Test func int8KernelsAreChosenByNameAndAnUnknownOneIsRefused() throws {
        #expect(try MiniLMEmbedder.int8Kernels(environment: [:]) == Int32(REPLICA_INT8_ALL))
        #expect(
            try MiniLMEmbedder.int8Kernels(environment: ["REPLICA_INT8_KERNELS": "avx2"]) == Int32(REPLICA_INT8_AVX2))
        #expect(
            try MiniLMEmbedder.int8Kernels(environment: ["REPLICA_INT8_KERNELS": "avx-vnni"])
                == Int32(REPLICA_INT8_AVX2 | REPLICA_INT8_AVX_VNNI))
        #expect(try MiniLMEmbedder.int8Kernels(environment: ["REPLICA_INT8_KERNELS": "plain"]) == 0)
        let error = #expect(throws: ReplicaError.self) {
            try MiniLMEmbedder.int8Kernels(environment: ["REPLICA_INT8_KERNELS": "vnni"])
        }
        #expect(error?.message.contains("use avx512-vnni, avx-vnni, avx2 or plain") == true)
    }

    /// The int8 kernels found at run time are those the kernel lists for the processor in
    /// `/proc/cpuinfo`: AVX2 with FMA; AVX-512 VNNI with AVX-512 F, BW and VL; AVX-VNNI.
    @Test func theInt8KernelsFoundAreThoseTheProcessorHas() throws {
        let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let line = cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") } ?? ""
        let flags = Set(line.split(separator: " ").map(String.init))
        let avx2 = flags.isSuperset(of: ["avx2", "fma"])
        var expected: Int32 = avx2 ? Int32(REPLICA_INT8_AVX2) : 0
        if avx2 && flags.isSuperset(of: ["avx512f", "avx512bw", "avx512vl", "avx512_vnni"]) {
            expected |= Int32(REPLICA_INT8_AVX512_VNNI)
        }
        if avx2 && flags.contains("avx_vnni") { expected |= Int32(REPLICA_INT8_AVX_VNNI) }
        #expect(
            replica_int8_kernels() == expected, "flags: \(flags.filter { $0.hasPrefix("avx") || $0 == "fma" }.sorted())"
        )
    }

    /// Documents embedded in int8 on each instruction set the processor has, and in plain C, give the very
    /// same vectors: the paths sum the same integers and finish them with the same operations.
    @Test func int8VectorsAreTheSameOnEveryInstructionSet() throws {
        let chosen = try model(.int8)
        let documents = [
            "Signing out removes the account's index and its vectors.",
            String(
                repeating: "A long passage about matrix products in eight-bit integers, summed exactly. ", count: 40),
            "Kurz: ein Satz, und noch einer.",
        ]
        let expected = try chosen.embed(documents: documents)
        for (name, kernels) in [
            ("avx-vnni", Int32(REPLICA_INT8_AVX2 | REPLICA_INT8_AVX_VNNI)), ("avx2", Int32(REPLICA_INT8_AVX2)),
            ("plain", Int32(0)),
        ] {
            let other = try MiniLMEmbedder(directory: nil, precision: .int8, int8Kernels: kernels)
            #expect(try other.embed(documents: documents) == expected, "\(name)")
            #expect(try other.embed(query: documents[0]) == chosen.embed(query: documents[0]), "\(name), a query")
        }
    }

    /// An unknown precision in the environment is refused with what to write instead.
    @Test func anUnknownPrecisionIsRefused() throws {
        #expect(
            try MiniLMEmbedder.Precision.automatic(environment: ["REPLICA_EMBEDDING_PRECISION": "float32"]) == .float32)
        #expect(try MiniLMEmbedder.Precision.automatic(environment: ["REPLICA_EMBEDDING_PRECISION": "int8"]) == .int8)
        #expect(
            try MiniLMEmbedder.Precision.automatic(environment: [:]) == (replica_int8_fast() != 0 ? .int8 : .float32))
        let error = #expect(throws: ReplicaError.self) {
            try MiniLMEmbedder.Precision.automatic(environment: ["REPLICA_EMBEDDING_PRECISION": "fp16"])
        }
        #expect(error?.message.contains("use float32 or int8") == true)
    }

    /// The scan behind semantic search, on both of its paths (AVX2 where the processor has it, and the
    /// baseline every processor runs), against sums in double precision: every length, including those
    /// the vector loops do not divide.
    @Test func theVectorScanAddsUpLikePlainArithmetic() {
        var generator = SystemRandomNumberGenerator()
        for dimensions in [1, 7, 16, 31, 32, 33, 384, 385] {
            let rows = 9
            let query = (0..<dimensions).map { _ in Float.random(in: -1...1, using: &generator) }
            let values = (0..<rows * dimensions).map { _ in Int8.random(in: .min ... .max, using: &generator) }
            let scales = (0..<rows).map { _ in Float.random(in: 0.001...0.02, using: &generator) }
            let expected = (0..<rows).map { row in
                Double(scales[row])
                    * (0..<dimensions).reduce(0.0) { $0 + Double(query[$1]) * Double(values[row * dimensions + $1]) }
            }
            for (path, scan) in [("chosen", replica_scaled_dots), ("baseline", replica_scaled_dots_baseline)] {
                var out = [Float](repeating: .nan, count: rows)
                scan(query, values, scales, rows, dimensions, &out)
                for row in 0..<rows {
                    #expect(
                        abs(Double(out[row]) - expected[row]) <= 1e-5 * max(1, abs(expected[row])),
                        "\(path), \(dimensions) dimensions, row \(row): \(out[row]) against \(expected[row])")
                }
            }
        }
    }

    /// Weights are read in place from the mapped file when a tensor is aligned, and copied when the
    /// file leaves it unaligned (the format does not promise alignment); a file that is not one says so.
    @Test func tensorsAreReadInPlaceOrCopiedWhenUnaligned() throws {
        let directory = try TemporaryDirectory()
        let json = Array(
            #"{"t":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"i":{"dtype":"I64","shape":[1],"data_offsets":[16,24]}}"#
                .utf8)
        func write(_ name: String, padding: Int) throws -> String {
            let header = json + [UInt8](repeating: 0x20, count: padding)
            var bytes = withUnsafeBytes(of: UInt64(header.count).littleEndian) { Array($0) } + header
            for value in [Float(1.5), -2, 3.25, 4] {
                bytes += withUnsafeBytes(of: value.bitPattern.littleEndian) { Array($0) }
            }
            bytes += [UInt8](repeating: 7, count: 8)
            let path = directory.url.appendingPathComponent(name).path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return path
        }
        for padding in 0..<4 {
            let weights = try SafeTensors(path: write("w\(padding).safetensors", padding: padding))
            let tensor = try weights.tensor("t", shape: [2, 2])
            // The mapping starts on a page, so the data is aligned when its offset in the file is.
            let aligned = (8 + json.count + padding) % 4 == 0
            #expect(tensor.array == [1.5, -2, 3.25, 4], "data at byte \(8 + json.count + padding)")
            #expect(
                aligned ? tensor.owner is MappedFile : tensor.owner is AlignedFloats,
                "data at byte \(8 + json.count + padding)")
            #expect(throws: ReplicaError.self) { try weights.tensor("i", shape: [1]) }
        }
        let truncated = directory.url.appendingPathComponent("short.safetensors").path
        try Data([1, 0, 0]).write(to: URL(fileURLWithPath: truncated))
        #expect { try SafeTensors(path: truncated) } throws: {
            ($0 as? ReplicaError)?.message.contains("not a safetensors file") == true
        }
        #expect { try SafeTensors(path: directory.url.appendingPathComponent("missing").path) } throws: {
            ($0 as? ReplicaError)?.message.contains("cannot be read") == true
        }
    }

    /// With MiniLM, which reads English, `status` suggests the multilingual model for an account whose
    /// items are mostly in other languages (CLD2's languages of a sample of them), and not for one mostly
    /// in English; with no model, or another one, it suggests nothing.
    @Test func statusSuggestsTheMultilingualModelForAnAccountMostlyInOtherLanguages() async throws {
        let directory = try TemporaryDirectory()
        let store = try storeWithModel(in: directory)
        try await store.signIn("english")
        try await store.index(account: "english").indexItems(
            (0..<12).map {
                Fixtures.item(
                    "en-\($0)", text: "The harbour pumps were checked on Monday, and the report \($0) was filed.")
            })
        #expect(try await store.status().modelSuggestion == nil)
        try await store.signIn("chinese")
        let chinese = [
            "我们明天在北京开会讨论预算问题，请大家提前准备好材料。", "中国农业发展银行的贷款利率今年有所下降。",
            "这本书讲述了一个关于友谊和勇气的故事。", "上海的地铁系统是世界上最繁忙的之一。",
        ]
        try await store.index(account: "chinese").indexItems(
            (0..<9).map { Fixtures.item("zh-\($0)", text: chinese[$0 % chinese.count]) }
                + (0..<3).map { Fixtures.item("en-\($0)", text: "The harbour pumps were checked on Monday.") })
        let status = try await store.status()
        let account = try #require(status.accounts.first { $0.id == "chinese" })
        #expect(account.languages["zh", default: 0] >= 7, "\(account.languages)")
        let suggestion = try #require(status.modelSuggestion)
        #expect(suggestion.contains("account chinese (zh ") && suggestion.contains("multilingual-e5-small"))
        #expect(!suggestion.contains("english"), "\(suggestion)")
        #expect(status.json.serialized().contains(#""suggestion":"#))
        // With no model, or a model that is not MiniLM, nothing is suggested.
        #expect(Store.modelSuggestion(reads: nil, status.accounts) == nil)
        #expect(Store.modelSuggestion(reads: try model().languages, status.accounts) == suggestion)
        let withoutModel = try Store(directory: directory.url)
        #expect(try await withoutModel.status().modelSuggestion == nil)
    }

    /// MiniLM reads English: a query in another language, told or seen in its script, is searched by its
    /// words alone (the vectors would only reorder what they found); asked by meaning alone, by meaning;
    /// an English one by both.
    @Test func aQueryInALanguageTheModelDoesNotReadIsSearchedByItsWords() async throws {
        let directory = try TemporaryDirectory()
        let store = try storeWithModel(in: directory)
        try await store.signIn("a")
        try await store.index(account: "a").indexItems([
            Fixtures.item("cat", title: "Afternoon", text: "The feline dozed on the rug all afternoon."),
            Fixtures.item("zh", title: "会议", text: "我们明天在北京开会讨论预算问题"),
            Fixtures.item("tax", title: "Quarterly filing", text: "Submit the VAT return before the deadline."),
        ])
        #expect(try await store.embedPendingItems() == 3)
        let english = try await store.search(SearchQuery("feline napping"))
        #expect(english.first?.item.uniqueIdentifier == "cat" && english.first?.match == .both)
        let chinese = try await store.search(SearchQuery("北京开会"))
        #expect(chinese.map(\.item.uniqueIdentifier) == ["zh"] && chinese.allSatisfy { $0.match == .lexical })
        var told = SearchQuery("feline napping")
        told.languages = ["de"]
        let german = try await store.search(told)
        #expect(german.map(\.item.uniqueIdentifier) == ["cat"] && german.allSatisfy { $0.match == .lexical })
        told.text = "cat sleeping on a carpet"
        told.disablesLexicalSearch = true
        let meaning = try await store.search(told)
        #expect(meaning.first?.item.uniqueIdentifier == "cat" && meaning.first?.match == .semantic)
        #expect(try model().languages == ["en"])
    }

    /// A few words whose language cannot be told are read in the languages of the index's items: over
    /// German notes, MiniLM's vectors are not fused with them, and nothing is found by meaning alone;
    /// over English notes, the same kind of query is searched both ways. On both backends.
    @Test(arguments: TestBackend.available)
    func aShortQueryIsReadInTheLanguagesOfTheIndexsItems(_ backend: TestBackend) async throws {
        var configuration = Store.Configuration()
        configuration.embedder = try model()
        let fixture = try await backend.makeStore(configuration: configuration, signingIn: "de")
        let store = fixture.store
        try await store.signIn("en")
        try await store.index(account: "de").indexItems([
            Fixtures.item(
                "haus", title: "Renovierung", text: "Die Häuser wurden im Winter von den Nachbarn renoviert."),
            Fixtures.item("zug", title: "Reise", text: "Der Zug nach München fährt jeden Morgen um sieben Uhr ab."),
            Fixtures.item(
                "katze", title: "Nachmittag", text: "Die Katze schlief den ganzen Nachmittag auf dem Teppich."),
        ])
        try await store.index(account: "en").indexItems([
            Fixtures.item("cat", title: "Afternoon", text: "The feline dozed on the rug all afternoon."),
            Fixtures.item("tax", title: "Quarterly filing", text: "Submit the VAT return before the deadline."),
        ])
        #expect(try await store.embedPendingItems() == 5)
        var german = SearchQuery("Winter Häuser")
        german.accounts = ["de"]
        var byWords = german
        byWords.disablesSemanticSearch = true
        let read = try await store.search(german)
        #expect(read.map(\.item.uniqueIdentifier) == ["haus"] && read.allSatisfy { $0.match == .lexical })
        #expect(read.map(\.score) == (try await store.search(byWords).map(\.score)), "not fused with the vectors")
        // Told it is English, it is fused with them.
        german.languages = ["en"]
        byWords.languages = ["en"]
        #expect(try await store.search(german).first?.score != (try await store.search(byWords).first?.score))
        var english = SearchQuery("feline rug")
        english.accounts = ["en"]
        let both = try await store.search(english)
        #expect(both.first?.item.uniqueIdentifier == "cat" && both.first?.match == .both)
    }

    @Test func aQuerySharingNoWordWithAnItemFindsItByMeaning() async throws {
        let directory = try TemporaryDirectory()
        let store = try storeWithModel(in: directory)
        try await store.signIn("a")
        try await store.index(account: "a").indexItems([
            Fixtures.item("cat", title: "Afternoon", text: "The feline dozed on the rug all afternoon."),
            Fixtures.item("tax", title: "Quarterly filing", text: "Submit the VAT return before the deadline."),
            Fixtures.item("ship", title: "Harbour", text: "Container vessels unload at the port."),
        ])
        let query = SearchQuery("cat sleeping on a carpet")
        #expect(
            try await store.search(query).isEmpty, "no item shares a word with the query, and nothing is embedded yet")
        #expect(try await store.embedPendingItems() == 3)
        let found = try await store.search(query)
        #expect(found.first?.item.uniqueIdentifier == "cat", "\(found.map { ($0.item.uniqueIdentifier, $0.score) })")
        #expect(found.first?.match == .semantic)
        var lexicalOnly = query
        lexicalOnly.disablesSemanticSearch = true
        #expect(try await store.search(lexicalOnly).isEmpty)
        // Words and meaning together: found both ways.
        let both = try await store.search(SearchQuery("feline napping"))
        #expect(both.first?.item.uniqueIdentifier == "cat" && both.first?.match == .both)
        // A changed text is embedded again; a deleted item takes its vectors with it.
        let index = try await store.index(account: "a")
        try await index.indexItems([
            Fixtures.item("cat", title: "Afternoon", text: "Shipping schedules for the harbour.")
        ])
        let changed = try #require(try await store.embeddingStatus(of: index))
        #expect(changed.backlog == 1)
        #expect(
            changed.passages == 2, "the old text's vectors are dropped with it, not kept until it is embedded again")
        #expect(try await store.embedPendingItems() == 1)
        try await index.deleteItems(withIdentifiers: ["tax"])
        let status = try #require(try await store.embeddingStatus(of: index))
        #expect(status.items == 2 && status.backlog == 0 && status.passages == 2)
    }

    /// The model, with the store's clock moved ten seconds by each batch it embeds: a deadline stops
    /// embedding between batches.
    struct TenSecondsABatch: Embedder {
        let model: MiniLMEmbedder
        let clock: Fixtures.ManualClock
        var modelIdentifier: String { model.modelIdentifier }
        var dimensions: Int { model.dimensions }
        func embed(query: String) throws -> [Float] { try model.embed(query: query) }
        func embed(documents: [String]) throws -> [[[Float]]] {
            clock.advance(by: 10)
            return try model.embed(documents: documents)
        }
    }

    @Test func embeddingGivenADeadlineStartsNoBatchAfterItAndLeavesTheRestWaiting() async throws {
        let directory = try TemporaryDirectory()
        let clock = Fixtures.ManualClock()
        var configuration = Fixtures.configuration(clock: clock)
        configuration.embedder = TenSecondsABatch(model: try model(), clock: clock)
        let store = try Store(directory: directory.url, configuration: configuration)
        try await store.signIn("a")
        let items = (0..<70).map {
            Fixtures.item("note-\($0)", title: "Note \($0)", text: "Harbour schedule number \($0) for the ferries.")
        }
        try await store.index(account: "a").indexItems(items)
        #expect(try await store.embeddingBacklog() == 70)
        // Batches of 32: the first starts at 0 s and the second at 10 s, before the deadline at 15 s;
        // none starts at 20 s.
        #expect(try await store.embedPendingItems(until: clock.now + 15) == 64)
        #expect(try await store.embeddingBacklog(accounts: ["a"]) == 6)
        #expect(try await store.embedPendingItems(until: clock.now) == 0, "a deadline that has passed starts nothing")
        #expect(try await store.embeddingBacklog() == 6)
        #expect(try await store.embedPendingItems() == 6)
        #expect(try await store.embeddingBacklog() == 0)
        let status = try #require(try await store.embeddingStatus(of: try await store.index(account: "a")))
        #expect(status.items == 70 && status.backlog == 0)
    }
}
