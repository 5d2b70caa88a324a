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

    /// Maps the file and finds every F32 tensor in it (others are skipped).
    init(path: String) throws {
        let file: MappedFile
        do {
            file = try MappedFile(path: path)
        } catch let error as ReplicaError {
            throw ReplicaError(.invalidConfiguration, "the model weights cannot be read: \(error.message)")
        }
        func fail(_ why: String) -> ReplicaError {
            ReplicaError(.invalidConfiguration, "the model weights \(path) are not a safetensors file: \(why)")
        }
        let data = file.bytes
        guard data.count >= 8 else { throw fail("too short") }
        let headerLength = data.prefix(8).enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
        guard headerLength > 0, 8 + headerLength <= data.count,
              let header = String(bytes: data[8..<8 + headerLength], encoding: .utf8),
              let members = try? JSON.parse(header).objectValue
        else { throw fail("the header cannot be read") }
        let base = 8 + headerLength
        var tensors: [String: Tensor] = [:]
        for (name, entry) in members where name != "__metadata__" {
            guard entry["dtype"]?.stringValue == "F32" else { continue }
            guard let shape = entry["shape"]?.arrayValue?.compactMap(\.intValue),
                  let offsets = entry["data_offsets"]?.arrayValue?.compactMap(\.intValue), offsets.count == 2,
                  offsets[0] >= 0, offsets[0] <= offsets[1], base + offsets[1] <= data.count,
                  (offsets[1] - offsets[0]) == shape.reduce(1, *) * 4
            else { throw fail("tensor \(name) has a bad shape or range") }
            let start = data.baseAddress! + base + offsets[0]
            let count = shape.reduce(1, *)
            if Int(bitPattern: start) % MemoryLayout<Float>.alignment == 0 {
                tensors[name] = Tensor(shape: shape, owner: file, values: UnsafeBufferPointer(start: start.assumingMemoryBound(to: Float.self), count: count))
            } else {
                // The format does not promise alignment: such a tensor is copied.
                let copy = AlignedFloats(copying: UnsafeRawBufferPointer(start: start, count: count * 4))
                tensors[name] = Tensor(shape: shape, owner: copy, values: UnsafeBufferPointer(copy.values))
            }
        }
        self.tensors = tensors
    }

    /// A tensor that must be there, with the shape the model needs.
    func tensor(_ name: String, shape: [Int]) throws -> Tensor {
        guard let tensor = tensors[name] else {
            throw ReplicaError(.invalidConfiguration, "the model weights lack the tensor \(name); is this all-MiniLM-L6-v2?")
        }
        guard tensor.shape == shape else {
            throw ReplicaError(.invalidConfiguration, "the model's tensor \(name) has shape \(tensor.shape), not \(shape)")
        }
        return tensor
    }
}

/// A whole file mapped read-only, unmapped when the last tensor that uses it is gone. Replace such a
/// file by renaming a new one over it, never by rewriting it in place (`scripts/setup-model.sh` does).
final class MappedFile: @unchecked Sendable {
    let bytes: UnsafeRawBufferPointer

    init(path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        func failure(_ step: String) -> ReplicaError {
            ReplicaError(.fileSystem, "cannot \(step) \(path): \(String(cString: strerror(errno)))")
        }
        guard descriptor >= 0 else { throw failure("open") }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw failure("inspect") }
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

    deinit { values.deallocate() }
}
