// LineBuffer: the lines are those of splitting on "\n" (a "\r" before it dropped), however the input is
// cut into chunks; a line over the cap is reported, not kept.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let cap = Int(bytes[0] % 32) + 1
    let input = Array(bytes.dropFirst())
    var expected: [LineBuffer.Line] = []
    var pieces = input.split(separator: 0x0A, omittingEmptySubsequences: false)
    if pieces.last?.isEmpty == true { pieces.removeLast() }
    for (index, piece) in pieces.enumerated() {
        let terminated = index < pieces.count - 1 || input.last == 0x0A
        var line = piece
        if terminated, line.last == 0x0D { line = line.dropLast() }
        expected.append(piece.count > cap ? .tooLong : .line(line))
    }
    var buffer = LineBuffer(maximumLineLength: cap)
    var got: [LineBuffer.Line] = []
    var offset = 0
    var step = Int(bytes[0] % 7) + 1
    while offset < input.count {
        buffer.append(input[offset..<min(input.count, offset + step)])
        offset += step
        step = step % 5 + 1
        while let line = buffer.next() { got.append(line) }
        precondition(buffer.heldByteCount <= cap + 8, "the buffer held \(buffer.heldByteCount) bytes")
    }
    if let last = buffer.finish() { got.append(last) }
    precondition(got.map(text) == expected.map(text), "lines differ: \(got.map(text)) vs \(expected.map(text))")
    return 0
}

func text(_ line: LineBuffer.Line) -> String {
    switch line {
    case .line(let bytes): String(decoding: bytes, as: UTF8.self)
    case .tooLong: "<too long>"
    }
}
