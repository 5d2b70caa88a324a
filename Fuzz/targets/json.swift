// JSON.parse on any bytes: never crashes; what it accepts, it writes back as JSON that parses to the
// same value.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let text = String(validating: UnsafeBufferPointer(start: data, count: size), as: UTF8.self) else { return 0 }
    guard let value = try? JSON.parse(text) else { return 0 }
    let written = value.serialized()
    guard let again = try? JSON.parse(written) else { fatalError("JSON wrote text it cannot read back") }
    precondition(again.serialized() == written, "JSON round trip changed the value")
    precondition(
        !written.unicodeScalars.contains { $0 != "\n" && DisplayText.isUnsafe($0) },
        "JSON wrote a raw control character")
    return 0
}
