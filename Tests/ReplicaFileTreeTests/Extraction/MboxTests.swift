import Foundation
import ReplicaFileTree
import Testing

@Suite("mbox")
struct MboxTests {
    private let threeMessages = """
        From ada@example.com Tue Nov  3 10:00:00 2026
        From: Ada <ada@example.com>
        To: grace@example.com
        Subject: First
        Date: Tue, 3 Nov 2026 10:00:00 +0100
        Message-ID: <m1@example.com>

        Hello Grace.
        >From the archive: quoted envelope-like line.
        >>From doubly quoted.
        > From with a space stays.

        From grace@example.com Tue Nov  3 11:00:00 2026
        From: Grace <grace@example.com>
        Subject: =?UTF-8?Q?Second_=E2=9C=93?=
        Content-Type: text/plain; charset=utf-8
        Content-Transfer-Encoding: quoted-printable

        Reply with a soft=
         break.

        From bob@x.org Tue Nov  3 12:00:00 2026
        From: bob@x.org
        Subject: Third

        Last message
        """

    @Test func splitsThreeMessagesAndUnescapesFromLines() throws {
        let all = try documents(extract("archive.mbox", threeMessages))
        #expect(all.count == 3)
        #expect(all.map(\.part) == ["1", "2", "3"])
        #expect(all.map(\.subject) == ["First", "Second ✓", "Third"])
        #expect(all.map(\.title) == ["First", "Second ✓", "Third"])
        #expect(all.allSatisfy { $0.contentType == "public.email-message" })

        #expect(
            all[0].text == """
                Hello Grace.
                From the archive: quoted envelope-like line.
                >From doubly quoted.
                > From with a space stays.
                """)
        #expect(all[0].authors == [ExtractedPerson(name: "Ada", address: "ada@example.com")])
        #expect(all[0].recipients == [ExtractedPerson(name: nil, address: "grace@example.com")])
        #expect(all[0].date == Date(timeIntervalSince1970: 1_793_696_400))
        #expect(all[0].messageID == "m1@example.com")
        #expect(all[1].text == "Reply with a soft break.")
        #expect(all[1].authors == [ExtractedPerson(name: "Grace", address: "grace@example.com")])
        #expect(all[2].text == "Last message")
        #expect(all[2].date == nil)
    }

    @Test func fileContentTypeIsMboxForTheExtensionAndTheBareName() {
        #expect(TextExtractor.contentType(forFileName: "archive.mbox") == "com.apple.mail.mbox")
        #expect(TextExtractor.contentType(forFileName: "mbox") == "com.apple.mail.mbox")
    }

    @Test func aFileNamedMboxIsSplit() throws {
        let all = try documents(extract("mbox", threeMessages))
        #expect(all.count == 3)
    }

    @Test func keepsOnlyTheFirstMaximumMessages() throws {
        let all = try documents(extract("a.mbox", threeMessages, limits: ExtractionLimits(maximumMessages: 2)))
        #expect(all.map(\.subject) == ["First", "Second ✓"])
        #expect(all.map(\.part) == ["1", "2"])
    }

    @Test func emptyMboxHasNoDocuments() throws {
        #expect(try documents(extract("empty.mbox", "")).isEmpty)
        #expect(try documents(extract("blank.mbox", "\n\n  \n")).isEmpty)
    }

    @Test func handlesCRLFAndAMessageWithoutEnvelope() throws {
        let crlf = threeMessages.replacingOccurrences(of: "\n", with: "\r\n")
        let all = try documents(extract("crlf.mbox", crlf))
        #expect(all.map(\.subject) == ["First", "Second ✓", "Third"])
        #expect(all[1].text == "Reply with a soft break.")
        #expect(all[2].text == "Last message")

        let lone = try documents(extract("lone.mbox", "Subject: Alone\n\nNo envelope"))
        #expect(lone.map(\.subject) == ["Alone"])
        #expect(lone.map(\.part) == ["1"])
    }

    @Test func fromInsideALineDoesNotSplit() throws {
        let mbox = "From a@x Mon Jan  1 00:00:00 2026\nSubject: One\n\nWords From here\nFromage is cheese\n"
        let all = try documents(extract("one.mbox", mbox))
        #expect(all.count == 1)
        #expect(all[0].text == "Words From here\nFromage is cheese")
    }

    @Test func aLargeMboxRespectsTheTimeLimit() throws {
        let message =
            "From a@x Mon Jan  1 00:00:00 2026\nSubject: S\n\n" + String(repeating: "body line\n", count: 50) + "\n"
        let mbox = String(repeating: message, count: 20_000)
        let reason = try skipReason(extract("big.mbox", mbox, limits: ExtractionLimits(timeLimit: 0.000_001)))
        #expect(reason == "extraction took longer than the 1 µs limit")
    }
}
