-- Enrichment: summaries and priority for items that ask for them (their attributes hold
-- replica.updateListenerOptions). Triggers queue an item whenever it is written; the enrichment pass
-- takes it from here, after the item is already searchable.
CREATE TABLE enrichment (
    item INTEGER PRIMARY KEY,
    -- 1 when the item was written since the pass last looked at it
    pending INTEGER NOT NULL DEFAULT 1,
    -- a fingerprint of what the results below were made from (the thread, the enrichers, the options)
    input TEXT,
    summary TEXT,
    priority INTEGER,
    -- why the item was not (fully) enriched: reason codes such as 'summarization.tooShort', never content
    skipped TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt REAL,
    error TEXT
) STRICT;

CREATE INDEX enrichment_pending ON enrichment(item) WHERE pending = 1;

CREATE TRIGGER items_inserted_enrichment AFTER INSERT ON items
WHEN instr(new.attributes, '"replica.updateListenerOptions"') > 0
BEGIN
    INSERT INTO enrichment(item) VALUES (new.id) ON CONFLICT(item) DO UPDATE SET pending = 1;
END;

CREATE TRIGGER items_updated_enrichment AFTER UPDATE OF attributes, body, domain ON items
WHEN instr(new.attributes, '"replica.updateListenerOptions"') > 0
BEGIN
    INSERT INTO enrichment(item) VALUES (new.id) ON CONFLICT(item) DO UPDATE SET pending = 1;
END;

CREATE TRIGGER items_deleted_enrichment AFTER DELETE ON items
BEGIN
    DELETE FROM enrichment WHERE item = old.id;
END;
