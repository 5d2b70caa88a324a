/// The phrases used in `ExtractionResult.skipped(reason:)`.
///
/// Reasons name the kind of problem and the numbers involved, never the file's content.
enum ExtractionSkipReason {
    /// The file holds binary data (a known binary extension or a NUL byte near its start).
    static let binary = "binary content"

    /// The bytes decode in none of the supported encodings.
    static let notText = "not valid text in any supported encoding"

    /// The file is larger than the size limit.
    static func tooLarge(size: Int, limit: Int) -> String {
        "larger than the \(formatBytes(limit, roundingUp: false)) limit (\(formatBytes(size, roundingUp: true)))"
    }

    /// The extraction ran out of time.
    static func tooSlow(limit: Double) -> String {
        "extraction took longer than the \(formatSeconds(limit)) limit"
    }

    /// A byte count in bytes, KiB or MiB with at most one decimal ("16 MiB", "20.5 MiB", "512 KiB").
    ///
    /// Sizes round up so that a file just over a limit never prints as equal to it.
    static func formatBytes(_ count: Int, roundingUp: Bool) -> String {
        let count = max(count, 0)
        if count < 1024 { return count == 1 ? "1 byte" : "\(count) bytes" }
        let (unit, name) = count < 1 << 20 ? (1 << 10, "KiB") : (1 << 20, "MiB")
        let scaled = count.multipliedReportingOverflow(by: 10)
        let tenths: Int
        if scaled.overflow {
            tenths = (count / unit) * 10
        } else {
            tenths = roundingUp ? (scaled.partialValue + unit - 1) / unit : scaled.partialValue / unit
        }
        let fraction = tenths % 10
        return fraction == 0 ? "\(tenths / 10) \(name)" : "\(tenths / 10).\(fraction) \(name)"
    }

    /// A duration as "2 s", "0.25 s" or "1 µs".
    static func formatSeconds(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds > 0 else { return seconds <= 0 ? "0 s" : "unlimited" }
        if seconds < 0.001 {
            return "\(max(1, Int((seconds * 1_000_000).rounded()))) µs"
        }
        let thousandths = Int((seconds * 1000).rounded())
        var text = "\(thousandths / 1000)"
        var fraction = thousandths % 1000
        if fraction != 0 {
            var digits = 3
            while fraction % 10 == 0 {
                fraction /= 10
                digits -= 1
            }
            let padded = String(fraction)
            text += "." + String(repeating: "0", count: digits - padded.count) + padded
        }
        return text + " s"
    }
}
