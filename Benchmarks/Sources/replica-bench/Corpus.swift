import Foundation

/// A paragraph of the benchmark corpus, made into the fields both contestants index.
struct Paragraph: Sendable {
    var identifier: String
    var title: String
    var body: String
    var path: String
}

/// Reads the corpus that `make-corpus.sh` builds (Debian's linux-doc) into paragraphs.
enum Corpus {
    /// Every text file under `directory/Documentation`, sorted by path (the rendered HTML is left out:
    /// paragraphs come from the source text).
    static func textFiles(in directory: String) -> [String] {
        let root = URL(fileURLWithPath: directory).appendingPathComponent("Documentation")
        guard let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
        else { return [] }
        return enumerator.compactMap { ($0 as? URL)?.path }
            .filter {
                (try? URL(fileURLWithPath: $0).resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true
            }
            .sorted()
    }

    /// `count` paragraphs of at least 80 bytes, spread evenly over the corpus.
    static func paragraphs(in directory: String, count: Int) throws -> [Paragraph] {
        var all: [(body: Substring, path: String)] = []
        for path in textFiles(in: directory) {
            guard let data = FileManager.default.contents(atPath: path), !data.prefix(4096).contains(0) else {
                continue
            }
            let text = String(decoding: data, as: UTF8.self)
            // Paragraphs are separated by blank lines; work on UTF-8 bytes, which is much faster.
            let bytes = Array(text.utf8)
            var start = 0
            var index = 0
            func emit(_ end: Int) {
                var low = start
                var high = end
                while low < high, bytes[low] == 0x20 || bytes[low] == 0x0A || bytes[low] == 0x09 { low += 1 }
                while high > low, bytes[high - 1] == 0x20 || bytes[high - 1] == 0x0A || bytes[high - 1] == 0x09 {
                    high -= 1
                }
                if high - low >= 80 {
                    all.append((Substring(String(decoding: bytes[low..<high], as: UTF8.self)), path))
                }
            }
            while index + 1 < bytes.count {
                if bytes[index] == 0x0A && bytes[index + 1] == 0x0A {
                    emit(index)
                    start = index + 2
                    index += 2
                } else {
                    index += 1
                }
            }
            emit(bytes.count)
        }
        guard !all.isEmpty else {
            throw BenchError(
                "no paragraphs under \(directory)/Documentation; build the corpus with Benchmarks/make-corpus.sh")
        }
        let stride = max(1, all.count / count)
        var chosen: [Paragraph] = []
        var index = 0
        while chosen.count < count {
            let (original, path) = all[index % all.count]
            // Past the corpus's end (a million items), each pass rotates the words of every paragraph by
            // one more place, so repeats are new texts with the same words and statistics.
            let pass = index / all.count
            var body = String(original)
            if pass > 0 {
                let words = original.split(separator: " ", omittingEmptySubsequences: true)
                let shift = pass % max(words.count, 1)
                body = (words[shift...] + words[..<shift]).joined(separator: " ")
            }
            let firstLine = body.prefix { $0 != "\n" }.prefix(80)
            chosen.append(Paragraph(identifier: "p\(chosen.count)", title: String(firstLine), body: body, path: path))
            index += stride
        }
        return chosen
    }

    /// Two-word queries of moderately common words (in 0.1% to 3% of paragraphs), as a person types them.
    static func queries(from paragraphs: [Paragraph], count: Int, seed: UInt64) -> [String] {
        var documentFrequency: [String: Int] = [:]
        for paragraph in paragraphs.prefix(20_000) {
            var seen = Set<String>()
            for word in paragraph.body.lowercased().split(whereSeparator: { !$0.isLetter }) where word.count >= 4 {
                if seen.insert(String(word)).inserted { documentFrequency[String(word), default: 0] += 1 }
            }
        }
        let sample = Double(min(paragraphs.count, 20_000))
        let words = documentFrequency.filter { Double($0.value) / sample >= 0.001 && Double($0.value) / sample <= 0.03 }
            .keys.sorted()
        var generator = SeededGenerator(seed: seed)
        // Too few paragraphs (a small account) can leave no word in that range: then no query.
        guard !words.isEmpty else { return [] }
        return (0..<count).map { _ in
            "\(words.randomElement(using: &generator)!) \(words.randomElement(using: &generator)!)"
        }
    }

    /// `query` with a typo in its first word of five letters or more: its third letter dropped (the
    /// query as it is when it has none).
    static func withTypo(_ query: String) -> String {
        var words = query.split(separator: " ").map(String.init)
        guard let index = words.firstIndex(where: { $0.count >= 5 }) else { return query }
        var letters = Array(words[index])
        letters.remove(at: 2)
        words[index] = String(letters)
        return words.joined(separator: " ")
    }

    /// Eight-word questions: eight words in a row (letters only, lowercased) from a random paragraph, as
    /// a person pastes a phrase or types a question; function words ("the", "of") included.
    static func questions(from paragraphs: [Paragraph], count: Int, seed: UInt64) -> [String] {
        var generator = SeededGenerator(seed: seed)
        var questions: [String] = []
        while questions.count < count {
            let body = paragraphs.randomElement(using: &generator)!.body.lowercased()
            let words: [String] = body.split(whereSeparator: { !$0.isLetter }).map { String($0) }.filter {
                $0.count <= 20
            }
            guard words.count >= 8 else { continue }
            let start = Int.random(in: 0...(words.count - 8), using: &generator)
            questions.append(words[start..<start + 8].joined(separator: " "))
        }
        return questions
    }

    /// Single words found in more than 10% of paragraphs: the worst case for a ranked top 20.
    static func commonWords(from paragraphs: [Paragraph]) -> [String] {
        var documentFrequency: [String: Int] = [:]
        for paragraph in paragraphs.prefix(20_000) {
            var seen = Set<String>()
            for word in paragraph.body.lowercased().split(whereSeparator: { !$0.isLetter }) where word.count >= 3 {
                if seen.insert(String(word)).inserted { documentFrequency[String(word), default: 0] += 1 }
            }
        }
        let sample = Double(min(paragraphs.count, 20_000))
        return documentFrequency.filter { Double($0.value) / sample > 0.10 }.keys.sorted()
    }
}

/// SplitMix64: a small deterministic generator, so query sets repeat across runs.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
