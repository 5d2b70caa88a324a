/// A structured header value such as `Content-Type: text/plain; charset="utf-8"`.
///
/// The first item is lowercased (`text/plain`, `attachment`); parameters are keyed by lowercase
/// name with quotes removed. An RFC 2231 extended value (`name*=utf-8''a%20b`) is percent-decoded.
struct MailStructuredValue {
    /// The lowercase value before the first `;`, e.g. "multipart/mixed".
    let value: String
    /// The parameters after it.
    let parameters: [String: String]

    /// Parses raw header bytes; an absent header gives `defaultValue` and no parameters.
    init(_ raw: [UInt8]?, defaultValue: String) {
        guard let raw, !raw.isEmpty else {
            value = defaultValue
            parameters = [:]
            return
        }
        let text = ExtractionTranscoding.utf8OrWindows1252(raw)
        var segments: [[UInt8]] = [[]]
        var inQuotes = false
        var escaped = false
        for byte in text {
            if escaped {
                segments[segments.count - 1].append(byte)
                escaped = false
            } else if inQuotes, byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inQuotes.toggle()
            } else if byte == UInt8(ascii: ";"), !inQuotes {
                segments.append([])
            } else {
                segments[segments.count - 1].append(byte)
            }
        }
        let head = ExtractionBytes.trimmed(segments[0]).map(ExtractionBytes.lowercased)
        value = head.isEmpty ? defaultValue : String(decoding: head, as: UTF8.self)
        var parameters: [String: String] = [:]
        for segment in segments.dropFirst() {
            guard let equals = segment.firstIndex(of: UInt8(ascii: "=")) else { continue }
            var name = ExtractionBytes.trimmed(Array(segment[..<equals])).map(ExtractionBytes.lowercased)
            var content = ExtractionBytes.trimmed(Array(segment[(equals + 1)...]))
            if name.last == UInt8(ascii: "*") {
                name.removeLast()
                content = Self.extendedValue(content)
            }
            let key = String(decoding: name, as: UTF8.self)
            if parameters[key] == nil { parameters[key] = String(decoding: content, as: UTF8.self) }
        }
        self.parameters = parameters
    }

    /// The value of an RFC 2231 `charset'language'percent-encoded` parameter (charset ignored).
    private static func extendedValue(_ content: [UInt8]) -> [UInt8] {
        let quotes = content.indices.filter { content[$0] == UInt8(ascii: "'") }
        let encoded = quotes.count >= 2 ? content[(quotes[1] + 1)...] : content[...]
        var output: [UInt8] = []
        var index = encoded.startIndex
        while index < encoded.endIndex {
            if encoded[index] == UInt8(ascii: "%"), index + 2 < encoded.endIndex,
                let high = ExtractionBytes.hexValue(encoded[index + 1]),
                let low = ExtractionBytes.hexValue(encoded[index + 2])
            {
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(encoded[index])
                index += 1
            }
        }
        return ExtractionTranscoding.utf8OrWindows1252(output)
    }
}
