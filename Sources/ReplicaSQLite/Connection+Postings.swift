import CAnalyzer
import CSQLite

#if canImport(Glibc)
import Glibc
#endif

extension Connection {
    /// One word's postings, as ``eachWeightedPosting(vocabulary:weights:threshold:_:)`` hands them over:
    /// the word's bytes as FTS5 stores it, the items that hold it (ascending row ids) and, for each, the
    /// sum of the weights of the columns it occurs in, once per occurrence. Valid only inside the call.
    public struct WordPostings {
        public let term: UnsafeBufferPointer<UInt8>
        public let items: UnsafeBufferPointer<Int64>
        public let frequencies: UnsafeBufferPointer<Int64>
    }

    /// Reads every posting of an FTS5 table through its fts5vocab `instance` table `vocabulary`, in
    /// word order, and calls `word` with each word held by at least `threshold` items. A column not in
    /// `weights` weighs 1. The scan runs in C: a big index has tens of millions of occurrences.
    ///
    /// - Throws: ``SQLiteError`` when the scan fails, or what `word` threw (the scan stops there).
    public func eachWeightedPosting(
        vocabulary: String, weights: [(column: String, weight: Int64)], threshold: Int,
        _ word: (WordPostings) throws -> Void
    ) throws {
        let names = weights.map { strdup($0.column) }
        defer { names.forEach { free($0) } }
        let code = try visiting(word) { callback, context in
            names.map { UnsafePointer($0) }.withUnsafeBufferPointer { names in
                weights.map(\.weight).withUnsafeBufferPointer { values in
                    replica_fts5_weighted_postings(
                        handle, vocabulary, names.baseAddress, values.baseAddress, Int32(weights.count),
                        Int32(clamping: threshold), callback, context)
                }
            }
        }
        guard code == SQLITE_OK else { throw error(code: code, sql: "SELECT term, doc, col FROM \(vocabulary)") }
    }

    /// The same as ``eachWeightedPosting(vocabulary:weights:threshold:_:)``, read from the FTS5 table's own
    /// records (its `%_data` table, `dataTable`) when its index is one segment, as `optimize` leaves it:
    /// each page is read once and decoded in C, with no SQL row for each occurrence. `weights` are the
    /// table's columns' in order. Returns `false` when the records are not as this version of FTS5
    /// writes them after `optimize` (more than one segment, another format, entries marked deleted):
    /// `word` may have been called for some words by then; undo what it did and read them through
    /// fts5vocab.
    ///
    /// - Throws: ``SQLiteError`` when a read fails, or what `word` threw (the scan stops there).
    public func eachWeightedPostingOfOneSegment(
        dataTable: String, weights: [Int64], threshold: Int,
        _ word: (WordPostings) throws -> Void
    ) throws -> Bool {
        let code = try visiting(word) { callback, context in
            weights.withUnsafeBufferPointer { values in
                replica_fts5_segment_postings(
                    handle, dataTable, values.baseAddress, Int32(weights.count), Int32(clamping: threshold),
                    callback, context)
            }
        }
        if code == REPLICA_FTS5_POSTINGS_UNREADABLE { return false }
        guard code == SQLITE_OK else { throw error(code: code, sql: "SELECT id, block FROM \(dataTable)") }
        return true
    }

    /// Runs `scan`, a C scan of postings given a callback and its context, on this connection, handing
    /// each word to `word`; rethrows what `word` threw, else returns the scan's code.
    private func visiting(
        _ word: (WordPostings) throws -> Void,
        _ scan: (replica_fts5_postings_word, UnsafeMutableRawPointer) -> Int32
    ) throws -> Int32 {
        final class Visit {
            let word: (WordPostings) throws -> Void
            var failure: (any Error)?
            init(_ word: @escaping (WordPostings) throws -> Void) { self.word = word }
        }
        return try withoutActuallyEscaping(word) { word in
            let visit = Visit(word)
            let code = withExtendedLifetime(visit) {
                exclusively {
                    scan(
                        { context, term, termBytes, items, frequencies, count in
                            let visit = Unmanaged<Visit>.fromOpaque(context!).takeUnretainedValue()
                            do {
                                try visit.word(
                                    WordPostings(
                                        term: UnsafeBufferPointer(start: term, count: Int(termBytes)),
                                        items: UnsafeBufferPointer(start: items, count: Int(count)),
                                        frequencies: UnsafeBufferPointer(start: frequencies, count: Int(count))))
                                return 0
                            } catch {
                                visit.failure = error
                                return 1
                            }
                        }, Unmanaged.passUnretained(visit).toOpaque())
                }
            }
            if let failure = visit.failure { throw failure }
            return code
        }
    }
}
