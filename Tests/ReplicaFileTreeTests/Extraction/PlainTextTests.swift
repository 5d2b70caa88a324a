import ReplicaFileTree
import Testing

@Suite("Plain text, Markdown, reStructuredText, encodings and limits")
struct PlainTextTests {
    // MARK: Plain text

    @Test func plainTextIsKeptWithNormalizedLineBreaks() throws {
        let document = try onlyDocument(extract("notes.txt", "line one\r\nline two\rline three\n\n  indented\n"))
        #expect(document.text == "line one\nline two\nline three\n\n  indented\n")
        #expect(document.title == nil)
        #expect(document.contentType == "public.plain-text")
        #expect(document.subject == nil)
        #expect(document.authors.isEmpty)
        #expect(!document.wasTruncated)
    }

    @Test func sourceCodeIsTextWithoutATitle() throws {
        let source = "# comment that looks like a heading\nint main(void) { return 0; }\n"
        let document = try onlyDocument(extract("main.c", source))
        #expect(document.text == source)
        #expect(document.title == nil)
        #expect(document.contentType == "public.c-source")
    }

    @Test func emptyFileGivesOneEmptyDocument() throws {
        let document = try onlyDocument(TextExtractor.extract(fileName: "empty.txt", bytes: []))
        #expect(document == ExtractedDocument(text: "", contentType: "public.plain-text"))
    }

    // MARK: Markdown

    @Test func markdownTitleIsTheFirstLevelOneATXHeading() throws {
        let markdown = "Intro line\n\n## Not this one\n\n#   The *Title*   ##  \n\nBody text\n# Later\n"
        let document = try onlyDocument(extract("README.md", markdown))
        #expect(document.title == "The *Title*")
        #expect(document.text == markdown)
        #expect(document.contentType == "net.daringfireball.markdown")
    }

    @Test func markdownSetextHeadingCounts() throws {
        let document = try onlyDocument(extract("doc.markdown", "\nSetext Title\n===\n\ntext\n"))
        #expect(document.title == "Setext Title")
    }

    @Test func markdownHeadingsInCodeAndLookalikesDoNotCount() throws {
        let markdown = """
            ```sh
            # a shell comment
            ```
            #hashtag is not a heading
                # indented code
            ~~~~
            # also code
            ~~~~
            # C# Guide #
            """
        let document = try onlyDocument(extract("g.md", markdown))
        #expect(document.title == "C# Guide")
    }

    @Test func markdownWithoutHeadingHasNoTitle() throws {
        let document = try onlyDocument(extract("n.md", "just text\n\n## only level two\n"))
        #expect(document.title == nil)
    }

    // MARK: reStructuredText

    @Test func restructuredTextTitleWithOverline() throws {
        let rst = """
            .. SPDX-License-Identifier: GPL-2.0

            ==========================
              The Linux Kernel Title
            ==========================

            Section
            -------

            Text.
            """
        let document = try onlyDocument(extract("index.rst", rst))
        #expect(document.title == "The Linux Kernel Title")
        #expect(document.text == rst)
        #expect(document.contentType == "org.docutils.restructuredtext")
    }

    @Test func restructuredTextUnderlineMustBeLongEnough() throws {
        let rst = "Too long a title\n=====\n\nparagraph\n\nÜberschrift\n~~~~~~~~~~~\n"
        let document = try onlyDocument(extract("a.rest", rst))
        #expect(document.title == "Überschrift")
    }

    @Test func restructuredTextIgnoresTablesAndTransitions() throws {
        let rst = "=====  =====\ncol a  col b\n=====  =====\n\n----------\n\nplain text\n"
        let document = try onlyDocument(extract("t.rst", rst))
        #expect(document.title == nil)
    }

    // MARK: Encodings

    @Test func latin1AndWindows1252FilesAreDecoded() throws {
        let bytes: [UInt8] = Array("Caf".utf8) + [0xE9, 0x20, 0x80, 0x35, 0x20, 0x93, 0x71, 0x94, 0x0A]
        let document = try onlyDocument(TextExtractor.extract(fileName: "latin1.txt", bytes: bytes))
        #expect(document.text == "Café €5 “q”\n")
    }

    @Test func utf16WithByteOrderMarksIsDecoded() throws {
        let text = "Grüße 😀\r\nzweite Zeile"
        let units = Array(text.utf16)
        var little: [UInt8] = [0xFF, 0xFE]
        var big: [UInt8] = [0xFE, 0xFF]
        for unit in units {
            little += [UInt8(unit & 0xFF), UInt8(unit >> 8)]
            big += [UInt8(unit >> 8), UInt8(unit & 0xFF)]
        }
        for bytes in [little, big] {
            let document = try onlyDocument(TextExtractor.extract(fileName: "u16.txt", bytes: bytes))
            #expect(document.text == "Grüße 😀\nzweite Zeile")
        }
    }

    @Test func utf8ByteOrderMarkIsDropped() throws {
        let document = try onlyDocument(
            TextExtractor.extract(fileName: "bom.md", bytes: [0xEF, 0xBB, 0xBF] + Array("# Title\n".utf8)))
        #expect(document.text == "# Title\n")
        #expect(document.title == "Title")
    }

    @Test func aCharacterCutOffByAPrefixIsDropped() throws {
        let bytes = Array("naïve ü".utf8).dropLast()
        let document = try onlyDocument(TextExtractor.extract(fileName: "p.txt", bytes: Array(bytes), byteCount: 100))
        #expect(document.text == "naïve ")
    }

    @Test func nulByteMeansBinary() throws {
        let bytes = Array("Zanzibar plain start".utf8) + [0, 1, 2] + Array("more".utf8)
        let reason = try skipReason(TextExtractor.extract(fileName: "data.txt", bytes: bytes))
        #expect(reason == "binary content")
    }

    @Test func knownBinaryExtensionsAreSkippedWithoutReading() throws {
        for name in ["photo.PNG", "lib.so", "a.o", "archive.tar.gz", "font.woff2", "x.pdf", "Main.class", "db.sqlite"] {
            let reason = try skipReason(extract(name, "perfectly readable text"))
            #expect(reason == "binary content", "\(name)")
        }
    }

    @Test func controlCharacterSoupIsNotText() throws {
        var bytes: [UInt8] = []
        for index in 0..<400 { bytes += [0xC3, UInt8(1 + index % 7), 0x41, 0x1B] }
        let reason = try skipReason(TextExtractor.extract(fileName: "weird.txt", bytes: bytes))
        #expect(reason == "not valid text in any supported encoding")
    }

    // MARK: Limits

    @Test func oversizedFilesAreSkippedWithTheLimitInTheReason() throws {
        let small = ExtractionLimits(maximumBytes: 1024)
        let reason = try skipReason(
            TextExtractor.extract(fileName: "big.txt", bytes: Array(repeating: 0x61, count: 2048), limits: small))
        #expect(reason == "larger than the 1 KiB limit (2 KiB)")

        let onDisk = try skipReason(
            TextExtractor.extract(fileName: "huge.log", bytes: Array("prefix".utf8), byteCount: 20 << 20))
        #expect(onDisk == "larger than the 16 MiB limit (20 MiB)")

        let justOver = try skipReason(TextExtractor.extract(fileName: "edge.txt", bytes: [], byteCount: (16 << 20) + 1))
        #expect(justOver == "larger than the 16 MiB limit (16.1 MiB)")

        let exactlyAtLimit = try onlyDocument(
            TextExtractor.extract(fileName: "ok.txt", bytes: Array(repeating: 0x61, count: 1024), limits: small))
        #expect(exactlyAtLimit.text.utf8.count == 1024)
    }

    @Test(arguments: ["big.html", "big.md", "big.rst", "big.txt", "big.eml"])
    func slowExtractionIsAbandoned(fileName: String) throws {
        let line = "<p>Some text &amp; more text</p> =\n"
        let text = String(repeating: line, count: 300_000)
        let reason = try skipReason(extract(fileName, text, limits: ExtractionLimits(timeLimit: 0.000_001)))
        #expect(reason == "extraction took longer than the 1 µs limit")
    }

    @Test func aZeroTimeLimitAbandonsAtOnce() throws {
        let reason = try skipReason(extract("a.txt", "tiny", limits: ExtractionLimits(timeLimit: 0)))
        #expect(reason == "extraction took longer than the 0 s limit")
    }

    @Test func truncationCutsAtACharacterBoundary() throws {
        // "aé😀" is 1 + 2 + 4 bytes; cutting inside "é" or "😀" must step back.
        let text = String(repeating: "aé😀", count: 10)
        for (limit, expected) in [
            (1, "a"), (2, "a"), (3, "aé"), (4, "aé"), (6, "aé"), (7, "aé😀"), (8, "aé😀a"), (0, ""),
        ] {
            let document = try onlyDocument(extract("t.txt", text, limits: ExtractionLimits(maximumTextBytes: limit)))
            #expect(document.text == expected, "limit \(limit)")
            #expect(document.wasTruncated)
        }
        let whole = try onlyDocument(extract("t.txt", text, limits: ExtractionLimits(maximumTextBytes: 70)))
        #expect(whole.text == text)
        #expect(!whole.wasTruncated)
    }

    @Test func skipReasonsNeverContainFileContent() throws {
        let word = "Zanzibar"
        let content = Array("\(word) secret \(word)".utf8)
        let results = [
            TextExtractor.extract(fileName: "a.txt", bytes: content + [0] + content),
            TextExtractor.extract(
                fileName: "a.txt", bytes: content + Array(repeating: [0xFF, 0x01], count: 200).flatMap { $0 }),
            TextExtractor.extract(fileName: "a.txt", bytes: content, limits: ExtractionLimits(maximumBytes: 4)),
            TextExtractor.extract(
                fileName: "a.html", bytes: Array(String(repeating: "<p>\(word)</p>", count: 100_000).utf8),
                limits: ExtractionLimits(timeLimit: 0.000_001)),
            TextExtractor.extract(fileName: "\(word).png", bytes: content),
        ]
        for result in results {
            let reason = try skipReason(result)
            #expect(!reason.contains(word))
            #expect(!reason.contains("secret"))
        }
    }
}
