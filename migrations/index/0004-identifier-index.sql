-- The unique identifier index gets a name of its own, so that a bulk load into an empty index can drop
-- it and build it once at the end, as it does the domain and expiration indexes (a column constraint
-- cannot be dropped). Rows keep their ids, so the external-content full-text index stays valid.
CREATE TABLE items_next (
    id INTEGER PRIMARY KEY,
    identifier TEXT NOT NULL,
    domain TEXT,
    content_type TEXT,
    created REAL,
    modified REAL,
    expires REAL NOT NULL,
    authors TEXT,
    recipients TEXT,
    attributes TEXT NOT NULL,
    owner TEXT NOT NULL DEFAULT 'api',
    source_version TEXT,
    indexed REAL NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    keywords TEXT NOT NULL DEFAULT '',
    people TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    body TEXT NOT NULL DEFAULT ''
) STRICT;
INSERT INTO items_next SELECT * FROM items;
DROP TABLE items;
ALTER TABLE items_next RENAME TO items;
CREATE UNIQUE INDEX items_identifier ON items(identifier);
CREATE INDEX items_domain ON items(domain) WHERE domain IS NOT NULL;
CREATE INDEX items_expires ON items(expires) WHERE expires < 32503680000;
