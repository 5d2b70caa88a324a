/// Collects the visible text of an HTML document while tidying its white space.
///
/// As a browser renders it: runs of white space become one space, and source line breaks are
/// spaces too except inside preformatted text (`preservesNewlines`), where they stay. Block
/// tags ask for a line break or a blank line. Spaces at the start and end of lines vanish, at
/// most two line breaks follow each other (one blank line), and the text never starts or ends
/// with a line break. `&nbsp;` counts as a space and `&shy;` (an invisible hyphenation hint
/// that would split words) is dropped.
struct HTMLTextWriter {
    /// The text so far, as UTF-8.
    private(set) var bytes: [UInt8]
    /// Whether source line breaks are kept (inside `<pre>`) rather than read as spaces.
    var preservesNewlines = false
    private var pendingSpace = false
    private var lineHasContent = false
    private var newlines = 0

    /// A writer that expects about `capacity` bytes of text.
    init(capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Appends one byte of text (white space is collapsed).
    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if byte > ExtractionBytes.space {
            if pendingSpace {
                pendingSpace = false
                if lineHasContent { bytes.append(ExtractionBytes.space) }
            }
            bytes.append(byte)
            lineHasContent = true
            newlines = 0
        } else if byte == ExtractionBytes.newline, preservesNewlines {
            newline()
        } else {
            // Space, tab, CR, FF and stray control characters separate words.
            pendingSpace = true
        }
    }

    /// Appends a decoded character reference.
    mutating func append(scalar value: UInt32) {
        switch value {
        case 0..<0x80:
            append(UInt8(value))
        case 0xA0:
            pendingSpace = true
        case 0xAD:
            break
        default:
            if pendingSpace {
                pendingSpace = false
                if lineHasContent { bytes.append(ExtractionBytes.space) }
            }
            ExtractionBytes.appendUTF8(value, to: &bytes)
            lineHasContent = true
            newlines = 0
        }
    }

    /// Separates words, as a table cell boundary does.
    mutating func space() {
        pendingSpace = true
    }

    /// Adds a line break, as `<br>` or a line break in preformatted text does: one more empty line
    /// each time, up to one blank line.
    mutating func newline() {
        pendingSpace = false
        lineHasContent = false
        if !bytes.isEmpty, newlines < 2 {
            bytes.append(ExtractionBytes.newline)
            newlines += 1
        }
    }

    /// Ends the current line unless it is already ended, as a block such as `<li>` does.
    mutating func lineBreak() {
        pendingSpace = false
        lineHasContent = false
        if !bytes.isEmpty, newlines == 0 {
            bytes.append(ExtractionBytes.newline)
            newlines = 1
        }
    }

    /// Ends the current paragraph with a blank line, as `<p>` or `<h2>` does.
    mutating func paragraphBreak() {
        pendingSpace = false
        lineHasContent = false
        while !bytes.isEmpty, newlines < 2 {
            bytes.append(ExtractionBytes.newline)
            newlines += 1
        }
    }

    /// The collected text without trailing line breaks.
    mutating func finish() -> [UInt8] {
        while bytes.last == ExtractionBytes.newline { bytes.removeLast() }
        return bytes
    }
}
