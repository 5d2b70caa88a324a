import ReplicaSQLite

// FTS5's segments during a load (``IndexLoad``): written, not merged, until the lists' build merges them once.
extension SQLiteIndexWriter {
    /// The FTS5 settings that decide when it merges segments: each one's value when the index has none
    /// of its own (FTS5's default), and its value in a load.
    static let mergeSettings: [(name: String, unset: Int64, inLoad: Int64)] = [
        ("automerge", 4, 0), ("crisismerge", 16, 64),
    ]

    /// Runs `body`, a write of a load, with FTS5 merging none of the index's segments: what the
    /// transaction indexes is written out as new segments (one at its end, or one each 16 MiB) and
    /// nothing written before is read and written again.
    ///
    /// Outside a load FTS5 merges a little at every write (`automerge`), so that searches read few
    /// segments. A load that leaves an index of 10,000 items or more is followed by the ranking lists'
    /// build, whose `optimize` merges every segment into one
    /// (``RankingLists/build(_:now:firstTier:threshold:scan:)``): merges during the load only wrote the
    /// same words once more (a tree's sixteen transactions: its `sync` took 0.66 s less of 7.1 s without
    /// them, the median of five pairs, docs/benchmarks/indexing.md). A level of 64 segments is still
    /// merged (`crisismerge`), so that a search during a long load reads a bounded number of them; a
    /// smaller index's segments are left to the next writes' merges. The settings are changed in the
    /// transaction and set back before it commits, so no other write, and no load killed midway, finds
    /// them changed; a reader that read them before asks its first ranked query again
    /// (``SQLiteIndexReader/matches(_:pattern:limit:)``).
    func withoutMergingSegments<T>(_ body: () throws -> T) throws -> T {
        var stored: [String: Int64] = [:]
        try connection.cached("SELECT k, v FROM items_text_config WHERE k IN ('automerge', 'crisismerge')").each {
            row in
            stored[row.text(0)] = row.int64(1)
            return true
        }
        let set = try connection.cached("INSERT INTO items_text(items_text, rank) VALUES (?, ?)")
        for setting in Self.mergeSettings { try set.run([.text(setting.name), .integer(setting.inLoad)]) }
        let value = try body()
        // FTS5 writes out the words it holds at a savepoint: here, while merging is off (at the commit
        // it would merge by the settings set back below).
        try connection.execute("SAVEPOINT load_segments")
        try connection.execute("RELEASE load_segments")
        for setting in Self.mergeSettings {
            try set.run([.text(setting.name), .integer(stored[setting.name] ?? setting.unset)])
            // A setting the index did not have is left unset again (FTS5 has read its value already).
            if stored[setting.name] == nil {
                try connection.cached("DELETE FROM items_text_config WHERE k = ?").run([.text(setting.name)])
            }
        }
        return value
    }
}
