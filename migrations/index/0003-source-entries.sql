-- What each source last saw of each of its entries (a file, a message of an mbox file, a plugin's
-- record), so a reconcile can tell what changed while nothing was watching. stamp is the source's own
-- fingerprint (size, modification time and inode for a file; a blob id for git); skip_reason says why
-- an entry made no item (binary, too large, unreadable). Written in the same transaction as the items.
CREATE TABLE source_entries (
    source TEXT NOT NULL,
    key TEXT NOT NULL,
    stamp TEXT NOT NULL,
    skip_reason TEXT,
    PRIMARY KEY (source, key)
) STRICT, WITHOUT ROWID;
