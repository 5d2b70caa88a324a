public import Foundation
import Replica

/// Copies of the installed embedding model, damaged in one way each, for tests of what a bad model does:
/// every damage must leave replica answering by the words, with a warning, and never crash it.
///
/// For example:
/// ```swift
/// let scratch = try TemporaryDirectory()
/// let folder = try ModelCopy.make(.notANumber, in: scratch.url)   // REPLICA_MODEL_DIR=folder
/// ```
public enum ModelCopy {
    /// One way a model folder can be damaged.
    public enum Damage: String, CaseIterable, Sendable {
        /// The header length (the first 8 bytes) is 2^63 − 1.
        case headerLength
        /// A tensor's `data_offsets` are [2^63 − 1, 2^63 − 1].
        case dataOffsets
        /// A tensor's shape has dimensions whose product does not fit in 64 bits.
        case hugeShape
        /// A tensor's shape is not the one the encoder reads ([384] for a layer's bias is [96, 4] here).
        case wrongShape
        /// Every value of the word-embedding table is NaN.
        case notANumber
        /// One value of a layer's weights is +∞.
        case infinity
        /// `model.safetensors` is a FIFO (nothing ever writes to it).
        case weightsFIFO
        /// `vocab.txt` is a FIFO.
        case vocabularyFIFO
    }

    /// The installed model's folder (`MiniLMEmbedder.defaultDirectory`), or `nil` when it is not installed.
    public static var installed: URL? { MiniLMEmbedder.defaultDirectory }

    /// Makes a folder `damage.rawValue` under `directory` holding a copy of the installed model damaged
    /// in that way, and returns it.
    ///
    /// - Throws: when the model is not installed (run scripts/setup-model.sh) or the copy cannot be written.
    public static func make(_ damage: Damage, in directory: URL) throws -> URL {
        guard let installed else { throw ModelNotInstalled() }
        let folder = directory.appendingPathComponent(damage.rawValue)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let weights = folder.appendingPathComponent("model.safetensors")
        let vocabulary = folder.appendingPathComponent("vocab.txt")
        if damage == .vocabularyFIFO {
            guard mkfifo(vocabulary.path, 0o600) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        } else {
            try FileManager.default.copyItem(at: installed.appendingPathComponent("vocab.txt"), to: vocabulary)
        }
        if damage == .weightsFIFO {
            guard mkfifo(weights.path, 0o600) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            return folder
        }
        var bytes = [UInt8](try Data(contentsOf: installed.appendingPathComponent("model.safetensors")))
        let headerLength = Int(bytes[0..<8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        let base = 8 + headerLength
        var header = try JSON.parse(String(decoding: bytes[8..<base], as: UTF8.self)).objectValue ?? []
        func range(of name: String) -> Range<Int> {
            let offsets = header.first { $0.0 == name }!.1["data_offsets"]!.arrayValue!.map { $0.intValue! }
            return (base + offsets[0])..<(base + offsets[1])
        }
        func replacing(_ name: String, _ key: String, with value: JSON) {
            let index = header.firstIndex { $0.0 == name }!
            header[index].1 = .object(header[index].1.objectValue!.map { $0.0 == key ? (key, value) : $0 })
        }
        func rewriteHeader() {
            let json = Array(JSON.object(header).serialized().utf8)
            bytes = withUnsafeBytes(of: UInt64(json.count).littleEndian) { Array($0) } + json + bytes[base...]
        }
        let maximum = JSON.integer(Int64.max)
        switch damage {
        case .headerLength:
            bytes.replaceSubrange(0..<8, with: withUnsafeBytes(of: UInt64(Int64.max).littleEndian) { Array($0) })
        case .dataOffsets:
            replacing("embeddings.LayerNorm.bias", "data_offsets", with: .array([maximum, maximum]))
            rewriteHeader()
        case .hugeShape:
            replacing(
                "embeddings.LayerNorm.bias", "shape",
                with: .array([.integer(1 << 32), .integer(1 << 32), .integer(96)]))
            rewriteHeader()
        case .wrongShape:
            replacing("encoder.layer.0.output.dense.bias", "shape", with: .array([96, 4]))
            rewriteHeader()
        case .notANumber:
            // One NaN, then the filled part copied after itself until the table is full.
            let words = range(of: "embeddings.word_embeddings.weight")
            bytes.withUnsafeMutableBytes { raw in
                let table = raw.baseAddress! + words.lowerBound
                table.storeBytes(of: Float.nan.bitPattern.littleEndian, as: UInt32.self)
                var filled = 4
                while filled < words.count {
                    let count = min(filled, words.count - filled)
                    (table + filled).copyMemory(from: table, byteCount: count)
                    filled += count
                }
            }
        case .infinity:
            let start = range(of: "encoder.layer.3.intermediate.dense.weight").lowerBound + 4 * 1000
            bytes.replaceSubrange(
                start..<start + 4, with: withUnsafeBytes(of: Float.infinity.bitPattern.littleEndian) { Array($0) })
        case .weightsFIFO, .vocabularyFIFO:
            break
        }
        try Data(bytes).write(to: weights)
        return folder
    }

    /// The embedding model is not installed: run scripts/setup-model.sh.
    public struct ModelNotInstalled: Error, CustomStringConvertible {
        public var description: String { "the embedding model is not installed: run scripts/setup-model.sh" }
    }
}
