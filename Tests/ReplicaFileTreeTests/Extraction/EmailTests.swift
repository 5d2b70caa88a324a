import Foundation
import ReplicaFileTree
import Testing

@Suite("Email")
struct EmailTests {
    /// Joins lines with CRLF, as messages travel.
    private func crlf(_ lines: [String]) -> String {
        lines.joined(separator: "\r\n")
    }

    @Test func readsHeadersAndBodyOfACRLFMessage() throws {
        let message = crlf([
            "Return-Path: <ada@example.com>",
            "From: \"Ada Lovelace\" <ada@example.com>",
            "To: \"Hopper, Grace\" <grace@example.com>, bob@x.org, Carol <carol@x.org>",
            "CC: Dan <dan@example.net>",
            "Subject: Analytical engine notes",
            "Date: Tue, 3 Nov 2026 10:00:00 +0100",
            "Message-ID: <note-1@example.com>",
            "",
            "Dear Grace,",
            "",
            "the notes are attached.",
            "",
        ])
        let document = try onlyDocument(extract("note.eml", message))
        #expect(document.title == "Analytical engine notes")
        #expect(document.subject == "Analytical engine notes")
        #expect(document.authors == [ExtractedPerson(name: "Ada Lovelace", address: "ada@example.com")])
        #expect(
            document.recipients == [
                ExtractedPerson(name: "Hopper, Grace", address: "grace@example.com"),
                ExtractedPerson(name: nil, address: "bob@x.org"),
                ExtractedPerson(name: "Carol", address: "carol@x.org"),
                ExtractedPerson(name: "Dan", address: "dan@example.net"),
            ])
        #expect(document.date == Date(timeIntervalSince1970: 1_793_696_400))
        #expect(document.messageID == "note-1@example.com")
        #expect(document.text == "Dear Grace,\n\nthe notes are attached.")
        #expect(document.contentType == "public.email-message")
        #expect(document.part == nil)
    }

    @Test func unfoldsFoldedHeaders() throws {
        let message = crlf([
            "subject: A subject that was",
            "\tfolded over",
            "  three lines",
            "TO: first@example.com,",
            " \"Second Person\"",
            "  <second@example.com>",
            "",
            "Body",
        ])
        let document = try onlyDocument(extract("folded.eml", message))
        #expect(document.subject == "A subject that was folded over three lines")
        #expect(
            document.recipients == [
                ExtractedPerson(name: nil, address: "first@example.com"),
                ExtractedPerson(name: "Second Person", address: "second@example.com"),
            ])
        #expect(document.text == "Body")
    }

    @Test func decodesEncodedWordsInBAndQ() throws {
        let message = """
            From: =?ISO-8859-1?Q?Andr=E9?= Muster <andre@example.ch>
            To: =?utf-8?B?R3LDvMOfZSBhdXMgS8O2bG4=?= <koeln@example.de>, "=?UTF-8?Q?Z=C3=BCrich_Team?=" <zh@example.ch>
            Subject: Re: =?UTF-8?Q?caf=C3=A9_?=  =?UTF-8?B?R3LDvMOfZQ==?= and =?iso-8859-1?q?na=EFve?= end
            Cc: =?UTF-8?B?R3LD?= =?UTF-8?B?tsOfZQ==?= <split@example.com>

            Hello
            """
        let document = try onlyDocument(extract("words.eml", message))
        #expect(document.subject == "Re: café Grüße and naïve end")
        #expect(document.authors == [ExtractedPerson(name: "André Muster", address: "andre@example.ch")])
        #expect(
            document.recipients == [
                ExtractedPerson(name: "Grüße aus Köln", address: "koeln@example.de"),
                ExtractedPerson(name: "Zürich Team", address: "zh@example.ch"),
                ExtractedPerson(name: "Größe", address: "split@example.com"),
            ])
    }

    @Test func malformedEncodedWordsStayAsTheyAre() throws {
        let message = "Subject: =?UTF-8?X?abc?= and =?broken\n\nBody"
        let document = try onlyDocument(extract("bad.eml", message))
        #expect(document.subject == "=?UTF-8?X?abc?= and =?broken")
    }

    @Test(arguments: [
        ("Tue, 3 Nov 2026 10:00:00 +0100", 1_793_696_400.0),
        ("3 Nov 2026 10:00:00 +0100", 1_793_696_400.0),
        ("Tue, 03 Nov 2026 09:00 GMT", 1_793_696_400.0),
        ("Tue, 3 Nov 2026 10:00:00 EST", 1_793_718_000.0),
        ("Tuesday,  3 nov 2026 02:00:00 -0700 (PDT)", 1_793_696_400.0),
        ("Fri, 31 Dec 99 23:59:00 UT", 946_684_740.0),
        ("Thu, 29 Feb 2024 17:30:05 Z", 1_709_227_805.0),
        ("Mon, 5 Jan 26 09:04:05 +01:00", 1_767_600_245.0),
        ("Fri, 20 Mar 2009 07:00:00 CDT", 1_237_550_400.0),
    ])
    func parsesRFC5322Dates(header: String, seconds: Double) throws {
        let document = try onlyDocument(extract("d.eml", "Date: \(header)\n\nx"))
        #expect(document.date == Date(timeIntervalSince1970: seconds))
    }

    @Test(arguments: [
        "yesterday", "Tue, 30 Feb 2026 10:00:00 +0000", "Tue, 3 Foo 2026 10:00:00 +0000",
        "Tue, 3 Nov 2026 25:00:00 +0000", "Tue, 3 Nov 2026", "2026-11-03T10:00:00Z", "",
    ])
    func unparseableDatesAreNil(header: String) throws {
        let document = try onlyDocument(extract("d.eml", "Date: \(header)\nSubject: s\n\nx"))
        #expect(document.date == nil)
        #expect(document.subject == "s")
    }

    @Test func nestedMultipartPrefersPlainTextAndDecodesQuotedPrintable() throws {
        let message = crlf([
            "From: sender@example.com",
            "Subject: Nested",
            "MIME-Version: 1.0",
            "Content-Type: multipart/mixed; boundary=\"outer;boundary\"",
            "",
            "This is a multi-part message in MIME format.",
            "--outer;boundary",
            "Content-Type: multipart/alternative; boundary=inner",
            "",
            "--inner",
            "Content-Type: text/plain; charset=\"iso-8859-1\"",
            "Content-Transfer-Encoding: quoted-printable",
            "",
            "Caf=E9 au lait, =3D equals, and a soft=",
            " break that joins.",
            "Second line=20",
            "--inner",
            "Content-Type: text/html; charset=utf-8",
            "",
            "<p>HTML version htmlonlyword</p>",
            "--inner--",
            "",
            "--outer;boundary",
            "Content-Type: application/pdf; name=\"notes.pdf\"",
            "Content-Disposition: attachment; filename=\"notes.pdf\"",
            "Content-Transfer-Encoding: base64",
            "",
            "JVBERi0xLjQgc2VjcmV0IGF0dGFjaG1lbnQgYnl0ZXM=",
            "--outer;boundary--",
            "epilogue",
        ])
        let document = try onlyDocument(extract("nested.eml", message))
        #expect(document.text == "Café au lait, = equals, and a soft break that joins.\nSecond line")
        #expect(!document.text.contains("htmlonlyword"))
        #expect(!document.text.contains("secret"))
        #expect(document.title == "Nested")
    }

    @Test func usesTheHTMLPartWhenThereIsNoPlainTextAndDecodesBase64() throws {
        let message = """
            Subject: HTML only
            Content-Type: multipart/alternative;
             boundary="b1"

            --b1
            Content-Type: text/html; charset=UTF-8
            Content-Transfer-Encoding: base64

            PGh0bWw+PGhlYWQ+PHRpdGxlPng8L3RpdGxlPjwvaGVhZD48Ym9keT48cD5IYWxsbyAmYW1wOyB3
            aWxsa29tbWVuPC9wPjxzY3JpcHQ+dHJhY2tlcigpPC9zY3JpcHQ+PC9ib2R5PjwvaHRtbD4=
            --b1--
            """
        let document = try onlyDocument(extract("html.eml", message))
        #expect(document.text == "Hallo & willkommen")
        #expect(document.title == "HTML only")
    }

    @Test func ignoresAttachmentsEvenWhenTheyAreText() throws {
        let message = """
            Subject: With attachment
            Content-Type: multipart/mixed; boundary=XYZ

            --XYZ
            Content-Type: text/plain; name=secrets.txt
            Content-Disposition: attachment; filename=secrets.txt

            attachedword should not be indexed
            --XYZ
            Content-Type: image/png
            Content-Transfer-Encoding: base64

            iVBORw0KGgo=
            --XYZ
            Content-Type: text/html

            <p>Inline <b>body</b></p>
            --XYZ--
            """
        let document = try onlyDocument(extract("attach.eml", message))
        #expect(document.text == "Inline body")
    }

    @Test func decodesABase64PlainBodyWithItsCharset() throws {
        let message = """
            Subject: b64
            Content-Type: text/plain; charset=utf-8
            Content-Transfer-Encoding: BASE64

            R3LDvMOfZSBh
            dXMgS8O2bG4=
            """
        let document = try onlyDocument(extract("b64.eml", message))
        #expect(document.text == "Grüße aus Köln")
    }

    @Test func readsAnEightBitLatin1Body() throws {
        var bytes = Array("Subject: Latin\nContent-Type: text/plain; charset=ISO-8859-1\n\nNa".utf8)
        bytes += [0xEF, 0x76, 0x65, 0x20, 0x80]
        let document = try onlyDocument(TextExtractor.extract(fileName: "latin.eml", bytes: bytes))
        #expect(document.text == "Naïve €")
    }

    @Test func readsAMessageWithoutHeadersOrContentType() throws {
        let noHeaders = try onlyDocument(extract("plain.eml", "\nJust a body\nline two\n"))
        #expect(noHeaders.text == "Just a body\nline two")
        #expect(noHeaders.subject == nil)
        #expect(noHeaders.title == nil)
        #expect(noHeaders.authors.isEmpty)
        #expect(noHeaders.date == nil)

        let noContentType = try onlyDocument(extract("x.eml", "From: a@b.c\nSubject:   \n\nText"))
        #expect(noContentType.subject == nil)
        #expect(noContentType.text == "Text")
    }

    @Test func skipsAnMboxEnvelopeLineAtTheStartOfAnEml() throws {
        let message = "From ada@example.com Tue Nov  3 10:00:00 2026\nFrom: ada@example.com\nSubject: Env\n\nBody"
        let document = try onlyDocument(extract("env.eml", message))
        #expect(document.subject == "Env")
        #expect(document.authors == [ExtractedPerson(name: nil, address: "ada@example.com")])
        #expect(document.text == "Body")
    }

    @Test func parsesGroupsCommentsAndBareNames() throws {
        let message = """
            From: ada@example.com (Ada Lovelace)
            To: Team: one@example.com, "Two, Jr." <two@example.com>;, undisclosed-recipients:;
            Cc: Just A Name, <angle@example.com>

            x
            """
        let document = try onlyDocument(extract("groups.eml", message))
        #expect(document.authors == [ExtractedPerson(name: "Ada Lovelace", address: "ada@example.com")])
        #expect(
            document.recipients == [
                ExtractedPerson(name: nil, address: "one@example.com"),
                ExtractedPerson(name: "Two, Jr.", address: "two@example.com"),
                ExtractedPerson(name: "Just A Name", address: nil),
                ExtractedPerson(name: nil, address: "angle@example.com"),
            ])
    }

    @Test func truncatesALongBody() throws {
        let message = "Subject: Long\n\n" + String(repeating: "é", count: 100)
        let limits = ExtractionLimits(maximumTextBytes: 11)
        let document = try onlyDocument(extract("long.eml", message, limits: limits))
        #expect(document.text == "ééééé")
        #expect(document.wasTruncated)
    }
}
