-- The first index as fast as a raw loader (issue 48): during a load (a folder's first sync, an import:
-- many transactions in a row), each transaction appends its vocabulary changes here, a row a token,
-- instead of counting them into `vocabulary` token by token (an upsert and a move in `vocabulary_reach`
-- for every token of every transaction: 1.4 s of an 11 s sync of the linux-doc tree). The first write
-- outside a load, or the load's end, adds them up into `vocabulary` in one statement and empties this
-- table, in its transaction; a load that was killed leaves its rows here for the next one.
CREATE TABLE vocabulary_held_back (
    word TEXT NOT NULL,
    change INTEGER NOT NULL
);
