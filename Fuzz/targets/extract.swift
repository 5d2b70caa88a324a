// Text extraction of any bytes as HTML, mail, an mbox and plain text: never crashes, never hangs past
// its deadline.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var limits = ExtractionLimits()
    limits.maximumTextBytes = 1 << 16
    for name in ["page.html", "message.eml", "mbox", "notes.md", "notes.txt"] {
        _ = TextExtractor.extract(fileName: name, bytes: bytes, limits: limits)
    }
    return 0
}
