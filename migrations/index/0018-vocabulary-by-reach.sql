-- The first index as fast as a raw loader (issue 48): the vocabulary kept in the order a search reads
-- it, by first letter, length and token, with no index beside it. `vocabulary_reach` had each token's
-- count as its last column, so every count a write changed moved the token's entry in it as well: a
-- write of 1,000 linux-doc paragraphs changes a few thousand counts (1,800-2,900 distinct words of four
-- letters or more, and their stems), and moved as many entries, rewriting many of that index's pages
-- in the write-ahead log. A search's range (one first letter, a few lengths)
-- is now a range of this table itself, with the counts in it; a token is found by its letter and
-- length, worked out from it. SQLite's `substr` and `length` count characters, as the index did.
CREATE TABLE vocabulary_by_reach (
    letter TEXT NOT NULL,
    length INTEGER NOT NULL,
    word TEXT NOT NULL,
    documents INTEGER NOT NULL,
    PRIMARY KEY (letter, length, word)
) WITHOUT ROWID;
INSERT INTO vocabulary_by_reach(letter, length, word, documents)
SELECT substr(word, 1, 1), length(word), word, documents FROM vocabulary;
DROP TABLE vocabulary;
ALTER TABLE vocabulary_by_reach RENAME TO vocabulary;
