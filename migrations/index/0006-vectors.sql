-- Semantic vectors: each item's text as unit vectors of an embedding model, one per passage (long
-- text is cut into passages). A vector is stored quantised to one signed byte per dimension with a
-- float32 scale in front (388 bytes for 384 dimensions), which costs little in ranking (BENCHMARKS.md).
CREATE TABLE vectors (
    item INTEGER NOT NULL,
    passage INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (item, passage)
) STRICT, WITHOUT ROWID;

-- Which items have vectors, from which model and from which version of the item (its `indexed` time):
-- an item not here, or here under another model, waits to be embedded.
CREATE TABLE embedded (
    item INTEGER PRIMARY KEY,
    model TEXT NOT NULL,
    indexed REAL NOT NULL
) STRICT;

-- A number that changes whenever vectors do, so a reader holding them in memory knows to read them again.
INSERT INTO meta(key, value) VALUES ('vectors_version', '0');

-- Vectors go with their item, and go when its text changes (the new text is embedded again).
CREATE TRIGGER items_deleted_vectors AFTER DELETE ON items
WHEN EXISTS (SELECT 1 FROM embedded WHERE item = old.id)
BEGIN
    DELETE FROM vectors WHERE item = old.id;
    DELETE FROM embedded WHERE item = old.id;
    UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'vectors_version';
END;

CREATE TRIGGER items_text_changed_vectors AFTER UPDATE OF title, keywords, people, description, body ON items
WHEN (old.title IS NOT new.title OR old.keywords IS NOT new.keywords OR old.people IS NOT new.people
    OR old.description IS NOT new.description OR old.body IS NOT new.body)
    AND EXISTS (SELECT 1 FROM embedded WHERE item = old.id)
BEGIN
    DELETE FROM vectors WHERE item = old.id;
    DELETE FROM embedded WHERE item = old.id;
    UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'vectors_version';
END;
