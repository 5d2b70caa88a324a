import Foundation
import ReplicaCore

/// Turns text into unit vectors whose dot product says how close two texts are in meaning: what semantic
/// search compares. replica ships two, run in-process (`MiniLMEmbedder`, all-MiniLM-L6-v2, English;
/// `MultilingualE5Embedder`, multilingual-e5-small, about a hundred languages); a host may bring another.
///
/// Vectors are kept with each account's index and tagged with ``modelIdentifier``: when the model
/// changes, they are computed again (search answers lexically meanwhile).
///
/// For example:
/// ```swift
/// let embedder = try MiniLMEmbedder()
/// let query = try embedder.embed(query: "which stem cell methods avoid c-Myc")
/// let passages = try embedder.embed(documents: ["Induction of pluripotent stem cells …"])
/// ```
public protocol Embedder: Sendable {
    /// The model and its version, such as `sentence-transformers/all-MiniLM-L6-v2@…`: vectors made under
    /// another identifier are rebuilt.
    var modelIdentifier: String { get }
    /// How many numbers a vector has.
    var dimensions: Int { get }
    /// A question or typed words, as one unit vector.
    func embed(query: String) throws -> [Float]
    /// Each document as one unit vector per passage: long text is cut into passages the model can read
    /// whole, and a document's semantic score is its best passage's.
    func embed(documents: [String]) throws -> [[[Float]]]
    /// The cosine of texts that have nothing to do with each other, for this model: where its scale of
    /// similarity starts. Search measures closeness from it (a cosine `c` counts as
    /// `(c − baseline) / (1 − baseline)`), so that its floors mean the same for every model; the weight
    /// of meaning beside the words counts over each search's own candidates and needs no baseline. 0
    /// (the default) for a model like MiniLM, whose unrelated texts score near 0; multilingual-e5-small's
    /// scores lie between about 0.7 and 1.0.
    var similarityBaseline: Double { get }
    /// How close (as closeness from ``Embedder/similarityBaseline``) this model's unrelated texts can come
    /// to a query, for a model whose unrelated texts come as close as its weaker answers: an item found by
    /// meaning alone below it must also stand out from the index's other items, or nonsense would find
    /// whatever lies least far from it. `nil` (the default) for a model like MiniLM, whose unrelated texts
    /// lie near its baseline, where search's floor of closeness (0.20) alone keeps them out.
    var unrelatedCloseness: Double? { get }
    /// The languages the model reads (BCP 47 codes), or `nil` for a model of many languages, or of
    /// languages not known. A search in a language the model does not read (told in
    /// ``SearchQuery/languages``, or seen in the query's script, or a sentence CLD2 is sure of; a few
    /// words CLD2 cannot tell, in the languages of the index's items) is not fused with its vectors:
    /// they say little of its meaning, and would only reorder what the words found. `nil` by default.
    var languages: [String]? { get }
    /// About where in `text` the passage numbered `passage` (from 0) of ``embed(documents:)`` begins: an
    /// item found by meaning alone shows its best passage as its snippet, since no word of the query is
    /// there to show around (an English question's Chinese answer). `nil`, the default, shows the start.
    func passageStart(_ passage: Int, in text: String) -> String.Index?
}

extension Embedder {
    public var similarityBaseline: Double { 0 }
    public var unrelatedCloseness: Double? { nil }
    public var languages: [String]? { nil }
    public func passageStart(_ passage: Int, in text: String) -> String.Index? { nil }
}

extension Substring {
    /// About where the piece numbered `piece` of `pieces` begins in the text they were cut from, by its
    /// share of the pieces, moved on to the start of the next word when one begins within 40 characters:
    /// what a tokenizer that keeps no offsets can say of a passage's start. An index of the whole string.
    package func approximateStart(ofPiece piece: Int, of pieces: Int) -> String.Index {
        guard piece > 0, pieces > 0 else { return startIndex }
        let scalars = unicodeScalars
        let offset = Swift.min(scalars.count, scalars.count * piece / pieces)
        var index = scalars.index(scalars.startIndex, offsetBy: offset)
        var ahead = 0
        var cursor = index
        while cursor < scalars.endIndex, ahead < 40 {
            if scalars[cursor].properties.isWhitespace {
                index = scalars.index(after: cursor)
                break
            }
            cursor = scalars.index(after: cursor)
            ahead += 1
        }
        return String.Index(index, within: self) ?? startIndex
    }

    /// The first of this text's prefixes, 8,192 characters and then twice as many each time, of which
    /// `found` tells something (a passage's start that its pieces reach), and what it told: a long
    /// text's passages lie in its first few thousand words, and cutting a whole book into pieces to
    /// find one took most of a search.
    package func firstPrefix<Found>(telling found: (Substring) -> Found?) -> Found? {
        var length = 8_192
        while true {
            let prefix = self.prefix(length)
            if let told = found(prefix) { return told }
            if prefix.endIndex == endIndex { return nil }
            length *= 2
        }
    }
}
