/// Makes text from outside (indexed titles, identifiers, file names, plugin output) safe to write on one
/// line of a terminal, a log or the compact tool format: no control character, line separator or
/// direction override in it can move the cursor, recolour the screen, reorder what is shown or start a
/// line of its own.
///
/// For example:
/// ```swift
/// DisplayText.oneLine("report\u{1B}[2J\nfake line")  // "report\u{1B}[2J\nfake line" with visible escapes
/// DisplayText.token("notes/a b\n.txt")               // "notes/a%20b%0A.txt"
/// ```
public enum DisplayText {
    /// Whether a character must never reach a terminal or a line-based format raw: C0 and C1 controls,
    /// DEL, the Unicode line and paragraph separators, and the bidirectional overrides and isolates.
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// The text with every unsafe character written as a visible escape (`\n`, `\r`, `\t`, `\u{1B}`).
    public static func oneLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var output = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard isUnsafe(scalar) else {
                output.append(scalar)
                continue
            }
            let escape =
                switch scalar {
                case "\n": "\\n"
                case "\r": "\\r"
                case "\t": "\\t"
                default: "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                }
            output.append(contentsOf: escape.unicodeScalars)
        }
        return String(output)
    }

    /// The text as one space-free token: unsafe characters, spaces and `%` are percent-encoded (their
    /// UTF-8 bytes as `%XX`), so the token reads back unambiguously.
    public static func token(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { isUnsafe($0) || $0 == " " || $0 == "%" }) else { return text }
        var output = ""
        for scalar in text.unicodeScalars {
            if isUnsafe(scalar) || scalar == " " || scalar == "%" {
                for byte in String(scalar).utf8 {
                    output += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
                }
            } else {
                output.unicodeScalars.append(scalar)
            }
        }
        return output
    }
}
