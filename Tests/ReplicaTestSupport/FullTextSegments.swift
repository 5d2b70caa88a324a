import ReplicaSQLite

/// How many segments FTS5's index in the SQLite index file at `path` is in, read from the file itself: a
/// segment's pages are rows of `items_text_data` whose id holds the segment's number from bit 37 up.
/// FTS5 merges a level of 16 at once (and four at a time as pages are written); a load leaves them, up to
/// 64 a level, for the ranking lists' build.
public func fullTextSegments(ofIndexFile path: String) throws -> Int {
    try Connection(path: path).scalarInt(
        "SELECT count(DISTINCT id >> 37) FROM items_text_data WHERE id >> 37 > 0") ?? 0
}
