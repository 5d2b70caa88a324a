import Foundation
import Replica
import Testing

/// Lines come out the same however the input is cut into chunks, and a line over the cap is reported
/// once and skipped without being kept.
@Suite struct LineBufferTests {
    static func split(_ input: [UInt8], chunks: [Int], cap: Int) -> [LineBuffer.Line] {
        var buffer = LineBuffer(maximumLineLength: cap)
        var output: [LineBuffer.Line] = []
        var offset = 0
        var chunk = 0
        while offset < input.count {
            let size = max(1, chunks[chunk % chunks.count])
            buffer.append(input[offset..<min(input.count, offset + size)])
            offset += size
            chunk += 1
            while let line = buffer.next() { output.append(line) }
        }
        if let last = buffer.finish() { output.append(last) }
        return output
    }

    static func text(_ lines: [LineBuffer.Line]) -> [String] {
        lines.map { line in
            switch line {
            case .line(let bytes): String(decoding: bytes, as: UTF8.self)
            case .tooLong: "<too long>"
            }
        }
    }

    @Test(arguments: [[1], [2, 3], [7], [64], [1 << 16], [1, 100, 5, 1]])
    func linesAreTheSameWhateverTheChunks(chunks: [Int]) {
        let input = Array(
            "first\r\nsecond\n\nfourth is longer than the cap of thirty bytes\nfifth\nlast without break".utf8)
        #expect(
            Self.text(Self.split(input, chunks: chunks, cap: 30)) == [
                "first", "second", "", "<too long>", "fifth", "last without break",
            ])
    }

    /// Read to its end before it is reported (a reader that answers each line), a too-long line comes
    /// with its first and last bytes, and the next line reads normally.
    @Test func aLineOverTheCapCanBeReportedAtItsEndWithItsHeadAndTail() {
        var buffer = LineBuffer(maximumLineLength: 1_000, reportsTooLongAtItsEnd: true)
        buffer.append(Array("HEAD".utf8) + Array(repeating: UInt8(ascii: "x"), count: 5_000))
        #expect(buffer.next() == nil, "not reported before its end")
        buffer.append(Array(repeating: UInt8(ascii: "y"), count: 5_000) + Array("TAIL\nnext\n".utf8))
        #expect(buffer.next() == .tooLong)
        #expect(
            String(decoding: buffer.lastTooLongHead.prefix(4), as: UTF8.self) == "HEAD"
                && buffer.lastTooLongHead.count == LineBuffer.headLength)
        #expect(
            String(decoding: buffer.lastTooLongTail.suffix(4), as: UTF8.self) == "TAIL"
                && buffer.lastTooLongTail.count == LineBuffer.headLength)
        #expect(buffer.next() == .line(ArraySlice("next".utf8)))
        // At the end of the input, a too-long last line without a line break is reported too.
        buffer.append(Array(repeating: UInt8(ascii: "z"), count: 2_000))
        #expect(buffer.next() == nil)
        #expect(buffer.finish() == .tooLong)
    }

    @Test func aLineOverTheCapIsReportedOnceAndNotKept() {
        var buffer = LineBuffer(maximumLineLength: 1_000)
        buffer.append(Array(repeating: UInt8(ascii: "x"), count: 600))
        #expect(buffer.next() == nil)
        buffer.append(Array(repeating: UInt8(ascii: "x"), count: 600))
        #expect(buffer.next() == .tooLong)
        // Its first bytes are kept for the reader to say which line it was, never more; its last too, once
        // its end is read.
        #expect(
            buffer.lastTooLongHead.count == LineBuffer.headLength
                && buffer.lastTooLongHead.allSatisfy { $0 == UInt8(ascii: "x") })
        // The rest of it is dropped as it comes: nothing builds up.
        for _ in 0..<100 {
            buffer.append(Array(repeating: UInt8(ascii: "x"), count: 10_000))
            #expect(buffer.next() == nil)
            #expect(buffer.heldByteCount == 0)
        }
        buffer.append(Array("x\nnext\n".utf8))
        #expect(Self.text([buffer.next(), buffer.next()].compactMap { $0 }) == ["next"])
        #expect(buffer.finish() == nil)
    }

    @Test func anUnterminatedLineOverTheCapAtTheEndIsReported() {
        #expect(Self.split(Array(repeating: UInt8(ascii: "y"), count: 50), chunks: [8], cap: 10) == [.tooLong])
    }
}
