-- The sources added to a store (file trees, git repositories, plugins), each feeding one account's
-- index, and what the watcher last said about each. Removing an account removes its sources.
CREATE TABLE sources (
    name TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    account TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    index_name TEXT NOT NULL DEFAULT 'default',
    -- JSON object of the source's settings (root, branch, command, …)
    settings TEXT NOT NULL,
    added REAL NOT NULL
) STRICT;

CREATE TABLE source_status (
    name TEXT PRIMARY KEY REFERENCES sources(name) ON DELETE CASCADE,
    -- 'idle', 'syncing', 'watching', 'degraded', 'failed', 'stopped'
    state TEXT NOT NULL,
    -- what the state means now: a watch limit reached, a plugin restarting, …
    detail TEXT,
    last_error TEXT,
    last_error_at REAL,
    -- when the source last committed a batch, and how many changes it has seen but not committed
    last_commit REAL,
    pending INTEGER NOT NULL DEFAULT 0,
    updated REAL NOT NULL
) STRICT;
