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

-- Vectors go with their item, and go when its text changes (the new text is embedded again).
CREATE TRIGGER items_deleted_vectors AFTER DELETE ON items BEGIN
    DELETE FROM vectors WHERE item = old.id;
    DELETE FROM embedded WHERE item = old.id;
END;

CREATE TRIGGER items_text_changed_vectors AFTER UPDATE OF title, keywords, people, description, body ON items
WHEN old.title IS NOT new.title OR old.keywords IS NOT new.keywords OR old.people IS NOT new.people
    OR old.description IS NOT new.description OR old.body IS NOT new.body
BEGIN
    DELETE FROM vectors WHERE item = old.id;
    DELETE FROM embedded WHERE item = old.id;
END;
