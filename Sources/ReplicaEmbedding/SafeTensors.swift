import COpenBLAS
import Foundation
import ReplicaCore

/// The float tensors of a `.safetensors` file: an 8-byte little-endian header length, a JSON header
/// naming each tensor's type, shape and byte range, then the data
/// ([the format](https://huggingface.co/docs/safetensors/index)).
///
/// The file is mapped, not read: a tensor is a view of its bytes in the mapping, so loading copies
/// nothing, and a page of the file is read only when the model first touches it (a query touches a few
/// rows of the 47 MB word-embedding table, not all of it).
struct SafeTensors {
    /// A tensor's values where they lie; valid as long as the tensor (which keeps the mapping).
    struct Tensor: @unchecked Sendable {
        var shape: [Int]
        /// What keeps `values` valid: the mapping, or an aligned copy of a tensor that was not aligned.
        let owner: AnyObject
        let values: UnsafeBufferPointer<Float>

        /// A copy, for the tensors the encoder keeps as arrays (the small ones, and the attention
        /// matrices it stacks).
        var array: [Float] { Array(values) }
    }

    private let tensors: [String: Tensor]

    /// The longest header read: the format's own limit (100 MB); all-MiniLM-L6-v2's is 11 KB.
    static let maximumHeaderLength = 100_000_000

    /// Maps the file and finds every F32 tensor in it (others are skipped).
    ///
    /// Every number the file gives (the header's length, each tensor's offsets and shape) is checked
    /// before any arithmetic is done with it: a damaged file is an error, never an overflow.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidConfiguration` when the file cannot be read, is not a
    ///   regular file, or is not a safetensors file whose tensors lie inside it.
    init(path: String) throws {
        let file: MappedFile
        do {
            file = try MappedFile(path: path)
        } catch let error as ReplicaError {
            throw ReplicaError(
                .invalidConfiguration, "the model weights cannot be read: \(error.message)", cause: error)
        }
        func fail(_ why: String) -> ReplicaError {
            ReplicaError(.invalidConfiguration, "the model weights \(path) are not a safetensors file: \(why)")
        }
        let data = file.bytes
        guard data.count >= 8 else { throw fail("too short") }
        let declared = UInt64(littleEndian: data.loadUnaligned(as: UInt64.self))
        guard declared > 0, declared <= UInt64(min(data.count - 8, Self.maximumHeaderLength)) else {
            throw fail("the header length \(declared) does not fit in the file's \(data.count) bytes")
        }
        let headerLength = Int(declared)
        let base = 8 + headerLength
        guard let header = String(validating: data[8..<base], as: UTF8.self),
            let members = try? JSON.parse(header).objectValue
        else { throw fail("the header is not a JSON object") }
        var tensors: [String: Tensor] = [:]
        for (name, entry) in members where name != "__metadata__" {
            guard entry["dtype"]?.stringValue == "F32" else { continue }
            guard let shape = Self.sizes(entry["shape"]), let offsets = Self.sizes(entry["data_offsets"]),
                offsets.count == 2
            else {
                throw fail("tensor \(name) has no shape or data_offsets of whole numbers from 0")
            }
            // The count and byte count by checked arithmetic: a shape whose product does not fit is refused.
            var count = 1
            for size in shape {
                let (product, overflow) = count.multipliedReportingOverflow(by: size)
                guard !overflow else {
                    throw fail("tensor \(name) has the shape \(shape), more values than can be counted")
                }
                count = product
            }
            let (byteCount, overflow) = count.multipliedReportingOverflow(by: MemoryLayout<Float>.size)
            guard !overflow else { throw fail("tensor \(name) has the shape \(shape), more bytes than can be counted") }
            // Both offsets are from 0, and the end is compared with what follows the header: no sum can overflow.
            guard offsets[0] <= offsets[1], offsets[1] <= data.count - base else {
                throw fail("tensor \(name) has data_offsets \(offsets), outside the \(data.count - base) bytes of data")
            }
            guard offsets[1] - offsets[0] == byteCount else {
                throw fail(
                    "tensor \(name) has data_offsets \(offsets), not the \(byteCount) bytes its shape \(shape) holds")
            }
            let start = data.baseAddress! + base + offsets[0]
            if Int(bitPattern: start) % MemoryLayout<Float>.alignment == 0 {
                tensors[name] = Tensor(
                    shape: shape, owner: file,
                    values: UnsafeBufferPointer(start: start.assumingMemoryBound(to: Float.self), count: count))
            } else {
                // The format does not promise alignment: such a tensor is copied.
                let copy = AlignedFloats(copying: UnsafeRawBufferPointer(start: start, count: byteCount))
                tensors[name] = Tensor(shape: shape, owner: copy, values: UnsafeBufferPointer(copy.values))
            }
        }
        self.tensors = tensors
    }

    /// The whole numbers from 0 of a JSON array, or `nil` when it is not one or holds anything else.
    private static func sizes(_ json: JSON?) -> [Int]? {
        guard let array = json?.arrayValue else { return nil }
        let sizes = array.compactMap(\.intValue).filter { $0 >= 0 }
        return sizes.count == array.count ? sizes : nil
    }

    /// Whether every value is a finite number, and the values are small enough that the sum of their
    /// squares is too (a model's weights are within ±100; the encoder's sums of products of larger
    /// ones could overflow).
    ///
    /// One pass of OpenBLAS's dot product of the values with themselves, vectorised whatever the build:
    /// NaN and ±∞ make it NaN or +∞, since no SIMD sum drops them. Measured here, the 44 MB of every
    /// tensor but the word table took 6–7 ms from a fresh mapping of a file in the page cache (the 47 MB
    /// word table would add 7–8 ms, and its pages to the process's memory: it is checked a row at a
    /// time instead).
    static func allFinite(_ values: UnsafeBufferPointer<Float>) -> Bool {
        guard let start = values.baseAddress, !values.isEmpty else { return true }
        // Int32 counts: a chunk at a time (the largest of all-MiniLM-L6-v2's tensors holds 11.7 million).
        var offset = 0
        while offset < values.count {
            let count = min(values.count - offset, 1 << 30)
            guard cblas_sdot(Int32(count), start + offset, 1, start + offset, 1).isFinite else { return false }
            offset += count
        }
        return true
    }

    /// A tensor that must be there, with the shape the model needs and, unless told not to check them
    /// (`checkingValues`: for a table read a row at a time, checked row by row), only finite values.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidConfiguration` when the tensor is missing, has
    ///   another shape, or holds NaN or infinity.
    func tensor(_ name: String, shape: [Int], checkingValues: Bool = true) throws -> Tensor {
        guard let tensor = tensors[name] else {
            throw ReplicaError(
                .invalidConfiguration, "the model weights lack the tensor \(name); is this all-MiniLM-L6-v2?")
        }
        guard tensor.shape == shape else {
            throw ReplicaError(
                .invalidConfiguration, "the model's tensor \(name) has shape \(tensor.shape), not \(shape)")
        }
        guard !checkingValues || Self.allFinite(tensor.values) else { throw Self.damaged(name) }
        return tensor
    }

    /// The error for a tensor holding values that are not finite numbers.
    static func damaged(_ name: String, row: Int? = nil) -> ReplicaError {
        ReplicaError(
            .invalidConfiguration,
            "the model's tensor \(name)\(row.map { " (row \($0))" } ?? "") holds values that are not finite "
                + "numbers: the weights file is damaged; install it again (scripts/setup-model.sh)")
    }
}

/// A whole file mapped read-only, unmapped when the last tensor that uses it is gone. Replace such a
/// file by renaming a new one over it, never by rewriting it in place (`scripts/setup-model.sh` does).
///
/// Only a regular file is mapped: the file is opened with `O_NONBLOCK`, so that a FIFO (which would wait
/// for a writer) or a device is refused at once rather than waited on
/// ([open(2)](https://man7.org/linux/man-pages/man2/open.2.html): `O_NONBLOCK` makes opening a FIFO for
/// reading return at once, and it does nothing to a regular file).
final class MappedFile: @unchecked Sendable {
    let bytes: UnsafeRawBufferPointer

    /// Maps the regular file at `path`.
    ///
    /// - Parameter maximumSize: a larger file is refused.
    /// - Throws: ``ReplicaError`` with code `fileSystem` when the file cannot be opened or mapped, is not
    ///   a regular file, or is larger than `maximumSize`.
    init(path: String, maximumSize: Int = .max) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        func failure(_ step: String) -> ReplicaError {
            ReplicaError(.fileSystem, "cannot \(step) \(path): \(String(cString: strerror(errno)))")
        }
        guard descriptor >= 0 else { throw failure("open") }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw failure("inspect") }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw ReplicaError(.fileSystem, "\(path) is not a regular file (a FIFO, a device, a socket or a folder)")
        }
        guard info.st_size <= maximumSize else {
            throw ReplicaError(.fileSystem, "\(path) is larger than \(maximumSize) bytes")
        }
        let size = Int(info.st_size)
        guard size > 0 else {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), address != MAP_FAILED else {
            throw failure("map")
        }
        bytes = UnsafeRawBufferPointer(start: address, count: size)
    }

    deinit {
        if let address = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: address), bytes.count) }
    }
}

/// Floats copied into memory of their own, for a tensor the file does not align.
final class AlignedFloats: @unchecked Sendable {
    let values: UnsafeMutableBufferPointer<Float>

    init(copying bytes: UnsafeRawBufferPointer) {
        values = .allocate(capacity: bytes.count / 4)
        UnsafeMutableRawBufferPointer(values).copyMemory(from: bytes)
    }

    /// `count` zeros.
    init(count: Int) {
        values = .allocate(capacity: count)
        values.initialize(repeating: 0)
    }

    deinit { values.deallocate() }
}
