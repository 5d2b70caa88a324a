import Foundation
import ReplicaCore

/// BERT's uncased WordPiece tokenizer, as all-MiniLM-L6-v2 uses it: text in, vocabulary ids out.
///
/// It reproduces HuggingFace's `BertTokenizerFast` (BertNormalizer, BertPreTokenizer, WordPiece), which
/// sentence-transformers runs before the model, because a vector only matches the published model when
/// the ids match exactly. `Benchmarks/quality/reference_embed.py` is the reference, step for step:
///
/// 1. Clean: drop U+0000, U+FFFD and controls (Cc, Cf, Co, Cs); tab, LF, CR and every Z* separator
///    become a space. Put spaces around CJK ideographs, so that each is a word of its own.
/// 2. NFD, drop the nonspacing marks (Mn), and lowercase one scalar at a time, as the model was trained.
/// 3. Split on spaces; every punctuation scalar is a word of its own.
/// 4. WordPiece: the longest vocabulary entry that starts the word, then the longest `##` entry that
///    continues it, and so on. A word of more than 100 scalars, or one that cannot be covered, is `[UNK]`.
///
/// Unlike HuggingFace, a literal `[CLS]` or `[SEP]` in the text is not a special token: text is data,
/// and a document must not be able to forge the model's markers. Python's `strip()` is left out because
/// everything it removes would become a space or vanish here anyway, and spaces at the ends make no word.
///
/// For example:
/// ```swift
/// let modelDirectory = "/usr/local/share/replica/models/all-MiniLM-L6-v2"
/// let tokenizer = try WordPieceTokenizer(vocabularyFile: modelDirectory + "/vocab.txt")
/// tokenizer.encode("Hello, world!")    // [101, 7592, 1010, 2088, 999, 102]
/// ```
package struct WordPieceTokenizer: Sendable {
    /// How many ids the vocabulary defines: the lines of `vocab.txt`.
    package let vocabularySize: Int
    /// `[CLS]`, which starts every encoded text.
    package let classifierID: Int32
    /// `[SEP]`, which ends every encoded text.
    package let separatorID: Int32
    /// `[UNK]`, for a word the vocabulary cannot spell.
    package let unknownID: Int32
    /// `[PAD]`, for filling a batch; the tokenizer itself never emits it.
    package let paddingID: Int32
    /// Ids of the pieces that continue a word (`##…`).
    package let continuationIDs: Set<Int32>

    /// Entry → id. Every key is in NFD, like every candidate looked up (see `init`).
    private let vocabulary: [String: Int32]
    /// The most scalars an entry has: a longer candidate cannot match, so it is never built.
    private let longestEntry: Int
    /// BERT's limit: a longer word is `[UNK]` without being looked at.
    private static let maximumWordLength = 100
    /// The largest vocabulary file read: BERT's is 232 KB.
    static let maximumFileSize = 16 << 20

    /// Reads vocab.txt: one token a line, its id the line number from 0.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidConfiguration` when the file cannot be read, is not a
    ///   regular file of at most 16 MiB, is not UTF-8, or lacks one of `[PAD]`, `[UNK]`, `[CLS]` and `[SEP]`.
    package init(vocabularyFile path: String) throws {
        let bytes: [UInt8]
        do {
            // Mapped, which refuses at once a FIFO or device (reading one would wait for a writer).
            let file = try MappedFile(path: path, maximumSize: Self.maximumFileSize)
            bytes = withExtendedLifetime(file) { [UInt8](file.bytes) }
        } catch let error as ReplicaError {
            throw ReplicaError(.invalidConfiguration, "the vocabulary cannot be read: \(error.message)", cause: error)
        }
        // Decoding replaces bad bytes with U+FFFD; the round trip shows whether there were any.
        guard String(decoding: bytes, as: UTF8.self).utf8.elementsEqual(bytes) else {
            throw ReplicaError(.invalidConfiguration, "the vocabulary \(path) is not UTF-8 text")
        }
        // Lines end at LF, CR or CRLF, as Python's text mode reads them. Splitting bytes rather than
        // Characters matters: Swift counts CRLF as one Character. A break never falls inside a UTF-8
        // sequence, so each line decodes cleanly.
        var entries: [String] = []
        var lineStart = 0
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x0A || bytes[index] == 0x0D {
                entries.append(String(decoding: bytes[lineStart..<index], as: UTF8.self))
                if bytes[index] == 0x0D && index + 1 < bytes.count && bytes[index + 1] == 0x0A { index += 1 }
                lineStart = index + 1
            }
            index += 1
        }
        if lineStart < bytes.count { entries.append(String(decoding: bytes[lineStart...], as: UTF8.self)) }

        // Swift compares Strings by canonical equivalence, Python by scalars. Candidates are always NFD
        // (see `normalize`), so leaving out the entries that are not NFD (Python could never match them)
        // makes the two agree. all-MiniLM-L6-v2's vocabulary has none.
        var vocabulary: [String: Int32] = [:]
        vocabulary.reserveCapacity(entries.count)
        var longestEntry = 0
        for (id, entry) in entries.enumerated() {
            if !entry.utf8.allSatisfy({ $0 < 0x80 }),
                !entry.decomposedStringWithCanonicalMapping.unicodeScalars.elementsEqual(entry.unicodeScalars)
            {
                continue
            }
            vocabulary[entry] = Int32(id)  // a repeated entry keeps its last id, as in Python
            longestEntry = max(longestEntry, entry.unicodeScalars.count)
        }
        func special(_ token: String) throws -> Int32 {
            guard let id = vocabulary[token] else {
                throw ReplicaError(
                    .invalidConfiguration, "the vocabulary \(path) has no \(token) token; is it BERT's vocab.txt?")
            }
            return id
        }
        self.paddingID = try special("[PAD]")
        self.unknownID = try special("[UNK]")
        self.classifierID = try special("[CLS]")
        self.separatorID = try special("[SEP]")
        self.continuationIDs = Set(vocabulary.filter { $0.key.hasPrefix("##") }.values)
        self.vocabularySize = entries.count
        self.vocabulary = vocabulary
        self.longestEntry = longestEntry
    }

    /// The word-piece ids of `text`, without [CLS]/[SEP], not truncated.
    package func pieces(_ text: String) -> [Int32] {
        pieces(text, limit: .max)
    }

    /// [CLS] + at most maxLength-2 pieces + [SEP]: the model's input. 256 is all-MiniLM-L6-v2's
    /// `max_seq_length`; the rest of a longer text is cut off, as sentence-transformers does.
    package func encode(_ text: String, maxLength: Int = 256) -> [Int32] {
        [classifierID] + pieces(text, limit: max(0, maxLength - 2)) + [separatorID]
    }

    /// The first `limit` pieces. Words after the limit cannot change the ones before it, so they are not
    /// looked up: a long document costs little more than its first few hundred words.
    private func pieces(_ text: String, limit: Int) -> [Int32] {
        var ids: [Int32] = []
        var word: [Unicode.Scalar] = []
        for scalar in Self.normalize(text) {
            if ids.count >= limit { break }
            if scalar.value == 0x20 {
                appendPieces(of: &word, to: &ids)
            } else if Self.isPunctuation(scalar) {
                appendPieces(of: &word, to: &ids)
                word.append(scalar)
                appendPieces(of: &word, to: &ids)
            } else {
                word.append(scalar)
            }
        }
        appendPieces(of: &word, to: &ids)
        if ids.count > limit { ids.removeSubrange(limit...) }
        return ids
    }

    /// Appends the pieces of `word` (greedy longest match first) and empties it for the next word.
    private func appendPieces(of word: inout [Unicode.Scalar], to ids: inout [Int32]) {
        defer { word.removeAll(keepingCapacity: true) }
        guard !word.isEmpty else { return }
        guard word.count <= Self.maximumWordLength else {
            ids.append(unknownID)
            return
        }
        let firstPiece = ids.count
        var start = 0
        while start < word.count {
            let prefix = start == 0 ? "" : "##"
            var end = min(word.count, start + longestEntry - prefix.count)
            var match: Int32?
            while end > start {
                var candidate = prefix
                candidate.unicodeScalars.append(contentsOf: word[start..<end])
                if let id = vocabulary[candidate] {
                    match = id
                    break
                }
                end -= 1
            }
            guard let id = match else {  // one piece that cannot be matched spoils the word
                ids.removeSubrange(firstPiece...)
                ids.append(unknownID)
                return
            }
            ids.append(id)
            start = end
        }
    }

    /// Steps 1 and 2: the cleaned, decomposed, unaccented and lowercased scalars of `text`.
    private static func normalize(_ text: String) -> [Unicode.Scalar] {
        var cleaned = String.UnicodeScalarView()
        var isASCII = true
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value < 0x80 {  // ASCII: no category lookup
                if value == 0x09 || value == 0x0A || value == 0x0D {
                    cleaned.append(" ")
                } else if value >= 0x20 && value != 0x7F {
                    cleaned.append(scalar)
                }
                continue
            }
            if value == 0xFFFD { continue }
            switch scalar.properties.generalCategory {
            case .control, .format, .privateUse, .surrogate:
                continue
            case .spaceSeparator, .lineSeparator, .paragraphSeparator:
                cleaned.append(" ")
            default:
                isASCII = false
                if isCJKIdeograph(value) {
                    cleaned.append(" ")
                    cleaned.append(scalar)
                    cleaned.append(" ")
                } else {
                    cleaned.append(scalar)
                }
            }
        }

        var result: [Unicode.Scalar] = []
        result.reserveCapacity(text.utf8.count)
        if isASCII {  // nothing to decompose: skip Foundation's NFD
            for scalar in cleaned { result.append(lowercasedASCII(scalar)) }
            return result
        }
        for scalar in String(cleaned).decomposedStringWithCanonicalMapping.unicodeScalars {
            if scalar.isASCII {
                result.append(lowercasedASCII(scalar))
                continue
            }
            let properties = scalar.properties
            if properties.generalCategory == .nonspacingMark { continue }
            // Python's str.lower on one character: the full mapping, with no final-sigma rule.
            if properties.changesWhenLowercased {
                result.append(contentsOf: properties.lowercaseMapping.unicodeScalars)
            } else {
                result.append(scalar)
            }
        }
        return result
    }

    private static func lowercasedASCII(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        (0x41...0x5A).contains(scalar.value) ? Unicode.Scalar(UInt8(scalar.value + 0x20)) : scalar
    }

    /// HuggingFace's ranges, which start one block at 0x2B920 where Google's BERT has 0x2B820.
    private static func isCJKIdeograph(_ value: UInt32) -> Bool {
        switch value {
        case 0x4E00...0x9FFF, 0x3400...0x4DBF, 0x20000...0x2A6DF, 0x2A700...0x2B73F, 0x2B740...0x2B81F,
            0x2B920...0x2CEAF, 0xF900...0xFAFF, 0x2F800...0x2FA1F:
            return true
        default:
            return false
        }
    }

    /// BERT's punctuation: all ASCII symbols (so `$`, `+`, `<`, `^`, `|` too), and Unicode's P* categories.
    private static func isPunctuation(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 33...47, 58...64, 91...96, 123...126:
            return true
        case 0..<0x80:
            return false
        default:
            switch scalar.properties.generalCategory {
            case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
                .initialPunctuation, .finalPunctuation, .otherPunctuation:
                return true
            default:
                return false
            }
        }
    }
}
