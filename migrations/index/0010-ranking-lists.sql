-- Impact-ordered lists for ranked any-word search (issue 22): for each word in many items, the items
-- where it weighs most in BM25, so that a search of common words ranks a few hundred items instead of
-- every item that has them, and still returns exactly the top results of scoring every match.
--
-- ranking_lists holds, for each word in at least `threshold` items when the lists were built, every item
-- that had it, by impact (its BM25 weight in the item, without the idf), cut in tiers of growing length:
-- tier 0 the `first_tier` items where it weighs most, each later tier four times as many. Each row keeps
-- how many items had the word, the highest impact of an item in a later tier ("floor", the bound every
-- unread item stays under while it is unchanged; 0 in the last tier), and its entries by row id: the
-- difference from the row id before, the weighted frequency and the item's length, each a
-- little-endian base-128 number.
CREATE TABLE ranking_lists (
    term TEXT NOT NULL,
    tier INTEGER NOT NULL,
    documents INTEGER NOT NULL,
    floor REAL NOT NULL,
    entries BLOB NOT NULL,
    PRIMARY KEY (term, tier)
) WITHOUT ROWID, STRICT;

-- What the lists were built from: FTS5's row count and token count then, the first tier's length and
-- the threshold. No row: no lists (a search scores every match, as before).
CREATE TABLE ranking_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    rows INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    first_tier INTEGER NOT NULL,
    threshold INTEGER NOT NULL,
    built REAL NOT NULL
) STRICT;

-- The items written or deleted since the lists were built: a search ranks them itself, since the lists
-- do not know them. Recorded by the triggers below, in the writing transaction, only while lists exist.
CREATE TABLE ranking_changes (
    id INTEGER PRIMARY KEY
) STRICT;

CREATE TRIGGER items_inserted_ranking AFTER INSERT ON items WHEN EXISTS (SELECT 1 FROM ranking_state)
BEGIN
    INSERT OR IGNORE INTO ranking_changes(id) VALUES (new.id);
END;

CREATE TRIGGER items_text_updated_ranking AFTER UPDATE OF id, title, keywords, people, description, body ON items
WHEN EXISTS (SELECT 1 FROM ranking_state)
BEGIN
    INSERT OR IGNORE INTO ranking_changes(id) VALUES (old.id);
    INSERT OR IGNORE INTO ranking_changes(id) VALUES (new.id);
END;

CREATE TRIGGER items_deleted_ranking AFTER DELETE ON items WHEN EXISTS (SELECT 1 FROM ranking_state)
BEGIN
    INSERT OR IGNORE INTO ranking_changes(id) VALUES (old.id);
END;
