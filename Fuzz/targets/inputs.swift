import Foundation

// What comes from outside into the Replica module, one parser per first byte of the input:
// 0 tool-call arguments (as a model writes them, under complete guidance), 1 a plugin protocol line,
// 2 a configuration file, 3 a record line of `replica records import`. None may crash or hang; what
// fails fails with an error of its own kind (the tool with an error result, never a trap).
let toolReader = ToolRequestReader(
    guide: .complete, customStages: [], me: nil, now: Date(timeIntervalSince1970: 1_800_000_000))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0, let text = String(validating: UnsafeBufferPointer(start: data + 1, count: size - 1), as: UTF8.self)
    else { return 0 }
    switch data[0] % 4 {
    case 0:
        if let arguments = try? JSON.parse(text) { _ = try? toolReader.read(arguments) }
    case 1:
        _ = try? PluginMessage.read(text)
    case 2:
        _ = try? ConfigurationFile.parse(text, relativeTo: URL(fileURLWithPath: "/nonexistent"))
    default:
        if let line = try? JSON.parse(text) { _ = try? Record(json: line) }
    }
    return 0
}
