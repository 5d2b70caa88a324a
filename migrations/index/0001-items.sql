-- One named index of one account.
--
-- items holds each item: its metadata, every attribute but textContent as JSON, and the searchable
-- text split into five columns in ranking order. items_text is an external-content full-text index
-- over those five columns (https://www.sqlite.org/fts5.html#external_content_tables): the text is
-- stored once, in items, and the index entries of a row are removed before the row changes.
CREATE TABLE items (
    id INTEGER PRIMARY KEY,
    identifier TEXT NOT NULL UNIQUE,
    domain TEXT,
    content_type TEXT,
    created REAL,
    modified REAL,
    expires REAL NOT NULL,
    -- lowercased names and handles, one per line with a line break on each side, for filters
    authors TEXT,
    recipients TEXT,
    -- every attribute but textContent, as a JSON object
    attributes TEXT NOT NULL,
    -- who made the item ('api', 'records', 'source:<name>') and from what version of it
    owner TEXT NOT NULL DEFAULT 'api',
    source_version TEXT,
    indexed REAL NOT NULL,
    -- the searchable text
    title TEXT NOT NULL DEFAULT '',
    keywords TEXT NOT NULL DEFAULT '',
    people TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    body TEXT NOT NULL DEFAULT ''
) STRICT;

-- Only items in a domain, and only items that expire before the year 3000, need these indexes:
-- items kept forever pay nothing for expiration.
CREATE INDEX items_domain ON items(domain) WHERE domain IS NOT NULL;
CREATE INDEX items_expires ON items(expires) WHERE expires < 32503680000;

-- Each content type seen, with the tree of types it conforms to: ' public.plain-text public.text … '.
CREATE TABLE content_types (
    name TEXT PRIMARY KEY,
    tree TEXT NOT NULL
) STRICT;

-- Columns in ranking order: title, keywords and people, description, body (bm25 weights below).
CREATE VIRTUAL TABLE items_text USING fts5(
    title, keywords, people, description, body,
    content = 'items', content_rowid = 'id',
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
