-- What the projection engine and sources keep beside the items they write, so that each checkpoint
-- commits in the same transaction as the index writes it caused.

-- How far each consumer (the record store's change log, a followed app table, a source) has been applied.
CREATE TABLE checkpoints (
    consumer TEXT PRIMARY KEY,
    position TEXT NOT NULL,
    updated REAL NOT NULL
) STRICT;

-- The projection version each kind's items were built with, and a rebuild in progress:
-- target_version is what is being rebuilt to, cursor the last record id rebuilt.
CREATE TABLE projections (
    kind TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    target_version INTEGER,
    cursor TEXT
) STRICT;

-- Deleted items and their last version, so a late, older upsert cannot bring one back (for logs that
-- do not keep tombstones themselves, such as an app's own tables followed through triggers).
CREATE TABLE tombstones (
    identifier TEXT PRIMARY KEY,
    version INTEGER NOT NULL
) STRICT;

-- Records that could not be projected (a field of the wrong type, say): reported, kept out of the index
-- until a newer version comes. The reason names fields and types, never content.
CREATE TABLE quarantine (
    identifier TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    record_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    reason TEXT NOT NULL,
    at REAL NOT NULL
) STRICT;
