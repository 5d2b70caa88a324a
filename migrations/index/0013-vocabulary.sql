-- The index's vocabulary (issue 45, typos forgiven): each token (a word or a stem) of 4 to 32
-- characters of an alphabetic script with how many items hold it, kept by the writer in the transaction
-- that writes the text, so that a search finds the tokens one or two edits from a typed word by a range
-- of this table rather than by reading FTS5's posting lists. The analyzer's version changed with it, so
-- an index opened after this migration has its words made again, and its vocabulary with them.
CREATE TABLE vocabulary (
    word TEXT PRIMARY KEY,
    documents INTEGER NOT NULL
) WITHOUT ROWID;
-- A search reads the tokens of one first letter and a few lengths held by more than so many items: a
-- seek for each length, not a walk through every token of the letter.
CREATE INDEX vocabulary_reach ON vocabulary(substr(word, 1, 1), length(word), documents);
