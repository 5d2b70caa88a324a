import Foundation
import ReplicaCore

/// Impact-ordered postings beside the full-text index (FTS5's on SQLite, the GIN-indexed `tsvector`s on
/// PostgreSQL), so that a ranked search of common words reads the few hundred items where they weigh
/// most instead of scoring every item that has them, and still returns exactly the items the full
/// ranking would put first (issue 22; `docs/benchmarks/ranked-search.md` says why this method and
/// what else was measured).
///
/// For each word in at least ``threshold`` items when the lists were built, `ranking_lists` keeps every
/// item that has it, ordered by "impact" (the part of the word's BM25 term that depends on the item:
/// its weighted frequency against the item's length), cut in tiers of growing length (``firstTier``,
/// then four times as many each time). Each tier keeps its items' numbers (row id, weighted frequency,
/// length) and the highest impact of an item in a later tier ("floor"). A search of words (no prefixes,
/// no predicate), at least one with a list, then proves its top results, MaxScore-style:
/// - the first tier of each word with a list is read; a word without one is in few items, all read
///   through FTS5 with their numbers, and so is a word the analyzer splits in two (a pair of Chinese
///   characters: ``key(ofPhrase:)``); every item written since the build (`ranking_changes`, kept in
///   the writing transaction by the writer, and by a trigger for deletes) is ranked by FTS5 itself;
/// - an item whose every word's contribution is known (read, or known absent since the word's tiers are
///   all read) has its exact score, the sum FTS5's `bm25()` makes; such items are checked against
///   expiry and the filters best first until the `limit`-th best score is known;
/// - an unchanged item not read yet scores at most the sum of the floors, and an item read for some
///   words at most its known part plus the floors of the others (an item ruled out and met again is
///   known by the words met since only, and stays out); and it scores at least its known part,
///   so the best partly read items, checked against expiry and the filters, put a floor under the
///   `limit`-th best score long before any item of a many-word search is known whole. While an item can
///   pass that score, the next tier of the word with the highest floor is read (a tier of a few thousand
///   entries costs about what FTS5 spends looking up one item, so items are never scored one by one).
/// The lists hold every posting of the words they cover, so the loop always ends with the exact top.
///
/// A build also merges FTS5's segments into one (`optimize`): the snippets of the items a search
/// returns are then made through FTS5 at one seek per word instead of one per word and segment.
///
/// A word's frequency among all items (BM25's idf) is the one kept with its list, corrected after changes
/// by the changed items that had the word at the build (in its tiers) and those that have it now. The floors were computed at
/// the average item length of the build; a bound at another average scales with it (see ``bound``).
///
/// The search itself (``top(_:tokens:source:)``) is the same on both backends; what it reads, it reads
/// through a ``RankingListSource``, which each backend implements over its own tables.
package enum RankingLists {
    /// FTS5's bm25 constants (fts5_aux.c).
    static let k1 = 1.2
    static let b = 0.75

    /// How many items the first tier of each list keeps; each later tier keeps four times as many as
    /// the one before.
    package static let firstTier = 256
    /// A word in fewer items than this, or than 1/64 of the items in a smaller index, gets no list: all
    /// its items are read through the full-text index at search time.
    package static let threshold = 256
    /// More items changed since the build than this and a search scores every match: rebuild then.
    package static let maximumChanges = 512

    /// What the lists were built from, as `ranking_state` keeps it: the index's rows and tokens.
    package struct State: Sendable, Equatable {
        package var rows: Int64
        package var tokens: Int64

        package init(rows: Int64, tokens: Int64) {
            self.rows = rows
            self.tokens = tokens
        }
    }

    /// One tier of a word's list as stored: how many items had the word at the build, the highest impact
    /// of an item in a later tier (0 for the last), and the entries (``encode(_:)``).
    package struct Tier: Sendable {
        package var documents: Int64
        package var floor: Double
        package var entries: [UInt8]

        package init(documents: Int64, floor: Double, entries: [UInt8]) {
            self.documents = documents
            self.floor = floor
            self.entries = entries
        }
    }

    /// What a build did.
    package struct Summary: Sendable, Equatable {
        /// Words with a list.
        package var terms: Int
        /// Entries over all lists.
        package var entries: Int

        package init(terms: Int, entries: Int) {
            self.terms = terms
            self.entries = entries
        }
    }

    /// How a search names a phrase to ``top(_:tokens:weights:source:)``: its one word, or its words
    /// joined by a space when the index's analyzer splits a searched word into several (a pair of
    /// Chinese characters that is no word of ICU's dictionary, say). No list is kept for such a name,
    /// since no word has a space: every item with the phrase is read through the full-text index, as
    /// for a word in few items.
    package static func key(ofPhrase words: [String]) -> String {
        words.joined(separator: " ")
    }

    /// How many items a search's phrase without a list (named by `key`) may be in, before the items
    /// changed since the build, for ``top(_:tokens:weights:source:)`` to read them all: a word, fewer
    /// than the build's `threshold`; a phrase of several words (``key(ofPhrase:)``), in any number of
    /// items, up to ``mostPhraseItems``. A source that reads them with a limit reads this many.
    package static func mostItems(withoutList key: String, threshold: Int) -> Int {
        key.utf8.contains(UInt8(ascii: " ")) ? max(threshold, mostPhraseItems) : threshold
    }

    /// How many items a phrase of several words may be in for a search to go through the lists: all of
    /// them are read through the full-text index, with their numbers. Chosen, not measured: sixteen
    /// times the first tier a word with a list is read by, and never more than scoring every match of
    /// the search reads, since that reads every item of every phrase.
    static let mostPhraseItems = 4_096

    /// The threshold a build of an index of `rows` items uses.
    package static func threshold(rows: Int64) -> Int {
        min(threshold, max(8, Int(rows / 64)))
    }

    // MARK: BM25

    /// A word's idf as FTS5 computes it: never zero or below.
    static func idf(rows: Int64, documents: Int64) -> Double {
        let idf = log((Double(rows) - Double(documents) + 0.5) / (Double(documents) + 0.5))
        return idf <= 0 ? 1e-6 : idf
    }

    /// The part of one word's BM25 term that depends on the item: FTS5's expression, without the idf.
    @inline(__always)
    static func impact(frequency: Double, length: Double, averageLength: Double) -> Double {
        (frequency * (k1 + 1.0)) / (frequency + k1 * (1 - b + b * length / averageLength))
    }

    /// The most an unread, unchanged item's impact can be at `averageLength`, when it was at most
    /// `floor` at `builtAverage`: the length's share of the denominator shrinks by at most
    /// `builtAverage ÷ averageLength` when the average grows, so the impact grows by at most its inverse.
    static func bound(floor: Double, builtAverage: Double, averageLength: Double) -> Double {
        guard floor > 0 else { return 0 }
        return min(k1 + 1, floor * max(1, averageLength / builtAverage))
    }

    // MARK: Tiers

    /// A tier's entries: by row id, each the row id's difference from the one before, the weighted
    /// frequency and the length, as little-endian base-128 numbers (three or four bytes an entry).
    static func encode(_ entries: [(rowID: Int64, frequency: Int64, length: Int64)]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entries.count * 4)
        func append(_ value: Int64) {
            var value = UInt64(bitPattern: value)
            while value >= 0x80 {
                bytes.append(UInt8(value & 0x7f) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }
        var previous: Int64 = 0
        for entry in entries {
            append(entry.rowID - previous)
            append(entry.frequency)
            append(entry.length)
            previous = entry.rowID
        }
        return bytes
    }

    /// Calls `body` with each entry of an encoded tier; `false` when the tier is damaged.
    static func decode(
        _ bytes: UnsafeRawBufferPointer, _ body: (_ rowID: Int64, _ frequency: Double, _ length: Double) -> Void
    ) -> Bool {
        var offset = 0
        func next() -> Int64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while offset < bytes.count, shift < 64 {
                let byte = bytes[offset]
                offset += 1
                value |= UInt64(byte & 0x7f) << shift
                if byte & 0x80 == 0 { return Int64(bitPattern: value) }
                shift += 7
            }
            return nil
        }
        var rowID: Int64 = 0
        while offset < bytes.count {
            guard let delta = next(), let frequency = next(), let length = next() else { return false }
            rowID += delta
            body(rowID, Double(frequency), Double(length))
        }
        return true
    }

    // MARK: Building

    /// The tiers of one word's list, from every item that has it (ascending row ids, each with its
    /// weighted frequency) and the items' lengths: ordered by impact at `averageLength`, cut into tiers
    /// of ``firstTier`` entries, then four times as many each time, each tier's entries by row id.
    package static func tiers(
        items: [Int64], frequencies: [Int64], length: (Int64) -> Int64, averageLength: Double,
        firstTier: Int = firstTier
    ) -> [(tier: Int64, floor: Double, entries: [UInt8])] {
        // Each item's impact beside its place. An item ranks above another by impact, then by row id
        // (items are in row-id order, so by place): a strict order, so each tier holds the items a sort
        // would put there. Each tier is selected from the items left (the best `size` of them, in no
        // order), not sorted: a few passes over a long list instead of a sort of it.
        let lengths = items.map(length)
        var ranked = items.indices.map { index in
            (
                impact: impact(
                    frequency: Double(frequencies[index]), length: Double(lengths[index]), averageLength: averageLength),
                index: index
            )
        }
        // Each place's tier, and each tier's floor: the impact of the best item after it.
        var tierOf = [Int32](repeating: 0, count: ranked.count)
        var floors: [Double] = []
        var start = 0
        var size = firstTier
        while start < ranked.count {
            let end = min(ranked.count, start + size)
            if end < ranked.count { selectBest(&ranked, from: start, count: end - start) }
            for rank in start..<end { tierOf[ranked[rank].index] = Int32(floors.count) }
            floors.append(ranked[end...].max(by: { ranks($1, above: $0) })?.impact ?? 0)
            start = end
            size *= 4
        }
        // The places in order are the row ids in order: each tier's entries by row id, with no sort.
        var entries = floors.map { _ in [(rowID: Int64, frequency: Int64, length: Int64)]() }
        for index in items.indices {
            entries[Int(tierOf[index])].append(
                (rowID: items[index], frequency: frequencies[index], length: lengths[index]))
        }
        return floors.indices.map { tier in (Int64(tier), floors[tier], encode(entries[tier])) }
    }

    /// Items' lengths by row id, as both backends' builds look them up, once per posting: in an array
    /// indexed by row id where the row ids are about as many as the items, else in a dictionary. An
    /// unknown row id has length 0.
    package static func lengths(byRowID lengths: [(id: Int64, length: Int64)]) -> (Int64) -> Int64 {
        let largest = lengths.map(\.id).max() ?? 0
        guard lengths.allSatisfy({ $0.id >= 0 }), largest < 4 * Int64(lengths.count) + 1_024 else {
            let byID = Dictionary(lengths, uniquingKeysWith: { _, last in last })
            return { byID[$0] ?? 0 }
        }
        var byID = [Int64](repeating: 0, count: Int(largest) + 1)
        for (id, length) in lengths { byID[Int(id)] = length }
        return { $0 >= 0 && $0 < byID.count ? byID[Int($0)] : 0 }
    }

    /// Whether `a` ranks above `b` in a word's list: a higher impact, or the same and an earlier place.
    private static func ranks(_ a: (impact: Double, index: Int), above b: (impact: Double, index: Int)) -> Bool {
        a.impact != b.impact ? a.impact > b.impact : a.index < b.index
    }

    /// Moves the best `count` of `ranked[start...]` (by ``ranks(_:above:)``) to its first `count` places,
    /// in no order (Hoare's selection).
    private static func selectBest(_ ranked: inout [(impact: Double, index: Int)], from start: Int, count: Int) {
        let target = start + count
        var low = start
        var high = ranked.count - 1
        while low < high {
            let middle = low + (high - low) / 2
            // The median of three as the pivot.
            var pivot = ranked[middle]
            let first = ranked[low]
            let last = ranked[high]
            if ranks(first, above: pivot) != ranks(first, above: last) {
                pivot = first
            } else if ranks(last, above: pivot) != ranks(last, above: first) {
                pivot = last
            }
            var i = low
            var j = high
            while i <= j {
                while ranks(ranked[i], above: pivot) { i += 1 }
                while ranks(pivot, above: ranked[j]) { j -= 1 }
                if i <= j {
                    ranked.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            if target <= j {
                high = j
            } else if target >= i {
                low = i
            } else {
                return
            }
        }
    }

    // MARK: Searching

    /// The `limit` items with the best BM25 for the words `tokens` (OR-ed) among those not expired that
    /// pass the search's filters, best first, with their BM25 as the full ranking computes it; `nil` when
    /// the lists do not help (none built, no word with a list, too many changes, or too many items to
    /// score one by one), and the caller scores every match.
    ///
    /// - Parameters:
    ///   - tokens: the search's words, each as the index stores it (no prefix), a phrase of several as
    ///     ``key(ofPhrase:)`` names it.
    ///   - weights: what each word's idf is multiplied by (``FTSPattern/phraseWeights``), as the full
    ///     ranking multiplies it.
    ///   - source: the lists and the index of the search, read in one snapshot; it knows the search's
    ///     filters and the time it is searched at.
    /// - Returns: each item with its score and, per word, whether the item has it.
    package static func top(_ limit: Int, tokens terms: [String], weights: [Double], source: some RankingListSource)
        throws
        -> [(rowID: Int64, score: Double, present: [Bool])]?
    {
        guard limit > 0, !terms.isEmpty, weights.count == terms.count, let (built, threshold) = try source.built(),
            built.rows > 0
        else { return nil }
        // Without a word in many items, the full-text index ranks the few matches quickly on its own.
        let firstTiers = try source.firstTiers(of: terms)
        guard firstTiers.contains(where: { $0 != nil }) else { return nil }
        let changes = try source.changes(limit: maximumChanges + 1)
        guard changes.count <= maximumChanges, let totals = try source.totals(), totals.rows > 0 else { return nil }
        // Unchanged, the index must still be what the lists were built from.
        if changes.isEmpty && (totals.rows != built.rows || totals.tokens != built.tokens) { return nil }
        let changed = Set(changes)
        let averageLength = Double(totals.tokens) / Double(totals.rows)
        let builtAverage = Double(built.tokens) / Double(built.rows)
        let phrases = terms.count

        // The candidates: for each, its contribution per phrase where known.
        guard phrases <= Candidates.mostPhrases else { return nil }
        var candidates = Candidates(phrases: phrases)

        // Per phrase: its idf, the floor of what is unread, whether every item with it is known, and its
        // next tier.
        var idfs = [Double](repeating: 0, count: phrases)
        var floors = [Double](repeating: 0, count: phrases)
        var complete = [Bool](repeating: false, count: phrases)
        var nextTier = [Int64](repeating: 1, count: phrases)
        // The limit-th best accepted score: it only rises, so an item whose score or bound is at or below
        // it is out for good (ties aside), and leaves the items in play.
        var theta = -Double.infinity
        // A floor under the limit-th best score of all, from partly read items: what is known of an item
        // is at most its score, so once `limit` items that pass expiry and the filters are known to score
        // at least `lowest`, an item that scores less is out. Strictly less: the items that set it are
        // never ruled out by it. Without it, eight common words leave θ unknown (no item is exact until
        // it is read in every word's list) while tens of thousands of items are read and kept.
        var lowest = -Double.infinity
        func isOut(_ value: Double) -> Bool { value <= theta || value < lowest }
        // The items in play (not decided: scored or ruled out), in row id order, the order of the tiers.
        var active: [Candidates.Entry] = []
        /// Merges a tier's entries into the items in play, taking in new items as `admission` says (none
        /// when `nil`). While unread items can pass, an item not in play can add at most what the other
        /// words' unread tiers can, so one whose part here plus that is out (``isOut``) is left out. An
        /// item ruled out before, or left out, and met again joins as if new, in a slot of its own: what
        /// is then known of it is less than all its parts, so its score from them is at most its own,
        /// which was out and stays out (the limit-th score only rises); one that failed expiry or the
        /// filters fails them again when checked; and an item accepted is never met again, since every
        /// word it can be met in was read for it.
        func read(
            _ entries: [UInt8], phrase: Int, admission: Candidates.Admission?,
            into candidates: inout Candidates, _ active: inout [Candidates.Entry]
        ) -> Bool {
            // An entry takes three bytes at least.
            if admission != nil { candidates.reserve(entries.count / 3) }
            let weighing = Candidates.Weighing(idf: idfs[phrase], averageLength: averageLength)
            return candidates.merge(into: &active, phrase: phrase, weighing: weighing, admission: admission) { body in
                entries.withUnsafeBytes { raw in
                    decode(raw) { rowID, frequency, length in
                        guard changed.isEmpty || !changed.contains(rowID) else { return }
                        body(rowID, frequency, length)
                    }
                }
            }
        }
        // The changed items' numbers now, from the full-text index itself.
        let changedNumbers =
            changes.isEmpty ? [] : try source.changedNumbers(changes).filter { $0.numbers.count == phrases + 1 }
        for (phrase, token) in terms.enumerated() {
            if let first = firstTiers[phrase] {
                var live = first.documents
                if !changes.isEmpty {
                    // The full-text index's count now: the build's, less the changed items that had the word
                    // then (found in its tiers, by row id like `changes`), plus those that have it now.
                    var before: Int64 = 0
                    for entries in try source.tiers(of: token) {
                        var position = 0
                        let intact = entries.withUnsafeBytes { raw in
                            decode(raw) { rowID, _, _ in
                                while position < changes.count && changes[position] < rowID { position += 1 }
                                if position < changes.count && changes[position] == rowID { before += 1 }
                            }
                        }
                        guard intact else { return nil }
                    }
                    live += Int64(changedNumbers.count { $0.numbers[phrase + 1] > 0 }) - before
                }
                idfs[phrase] = idf(rows: totals.rows, documents: live) * weights[phrase]
                floors[phrase] = first.floor
                complete[phrase] = first.floor == 0
                guard read(first.entries, phrase: phrase, admission: .everyItem, into: &candidates, &active) else {
                    return nil
                }
            } else {
                // No list: a word in few items when the lists were built (fewer than `threshold` then,
                // and at most every changed item more since), or a phrase of several words, in any number
                // (read whole up to ``mostPhraseItems``). All its items are read, with their numbers.
                let most = mostItems(withoutList: token, threshold: threshold) + changes.count
                var found = try source.postings(ofWord: phrase, limit: most + 1)
                guard found.count <= most else { return nil }
                let idf = idf(rows: totals.rows, documents: Int64(found.count)) * weights[phrase]
                idfs[phrase] = idf
                complete[phrase] = true
                found.sort { $0.rowID < $1.rowID }
                let weighing = Candidates.Weighing(idf: idf, averageLength: averageLength)
                _ = candidates.merge(into: &active, phrase: phrase, weighing: weighing, admission: .everyItem) { body in
                    for (rowID, frequency, length) in found where !changed.contains(rowID) {
                        body(rowID, frequency, length)
                    }
                    return true
                }
            }
        }

        // Exact scores of items that pass expiry and the filters, with the phrases each has.
        var accepted: [(rowID: Int64, score: Double, present: [Bool])] = []
        func score(_ numbers: [Double]) -> Double {
            // FTS5's sum, in its order.
            var score = 0.0
            for phrase in 0..<phrases {
                score +=
                    idfs[phrase]
                    * impact(frequency: numbers[phrase + 1], length: numbers[0], averageLength: averageLength)
            }
            return score
        }
        // Without filters, and with no item expired now (one look at the index of the items that expire),
        // every item passes, and nothing is checked: a many-word search checks about a thousand items,
        // a seek each. The row ids all name items: those of the tiers not changed since the build, and
        // the changed ones the full-text index matched.
        let everyItemPasses = try source.everyItemPasses()
        /// Which of `rowIDs` (a batch: a few hundred at most) are items that pass expiry and the filters.
        func passingFilters(_ rowIDs: some Collection<Int64>) throws -> Set<Int64> {
            if everyItemPasses { return Set(rowIDs) }
            return try source.passing(Array(rowIDs))
        }
        // The changed items that pass expiry and the filters, scored as FTS5 scores them.
        for start in stride(from: 0, to: changedNumbers.count, by: 256) {
            let batch = changedNumbers[start..<min(changedNumbers.count, start + 256)]
            let numbers = Dictionary(batch.map { ($0.rowID, $0.numbers) }, uniquingKeysWith: { first, _ in first })
            for rowID in try passingFilters(numbers.keys) {
                if let numbers = numbers[rowID] {
                    accepted.append((rowID, score(numbers), numbers.dropFirst().map { $0 > 0 }))
                }
            }
        }

        func settle() {
            accepted.sort { $0.score != $1.score ? $0.score > $1.score : $0.rowID < $1.rowID }
            if accepted.count >= limit { theta = accepted[limit - 1].score }
        }
        settle()
        // Partly read items found to pass expiry and the filters, and whether each slot was checked.
        var passing: [Int] = []
        var checked: [Bool] = []
        // Whether each slot is decided (scored or ruled out).
        var decided: [Bool] = []
        // Each exact item's score, once known (NaN before).
        var exactScores: [Double] = []
        let everyPhrase: UInt64 = phrases == 64 ? ~0 : (1 << UInt64(phrases)) - 1
        // How many items a statement checks against expiry and the filters.
        let batchSize = max(limit, 64)
        while true {
            let unseen = (0..<phrases).map {
                complete[$0]
                    ? 0 : idfs[$0] * bound(floor: floors[$0], builtAverage: builtAverage, averageLength: averageLength)
            }
            var incomplete: UInt64 = 0
            for phrase in 0..<phrases where !complete[phrase] { incomplete |= 1 << UInt64(phrase) }
            // What the words an item misses can add, by the set of them: a look-up per item instead of a
            // loop over its missing words (a fifth of a search of eight words went to that loop). Up to 12
            // words, one table of every set (4,096 sums a round); past that, a table for each eight, whose
            // parts are added: an English question of eight words is searched as up to sixteen, each word
            // as typed and by its stem.
            let groupWidth = phrases <= 12 ? phrases : 8
            let groupMask = (UInt64(1) << UInt64(groupWidth)) - 1
            let groups = (phrases + groupWidth - 1) / groupWidth
            let restOfMissing: [Double] = {
                var sums = [Double](repeating: 0, count: groups << groupWidth)
                for group in 0..<groups {
                    let base = group << groupWidth
                    let first = group * groupWidth
                    for missing in 1..<(1 << min(groupWidth, phrases - first)) {
                        sums[base + missing] =
                            sums[base + (missing & (missing - 1))] + unseen[first + missing.trailingZeroBitCount]
                    }
                }
                return sums
            }()
            /// What the words in `missing` can add to an item.
            @inline(__always)
            func rest(_ missing: UInt64) -> Double {
                guard groups > 1 else { return restOfMissing[Int(missing)] }
                var rest = 0.0
                var bits = missing
                var base = 0
                while bits != 0 {
                    rest += restOfMissing[base + Int(bits & groupMask)]
                    bits >>= UInt64(groupWidth)
                    base += 1 << groupWidth
                }
                return rest
            }
            decided += repeatElement(false, count: candidates.count - decided.count)
            exactScores += repeatElement(Double.nan, count: candidates.count - exactScores.count)
            checked += repeatElement(false, count: candidates.count - checked.count)
            // Read items: exact where every phrase is known, else bounded; those that cannot pass are out.
            var exact: [(score: Double, slot: Int)] = []
            // The best unchecked open items above the floor, for the floor (one batch a round), kept in
            // order as they come: no sort of every open item.
            var batch: [Int] = []
            var kept = 0
            // By index: iterating over `active` itself would copy it at the first write below.
            for index in active.indices {
                let entry = active[index]
                let slot = entry.slot
                if decided[slot] { continue }
                let missing = incomplete & ~candidates.knownPhrases[slot]
                if missing == 0 {
                    if exactScores[slot].isNaN { exactScores[slot] = candidates.exactScore(slot) }
                    let score = exactScores[slot]
                    guard !isOut(score) else {
                        decided[slot] = true
                        continue
                    }
                    exact.append((score, slot))
                } else {
                    let known = candidates.knownSums[slot]
                    guard !isOut(known + rest(missing)) else {
                        decided[slot] = true
                        continue
                    }
                    if !checked[slot], known > lowest,
                        batch.count < batchSize || known > candidates.knownSums[batch[batch.count - 1]]
                    {
                        var low = 0
                        var high = batch.count
                        while low < high {
                            let middle = (low + high) / 2
                            if candidates.knownSums[batch[middle]] >= known { low = middle + 1 } else { high = middle }
                        }
                        batch.insert(slot, at: low)
                        if batch.count > batchSize { batch.removeLast() }
                    }
                }
                active[kept] = entry
                kept += 1
            }
            active.removeLast(active.count - kept)
            // Exact items are checked best first until the limit-th best accepted score is known.
            exact.sort {
                $0.score != $1.score ? $0.score > $1.score : candidates.rowIDs[$0.slot] < candidates.rowIDs[$1.slot]
            }
            var position = 0
            while position < exact.count, accepted.count < limit || exact[position].score > theta {
                let batch = exact[position..<min(exact.count, position + batchSize)]
                position += batch.count
                let found = Dictionary(
                    batch.map { (candidates.rowIDs[$0.slot], $0) }, uniquingKeysWith: { first, _ in first })
                for rowID in try passingFilters(found.keys) {
                    if let item = found[rowID] {
                        accepted.append((rowID, item.score, (0..<phrases).map { candidates.has(item.slot, $0) }))
                    }
                }
                for item in batch { decided[item.slot] = true }
                settle()
            }
            // The floor: the best partly read items by what is known of them are checked (one batch a
            // round), then the limit-th best of what the checked and the accepted items are known to score.
            passing.removeAll { decided[$0] }
            func raiseLowest() {
                var known = accepted.map(\.score) + passing.map { candidates.knownSums[$0] }
                guard known.count >= limit else { return }
                known.sort(by: >)
                // Less a margin far above the rounding of a sum taken in another order than FTS5's, so
                // that an item scoring exactly the limit-th best is never ruled out by its own bound.
                let value = known[limit - 1]
                lowest = max(lowest, value - abs(value) * 1e-12)
            }
            raiseLowest()
            batch.removeAll { decided[$0] }
            if !batch.isEmpty {
                let passed = try passingFilters(batch.map { candidates.rowIDs[$0] })
                for slot in batch {
                    checked[slot] = true
                    if passed.contains(candidates.rowIDs[slot]) { passing.append(slot) } else { decided[slot] = true }
                }
                raiseLowest()
            }
            // Proven when no unread item and no partly read item can pass the limit-th score (ties aside).
            let unread = unseen.reduce(0, +)
            let unreadCanPass = unread > 0 && !isOut(unread)
            // Else the next tier of the word whose unread items could weigh most: among all words while
            // unread items could pass, else among the words the partly read ones miss. Reading a tier of
            // a few thousand entries costs about what FTS5 spends scoring one item, so items are never
            // scored one by one.
            var wantedPhrases = everyPhrase
            if !unreadCanPass {
                // The words the items still open miss (looked for only now: while unread items can pass,
                // every word is wanted, and there are many more items in play).
                wantedPhrases = 0
                for entry in active where !decided[entry.slot] {
                    let missing = incomplete & ~candidates.knownPhrases[entry.slot]
                    if missing != 0 && !isOut(candidates.knownSums[entry.slot] + rest(missing)) {
                        wantedPhrases |= missing
                    }
                }
                if wantedPhrases == 0 { break }
            }
            guard
                let phrase = (0..<phrases).filter({ wantedPhrases & (1 << UInt64($0)) != 0 && !complete[$0] }).max(by: {
                    unseen[$0] < unseen[$1]
                }),
                let next = try source.tier(nextTier[phrase], of: terms[phrase])
            else { return nil }  // A tier missing: the lists are damaged.
            nextTier[phrase] += 1
            floors[phrase] = next.floor
            complete[phrase] = next.floor == 0
            if unreadCanPass {
                let othersCanAdd = (0..<phrases).reduce(0.0) { $0 + ($1 == phrase ? 0 : unseen[$1]) }
                let admission = Candidates.Admission(othersCanAdd: othersCanAdd, theta: theta, lowest: lowest)
                guard read(next.entries, phrase: phrase, admission: admission, into: &candidates, &active) else {
                    return nil
                }
            } else {
                // No unread item can pass any more (and none will: θ only rises, floors only fall), so
                // the tier only tells the items still open their part: no new candidates.
                guard read(next.entries, phrase: phrase, admission: nil, into: &candidates, &active) else { return nil }
            }
        }
        return Array(accepted.prefix(limit))
    }
}

/// What a search through the ranking lists reads, all in one snapshot of one index: the lists and what
/// they were built from, the items changed since, and the full-text index for what the lists do not
/// hold. A source is made for one search: it knows the search's words (in the order ``RankingLists/top(_:tokens:weights:source:)``
/// is given them), its filters and the time it searches at.
package protocol RankingListSource {
    /// What the lists were built from and the threshold the build used; `nil` when none are built.
    func built() throws -> (state: RankingLists.State, threshold: Int)?
    /// The first tier of each word's list, in order; `nil` for a word without one.
    func firstTiers(of tokens: [String]) throws -> [RankingLists.Tier?]
    /// A tier of a word's list; `nil` when it has no such tier.
    func tier(_ number: Int64, of token: String) throws -> RankingLists.Tier?
    /// Every tier's entries of a word's list, in tier order.
    func tiers(of token: String) throws -> [[UInt8]]
    /// The row ids of the items written or deleted since the build, ascending, at most `limit`.
    func changes(limit: Int) throws -> [Int64]
    /// The index's rows and tokens now (expired items included, as the full-text index counts them);
    /// `nil` when they cannot be read.
    func totals() throws -> RankingLists.State?
    /// Of the changed items (`changes`, ascending), those that have any of the words now, each with
    /// its numbers: its length, then its weighted frequency of each word.
    func changedNumbers(_ changes: [Int64]) throws -> [(rowID: Int64, numbers: [Double])]
    /// Every item that has the search's `word`-th word (expired ones too), with its weighted frequency
    /// of it and its length, at most `limit`.
    func postings(ofWord word: Int, limit: Int) throws -> [(rowID: Int64, frequency: Double, length: Double)]
    /// Whether every item passes: no filters, and no item expired at the search's time.
    func everyItemPasses() throws -> Bool
    /// Which of `rowIDs` (a few hundred at most) are items that have not expired and pass the filters.
    func passing(_ rowIDs: [Int64]) throws -> Set<Int64>
}
