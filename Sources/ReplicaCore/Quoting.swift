/// Text put between quote marks for a query language (SQL identifiers and literals, FTS5 strings),
/// with each mark inside doubled.
///
/// Done scalar by scalar: a quote followed by a combining mark is one `Character` to Swift's `String`,
/// so a `Character`-level replacement would leave that quote single and let the rest of the text be read
/// as syntax (the `query` fuzz target found this).
package enum Quoting {
    package static func enclosed(_ text: String, in mark: Unicode.Scalar) -> String {
        var view = String.UnicodeScalarView()
        view.append(mark)
        for scalar in text.unicodeScalars {
            view.append(scalar)
            if scalar == mark { view.append(mark) }
        }
        view.append(mark)
        return String(view)
    }
}
