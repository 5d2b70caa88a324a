extension RankingLists {
    /// The items a search through the lists has met, and what it knows of each: per phrase, its
    /// contribution to the score (NaN while unknown), the sum of those known, and which phrases they are
    /// (a bit each, so at most 64 phrases). Each item has a slot, in the order the items were met (an item
    /// ruled out and met again, a new one). The search keeps the row ids of those still in play in row
    /// id order beside them, the order of the tiers, so that reading a tier is one merge of two sorted
    /// lists (``merge(into:phrase:weighing:admission:_:)``), with no table from row ids to slots: at a
    /// million items such a table outgrew the caches, and a look-up missed them on most entries.
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

        static let mostPhrases = 64

        init(phrases: Int) {
            precondition(phrases <= Self.mostPhrases)
            self.phrases = phrases
        }

        var count: Int { rowIDs.count }

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
        }

        /// A slot for `rowID`, met for the first time, with nothing known of it.
        mutating func add(_ rowID: Int64) -> Int {
            let slot = rowIDs.count
            rowIDs.append(rowID)
            contributions.append(contentsOf: repeatElement(.nan, count: phrases))
            knownSums.append(0)
            knownPhrases.append(0)
            return slot
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
    }
}

extension RankingLists.Candidates {
    /// An item in play: its row id and its slot.
    typealias Entry = (rowID: Int64, slot: Int)

    /// Which items met for the first time join those in play: those whose contribution plus
    /// `othersCanAdd` is above `theta` and not below `lowest`, the test of the search's `isOut`, held as
    /// values so that the merge calls no closure per entry.
    struct Admission {
        var othersCanAdd: Double, theta: Double, lowest: Double

        /// Every item: before any bound is known, and for a word without a list, all of whose items are read.
        static let everyItem = Admission(othersCanAdd: 0, theta: -.infinity, lowest: -.infinity)

        @inline(__always)
        func admits(_ contribution: Double) -> Bool {
            let bound = contribution + othersCanAdd
            return !(bound <= theta || bound < lowest)
        }
    }

    /// What a phrase adds to an item's score, from the item's weighted frequency of it and its length.
    struct Weighing {
        var idf: Double, averageLength: Double

        @inline(__always)
        func contribution(frequency: Double, length: Double) -> Double {
            idf * RankingLists.impact(frequency: frequency, length: length, averageLength: averageLength)
        }
    }

    /// Merges one phrase's entries, given in row id order by `entries` (which calls its argument with
    /// each row id, weighted frequency and length, and returns false when what it reads is damaged), into
    /// the items in play, `active`, in the same order: an item in play gets its contribution; one met for
    /// the first time joins as `admission` says.
    mutating func merge(
        into active: inout [Entry], phrase: Int, weighing: Weighing, admission: Admission?,
        _ entries: ((Int64, Double, Double) -> Void) -> Bool
    ) -> Bool {
        var position = 0
        guard let admission else {
            // Nothing joins: the contributions of the items in play are set where they are, and only
            // theirs are computed.
            return entries { rowID, frequency, length in
                while position < active.count && active[position].rowID < rowID { position += 1 }
                if position < active.count && active[position].rowID == rowID {
                    set(active[position].slot, phrase, weighing.contribution(frequency: frequency, length: length))
                }
            }
        }
        var merged: [Entry] = []
        merged.reserveCapacity(active.count + 1_024)
        let intact = entries { rowID, frequency, length in
            let contribution = weighing.contribution(frequency: frequency, length: length)
            while position < active.count && active[position].rowID < rowID {
                merged.append(active[position])
                position += 1
            }
            if position < active.count && active[position].rowID == rowID {
                set(active[position].slot, phrase, contribution)
                merged.append(active[position])
                position += 1
            } else if admission.admits(contribution) {
                let slot = add(rowID)
                set(slot, phrase, contribution)
                merged.append((rowID, slot))
            }
        }
        merged.append(contentsOf: active[position...])
        active = merged
        return intact
    }
}
