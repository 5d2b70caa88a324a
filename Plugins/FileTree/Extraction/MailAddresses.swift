/// Parses RFC 5322 address lists such as
/// `"Ada Lovelace" <ada@example.com>, grace@example.com, Bob <bob@x.org>`.
///
/// Commas inside quoted names, comments or angle brackets do not split; group syntax
/// (`Team: a@x.org, b@x.org;`) yields the group's members; a bare address may carry its name in
/// a comment (`ada@example.com (Ada)`). Names lose their quotes and have encoded-words decoded.
enum MailAddresses {
    /// The people in the raw bytes of an address header.
    static func parse(_ raw: [UInt8]) -> [ExtractedPerson] {
        let text = ExtractionTranscoding.utf8OrWindows1252(raw)
        var people: [ExtractedPerson] = []
        var entryStart = 0
        var inQuotes = false
        var escaped = false
        var commentDepth = 0
        var inAngle = false
        func finishEntry(_ end: Int) {
            if end > entryStart, let person = mailbox(Array(text[entryStart..<end])) { people.append(person) }
            entryStart = end + 1
        }
        for (index, byte) in text.enumerated() {
            if escaped {
                escaped = false
                continue
            }
            if inQuotes || commentDepth > 0, byte == UInt8(ascii: "\\") {
                escaped = true
                continue
            }
            if inQuotes {
                if byte == UInt8(ascii: "\"") { inQuotes = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "("):
                commentDepth += 1
            case UInt8(ascii: ")"):
                commentDepth = max(0, commentDepth - 1)
            case _ where commentDepth > 0:
                break
            case UInt8(ascii: "\""):
                inQuotes = true
            case UInt8(ascii: "<"):
                inAngle = true
            case UInt8(ascii: ">"):
                inAngle = false
            case UInt8(ascii: ","), UInt8(ascii: ";"):
                if !inAngle { finishEntry(index) }
            case UInt8(ascii: ":"):
                // A group name ("Team:" or "undisclosed-recipients:") is not a person.
                if !inAngle { entryStart = index + 1 }
            default:
                break
            }
        }
        finishEntry(text.count)
        return people
    }

    /// One mailbox: `name <address>`, `address (name)`, a bare address or a bare name.
    private static func mailbox(_ entry: [UInt8]) -> ExtractedPerson? {
        var outside: [UInt8] = []  // text outside comments and angle brackets
        var comment: [UInt8] = []
        var angle: [UInt8]?
        var inQuotes = false
        var escaped = false
        var commentDepth = 0
        var inAngle = false
        for byte in entry {
            if escaped {
                if commentDepth > 0 { comment.append(byte) } else { outside.append(byte) }
                escaped = false
                continue
            }
            if inQuotes || commentDepth > 0, byte == UInt8(ascii: "\\") {
                escaped = true
                continue
            }
            if inQuotes {
                if byte == UInt8(ascii: "\"") { inQuotes = false } else { outside.append(byte) }
                continue
            }
            if commentDepth > 0 {
                if byte == UInt8(ascii: "(") { commentDepth += 1 }
                if byte == UInt8(ascii: ")") { commentDepth -= 1 }
                if commentDepth > 0 { comment.append(byte) } else { comment.append(ExtractionBytes.space) }
                continue
            }
            if inAngle {
                if byte == UInt8(ascii: ">") { inAngle = false } else { angle?.append(byte) }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inQuotes = true
            case UInt8(ascii: "("): commentDepth = 1
            case UInt8(ascii: "<"):
                inAngle = true
                if angle == nil { angle = [] }
            default: outside.append(byte)
            }
        }
        let outsideText = ExtractionBytes.collapsedLine(outside)
        let commentName = displayName(comment)
        if let angle {
            let address = ExtractionBytes.trimmedString(angle.filter { !ExtractionBytes.isWhitespace($0) })
            let name = displayName(outsideText) ?? commentName
            return address == nil && name == nil ? nil : ExtractedPerson(name: name, address: address)
        }
        guard !outsideText.isEmpty else { return commentName.map { ExtractedPerson(name: $0, address: nil) } }
        if outsideText.contains(UInt8(ascii: "@")), !outsideText.contains(ExtractionBytes.space) {
            return ExtractedPerson(name: commentName, address: String(decoding: outsideText, as: UTF8.self))
        }
        return ExtractedPerson(name: displayName(outsideText), address: nil)
    }

    /// A display name with encoded-words decoded and white space collapsed; nil when empty.
    private static func displayName(_ bytes: [UInt8]) -> String? {
        ExtractionBytes.trimmedString(
            ExtractionBytes.collapsedLine(MailEncodedWords.decode(ExtractionBytes.collapsedLine(bytes))))
    }
}
