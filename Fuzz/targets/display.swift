// DisplayText: no unsafe character survives, and a token has no space either.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    precondition(!DisplayText.oneLine(text).unicodeScalars.contains(where: DisplayText.isUnsafe))
    precondition(!DisplayText.token(text).unicodeScalars.contains { DisplayText.isUnsafe($0) || $0 == " " })
    return 0
}
