-- One account's canonical records, their change log and the deletions still to retry.
--
-- Every write to records appends to changes in the same transaction, so no change can be lost between
-- the store and the index. A deleted record stays as a tombstone (version kept, fields emptied) so that a
-- late, older write cannot bring it back.
CREATE TABLE records (
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    version INTEGER NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
    -- JSON array of account IDs allowed to read the record; NULL: the owning account only
    readers TEXT,
    modified REAL,
    -- JSON object of the record's fields ('{}' for a tombstone)
    fields TEXT NOT NULL,
    PRIMARY KEY (kind, id)
) STRICT;

-- The change log the projection engine follows from its checkpoint (kept in the index file).
CREATE TABLE changes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    version INTEGER NOT NULL,
    at REAL NOT NULL
) STRICT;

-- Deletions from an index that failed and are retried with back-off until they succeed.
CREATE TABLE pending_deletions (
    index_name TEXT NOT NULL,
    -- 'identifier' or 'domain'
    target_kind TEXT NOT NULL CHECK (target_kind IN ('identifier', 'domain')),
    target TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt REAL NOT NULL,
    last_error TEXT,
    queued REAL NOT NULL,
    PRIMARY KEY (index_name, target_kind, target)
) STRICT;

-- Running totals, such as sync deliveries ignored because a newer version was already held.
CREATE TABLE counters (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) STRICT;
