import ReplicaFileTree
import Testing

@Suite("HTML")
struct HTMLTests {
    @Test func extractsTitleAndVisibleTextWithBlockStructure() throws {
        let html = """
            <!DOCTYPE html>
            <html><head><meta charset="utf-8">
            <title>  The   &amp;
              Title </title>
            <link rel="stylesheet" href="style.css">
            </head>
            <body>
            <h1>Heading</h1>
            <p>Hello <b>bold</b> <i>world</i>.</p>
            <ul>
              <li>One</li>
              <li>Two</li>
            </ul>
            </body></html>
            """
        let document = try onlyDocument(extract("page.html", html))
        #expect(document.title == "The & Title")
        #expect(document.text == "Heading\n\nHello bold world.\n\nOne\nTwo")
        #expect(document.contentType == "public.html")
        #expect(document.part == nil)
        #expect(!document.wasTruncated)
    }

    @Test func scriptAndStyleContentNeverAppears() throws {
        let html = """
            <html><head><style type="text/css">body { color: red } p::before { content: "styleword" }</style>
            <SCRIPT>var a = "<p>scriptword</p>"; if (a < b && c > d) {}</SCRIPT>
            <script src="lib.js"/>
            </head><body><p>Before</p>
            <script type="text/javascript">document.write("</scr" + "ipt>"); var x = "</scripts>"; // scriptword2
            </script >
            <p>After</p><style>.styleword2 {}</Style></body></html>
            """
        let document = try onlyDocument(extract("page.html", html))
        #expect(document.text == "Before\n\nAfter")
        for word in ["styleword", "scriptword", "color", "document.write"] {
            #expect(!document.text.contains(word))
        }
    }

    @Test func decodesNamedDecimalAndHexEntities() throws {
        let html = """
            <p>&lt;tag&gt; &quot;q&quot; &apos;a&apos; &copy;&reg;&trade; &hellip;&mdash;&ndash; \
            &lsquo;x&rsquo; &ldquo;y&rdquo; &laquo;z&raquo; &bull;&middot; 5&deg; &plusmn;1 2&times;3 6&divide;2 \
            &euro;&pound;&yen;&cent; &sect;&para; &eacute;&Eacute;&agrave;&uuml;&ouml;&auml;&szlig;&ccedil;&ntilde;&oslash;&aring;</p>
            <p>&#233;&#xE9;&#XE9;&#x1F600; &#150; &#xD800;|&#1114112;|&#0;</p>
            <p>a&nbsp;&nbsp;b co&shy;operate AT&T &bogus; &amp &#; x&zwj;y</p>
            """
        let document = try onlyDocument(extract("entities.html", html))
        let lines = document.text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        #expect(
            lines == [
                "<tag> \"q\" 'a' ©®™ …—– ‘x’ “y” «z» •· 5° ±1 2×3 6÷2 €£¥¢ §¶ éÉàüöäßçñøå",
                "ééé😀 – \u{FFFD}|\u{FFFD}|\u{FFFD}",
                "a b cooperate AT&T &bogus; &amp &#; x\u{200D}y",
            ])
    }

    @Test func quotedAttributeValuesMayContainAngleBrackets() throws {
        let html = """
            <p><a title="x > y" href='a<b>c' data-x = "1 >= 0">link</a> after \
            <img alt="2 > 1" src=x.png> <span class=plain>tail</span></p>
            """
        let document = try onlyDocument(extract("a.html", html))
        #expect(document.text == "link after tail")
    }

    @Test func dropsCommentsCDATAProcessingInstructionsAndDoctype() throws {
        let html = """
            <?xml version="1.0" encoding="utf-8"?>
            <!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "x.dtd">
            <p>A<!-- a <p>comment</p> -->B<![CDATA[ cdata <b> ]]>C<!---->D</p>
            """
        let document = try onlyDocument(extract("page.xhtml", html))
        #expect(document.text == "ABCD")
        #expect(document.contentType == "public.html")
    }

    @Test func unterminatedConstructsAtTheEndDoNotCrashOrLeak() throws {
        let cases: [(String, String)] = [
            ("<p>Visible</p><!-- never closed <p>hidden", "Visible"),
            ("<p>Visible</p><a href=\"never closed>hidden", "Visible"),
            ("<p>Visible</p><script>hidden", "Visible"),
            ("<p>Visible</p><![CDATA[hidden", "Visible"),
            ("<p>Visible</p><!DOCTYPE", "Visible"),
            ("<p>Visible</p><title>hidden", "Visible"),
            ("Visible <", "Visible <"),
            ("Visible &", "Visible &"),
            ("Visible &#x", "Visible &#x"),
            ("Visible </", "Visible"),
            ("1 < 2 and 3 <= 4", "1 < 2 and 3 <= 4"),
            ("<", "<"),
        ]
        for (html, expected) in cases {
            let document = try onlyDocument(extract("edge.html", html))
            #expect(document.text == expected, "input \(html.debugDescription)")
        }
    }

    @Test func titleFallsBackToTheFirstHeading() throws {
        let html = "<body><h1>First &amp; <em>Best</em>\n heading</h1><p>Body</p><h1>Second</h1></body>"
        let document = try onlyDocument(extract("page.html", html))
        #expect(document.title == "First & Best heading")
        #expect(document.text == "First & Best heading\n\nBody\n\nSecond")
    }

    @Test func missingTitleAndHeadingGiveNil() throws {
        let document = try onlyDocument(extract("page.html", "<p>Just a paragraph</p><h1>   </h1>"))
        #expect(document.title == nil)
        #expect(document.text == "Just a paragraph")
    }

    @Test func svgTitlesAreNotTheDocumentTitle() throws {
        let html = "<body><svg><title>Tooltip</title><text>chart</text></svg><h1>Real</h1></body>"
        let document = try onlyDocument(extract("page.html", html))
        #expect(document.title == "Real")
        #expect(!document.text.contains("Tooltip"))
    }

    @Test func collapsesWhiteSpaceAndKeepsPreformattedLines() throws {
        let html = """
            <p>  a \t  b
            c  </p>



            <p>d</p>a<br>b<br><br><br>c
            <pre>line 1
              line 2</pre>
            <table><tr><th>h1</th><th>h2</th></tr><tr><td>a</td><td>b</td></tr></table>
            """
        let document = try onlyDocument(extract("ws.html", html))
        #expect(document.text == "a b c\n\nd\n\na\nb\n\nc\n\nline 1\nline 2\n\nh1 h2\na b")
    }

    @Test func tagNamesAreCaseInsensitive() throws {
        let html =
            "<HTML><HEAD><TITLE>Upper</TITLE></HEAD><BODY><P>One</P><DiV>Two</dIv><ScRiPt>hidden()</sCrIpT>Three</BODY></HTML>"
        let document = try onlyDocument(extract("upper.HTM", html))
        #expect(document.title == "Upper")
        #expect(document.text == "One\n\nTwo\nThree")
    }

    @Test func decodesLatin1HTML() throws {
        var bytes = Array("<title>Caf".utf8)
        bytes.append(0xE9)
        bytes +=
            Array("</title><p>Cr".utf8) + [0xE8] + Array("me br".utf8) + [0xFB, 0x6C, 0xE9, 0x65] + Array("</p>".utf8)
        let document = try onlyDocument(TextExtractor.extract(fileName: "latin1.html", bytes: bytes))
        #expect(document.title == "Café")
        #expect(document.text == "Crème brûlée")
    }

    @Test func emptyHTMLGivesAnEmptyDocument() throws {
        let document = try onlyDocument(extract("empty.html", ""))
        #expect(document.text == "")
        #expect(document.title == nil)
    }

    @Test func largeHTMLStaysLinear() throws {
        let chunk =
            "<div class=\"section\"><h2>Part &amp; parcel</h2><p>Some <a href=\"#x\">linked</a> text &mdash; more.</p><!-- note --><script>var x = 1 < 2;</script></div>\n"
        let html =
            "<html><head><title>Big</title></head><body>" + String(repeating: chunk, count: 5_000) + "</body></html>"
        let document = try onlyDocument(extract("big.html", html))
        #expect(document.title == "Big")
        #expect(document.text.hasPrefix("Part & parcel\n\nSome linked text — more.\n\nPart & parcel"))
        #expect(!document.text.contains("var x"))
        #expect(document.text.ranges(of: "Some linked text").count == 5_000)
    }
}
