extension RankingLists {
    /// The items a search through the lists has met, and what it knows of each: per phrase, its
    /// contribution to the score (NaN while unknown), the sum of those known, and which phrases they are
    /// (a bit each, so at most 64 phrases).
    ///
    /// A value type with its own table from row ids to slots: with the candidates in a `Dictionary` and
    /// arrays captured by nested functions, a search of eight common words at a million items spent a
    /// fifth of its time hashing and another fifth in the runtime's exclusivity checks.
    struct Candidates {
        let phrases: Int
        private(set) var rowIDs: [Int64] = []
        /// `phrases` values a slot: the phrase's contribution, NaN while unknown.
        private(set) var contributions: [Double] = []
        /// The sum of each slot's known contributions (in the order they became known: for bounds only;
        /// ``exactScore(_:)`` sums in phrase order, as FTS5 does).
        private(set) var knownSums: [Double] = []
        /// Each slot's known phrases, a bit each.
        private(set) var knownPhrases: [UInt64] = []
        /// Open addressing by the row id's hash: each place the row id and its slot + 1 (0 where empty),
        /// together so that a look-up reads one cache line; a power of two long, at most half full.
        private var table: [(rowID: Int64, slot: Int32)]

        static let mostPhrases = 64

        init(phrases: Int) {
            precondition(phrases <= Self.mostPhrases)
            self.phrases = phrases
            table = Array(repeating: (0, 0), count: 1024)
        }

        var count: Int { rowIDs.count }

        @inline(__always)
        private static func hash(_ rowID: Int64, _ mask: Int) -> Int {
            Int(truncatingIfNeeded: (UInt64(bitPattern: rowID) &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
        }

        /// Where `rowID` is in the table, or the empty place where it would go; and its slot, if noted.
        private func find(_ rowID: Int64) -> (position: Int, slot: Int?) {
            let mask = table.count - 1
            var position = Self.hash(rowID, mask)
            while true {
                let entry = table[position]
                if entry.slot == 0 { return (position, nil) }
                if entry.rowID == rowID { return (position, Int(entry.slot) - 1) }
                position = (position + 1) & mask
            }
        }

        /// The slot of `rowID`, if it was noted.
        func slot(of rowID: Int64) -> Int? { find(rowID).slot }

        /// Makes room for `extra` more items at once, rather than growing while they come.
        mutating func reserve(_ extra: Int) {
            let wanted = rowIDs.count + extra
            guard wanted > rowIDs.capacity else { return }
            // Geometrically, as appending would: a reservation of exactly what is wanted copies every time.
            let capacity = max(wanted, rowIDs.capacity * 2)
            rowIDs.reserveCapacity(capacity)
            contributions.reserveCapacity(capacity * phrases)
            knownSums.reserveCapacity(capacity)
            knownPhrases.reserveCapacity(capacity)
            // Four times over: each rehash places every row id again.
            if wanted * 2 > table.count { rehash(capacity: max(wanted * 2, table.count * 4)) }
        }

        /// Records `contribution` as what `phrase` adds to the score of `rowID`, noting the item first if
        /// it is new.
        mutating func note(_ rowID: Int64, _ phrase: Int, _ contribution: Double) {
            let (position, found) = find(rowID)
            if let found {
                set(found, phrase, contribution)
                return
            }
            let slot = rowIDs.count
            rowIDs.append(rowID)
            for _ in 0..<phrases { contributions.append(.nan) }
            knownSums.append(0)
            knownPhrases.append(0)
            table[position] = (rowID, Int32(slot + 1))
            if rowIDs.count * 2 > table.count { rehash(capacity: table.count * 4) }
            set(slot, phrase, contribution)
        }

        /// Records `contribution` as what `phrase` adds to the score of the item in `slot`.
        mutating func set(_ slot: Int, _ phrase: Int, _ contribution: Double) {
            let index = slot * phrases + phrase
            let old = contributions[index]
            contributions[index] = contribution
            knownSums[slot] += old.isNaN ? contribution : contribution - old
            knownPhrases[slot] |= 1 << UInt64(phrase)
        }

        /// The score of an item whose every phrase is known (or known absent): its known contributions
        /// summed in phrase order, FTS5's order.
        func exactScore(_ slot: Int) -> Double {
            var score = 0.0
            for phrase in 0..<phrases {
                let contribution = contributions[slot * phrases + phrase]
                if !contribution.isNaN { score += contribution }
            }
            return score
        }

        /// Whether the item in `slot` has `phrase`, as far as is known.
        func has(_ slot: Int, _ phrase: Int) -> Bool {
            knownPhrases[slot] & (1 << UInt64(phrase)) != 0
        }

        /// Makes the table at least `capacity` long (a power of two) and places every row id again.
        private mutating func rehash(capacity: Int) {
            var length = table.count
            while length < capacity { length *= 2 }
            table = Array(repeating: (0, 0), count: length)
            let mask = length - 1
            for (slot, rowID) in rowIDs.enumerated() {
                var position = Self.hash(rowID, mask)
                while table[position].slot != 0 { position = (position + 1) & mask }
                table[position] = (rowID, Int32(slot + 1))
            }
        }
    }
}
