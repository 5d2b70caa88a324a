/// Cuts at the start or the end of a word in steps bounded by what is cut, never by the word's length:
/// the word-making code on every path goes through these, so that a 1 MB word costs ten times a 100 KB
/// word, not a hundred (a `dropLast()` in a loop recounts the whole string at each step).
extension Collection {
    /// The end of the longest prefix whose elements' sizes add up to at most `limit`: it never splits an
    /// element (a character, when `size` counts a character's UTF-8 bytes), and walks only the prefix.
    ///
    /// For example:
    /// ```swift
    /// let end = "añb".endOfPrefix(within: 2) { $0.utf8.count }   // after "a": "ñ" takes two bytes more
    /// ```
    package func endOfPrefix(within limit: Int, size: (Element) -> Int) -> Index {
        var end = startIndex
        var used = 0
        while end != endIndex {
            used += size(self[end])
            guard used <= limit else { break }
            formIndex(after: &end)
        }
        return end
    }
}

extension BidirectionalCollection where Element: Equatable {
    /// The collection without the copies of `element` at its end, and how many were taken off: steps
    /// bounded by that number.
    package func removingTrailing(_ element: Element) -> (rest: SubSequence, removed: Int) {
        var end = endIndex
        var removed = 0
        while end != startIndex {
            let before = index(before: end)
            guard self[before] == element else { break }
            end = before
            removed += 1
        }
        return (self[startIndex..<end], removed)
    }
}
