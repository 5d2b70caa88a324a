-- Enrichment: summaries and priority for items that ask for them (their attributes hold
-- replica.updateListenerOptions). The index writer queues an item whenever it writes it; the
-- enrichment pass takes it from here, after the item is already searchable.
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

-- The index writer queues an item when it writes one that asks for enrichment (triggers on items would
-- have done the same at three times the cost of a bulk load). A deleted item's row goes with it.
CREATE TRIGGER items_deleted_enrichment AFTER DELETE ON items
WHEN EXISTS (SELECT 1 FROM enrichment WHERE item = old.id)
BEGIN
    DELETE FROM enrichment WHERE item = old.id;
END;
