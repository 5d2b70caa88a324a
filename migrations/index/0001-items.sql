-- One named index of one account.
--
-- items holds each item's metadata; items_text holds its searchable text (rowid = items.id).
-- Text is kept in items_text only (textContent is not repeated in items.attributes).
CREATE TABLE items (
    id INTEGER PRIMARY KEY,
    identifier TEXT NOT NULL UNIQUE,
    domain TEXT,
    content_type TEXT,
    -- ' public.plain-text public.text … public.item ': the type and everything it conforms to
    type_tree TEXT NOT NULL,
    created REAL,
    modified REAL,
    expires REAL NOT NULL,
    -- lowercased names and handles, one per line with a line break on each side, for filters
    authors TEXT NOT NULL DEFAULT '',
    recipients TEXT NOT NULL DEFAULT '',
    -- every attribute but textContent, as a JSON object
    attributes TEXT NOT NULL,
    -- who made the item ('api', 'records', 'source:<name>') and from what version of it
    owner TEXT NOT NULL DEFAULT 'api',
    source_version TEXT,
    indexed REAL NOT NULL
) STRICT;

CREATE INDEX items_domain ON items(domain);
CREATE INDEX items_expires ON items(expires);
CREATE INDEX items_owner ON items(owner);

-- Columns in ranking order: title, keywords and people, description, body (bm25 weights below).
CREATE VIRTUAL TABLE items_text USING fts5(
    title, keywords, people, description, body,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO items_text(items_text, rank) VALUES ('rank', 'bm25(10.0, 5.0, 5.0, 2.0, 1.0)');

-- The client state of the last ended batch (Core Spotlight's endBatch(clientState:)).
CREATE TABLE client_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    state BLOB NOT NULL,
    updated REAL NOT NULL
) STRICT;

-- Small facts about the index itself, such as a reindex still owed to its owner.
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;
INSERT INTO meta(key, value) VALUES ('reindex_all_pending', '1');
