import Foundation
import ReplicaCore

/// The float tensors of a `.safetensors` file: an 8-byte little-endian header length, a JSON header
/// naming each tensor's type, shape and byte range, then the data
/// ([the format](https://huggingface.co/docs/safetensors/index)).
struct SafeTensors {
    struct Tensor {
        var shape: [Int]
        var values: [Float]
    }

    private let tensors: [String: Tensor]

    /// Reads every F32 tensor of the file (others are skipped).
    init(path: String) throws {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        } catch {
            throw ReplicaError(.invalidConfiguration, "the model weights \(path) cannot be read: \(error.localizedDescription)")
        }
        func fail(_ why: String) -> ReplicaError {
            ReplicaError(.invalidConfiguration, "the model weights \(path) are not a safetensors file: \(why)")
        }
        guard data.count >= 8 else { throw fail("too short") }
        let headerLength = data.prefix(8).enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
        guard headerLength > 0, 8 + headerLength <= data.count,
              let header = String(data: data.subdata(in: 8..<8 + headerLength), encoding: .utf8),
              let members = try? JSON.parse(header).objectValue
        else { throw fail("the header cannot be read") }
        let base = 8 + headerLength
        var tensors: [String: Tensor] = [:]
        for (name, entry) in members where name != "__metadata__" {
            guard entry["dtype"]?.stringValue == "F32" else { continue }
            guard let shape = entry["shape"]?.arrayValue?.compactMap(\.intValue),
                  let offsets = entry["data_offsets"]?.arrayValue?.compactMap(\.intValue), offsets.count == 2,
                  offsets[0] <= offsets[1], base + offsets[1] <= data.count,
                  (offsets[1] - offsets[0]) == shape.reduce(1, *) * 4
            else { throw fail("tensor \(name) has a bad shape or range") }
            var values = [Float](repeating: 0, count: shape.reduce(1, *))
            _ = values.withUnsafeMutableBytes { target in
                data.copyBytes(to: target, from: (base + offsets[0])..<(base + offsets[1]))
            }
            tensors[name] = Tensor(shape: shape, values: values)
        }
        self.tensors = tensors
    }

    /// A tensor that must be there, with the shape the model needs.
    func tensor(_ name: String, shape: [Int]) throws -> [Float] {
        guard let tensor = tensors[name] else {
            throw ReplicaError(.invalidConfiguration, "the model weights lack the tensor \(name); is this all-MiniLM-L6-v2?")
        }
        guard tensor.shape == shape else {
            throw ReplicaError(.invalidConfiguration, "the model's tensor \(name) has shape \(tensor.shape), not \(shape)")
        }
        return tensor.values
    }
}
