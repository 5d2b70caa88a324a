-- The rest of a store on PostgreSQL: the catalog (accounts, sign-in generations, sources) and each
-- account's record store (its records, their change log, the deletions still to retry, its counters).
--
-- The catalog holds no indexed content: which accounts exist and in what state, and the sources added to
-- them with their settings. Every process of the app reads all of it (a search spans the signed-in
-- accounts), so it has no row-level policy; under Citus its two tables are reference tables. Each sign-in
-- takes a number from a sequence that outlives the accounts it numbered, so a sign-out followed by a
-- sign-in is told apart from an account that stayed signed in.
--
-- The record tables are keyed by account first and held to the transaction's account like the index's;
-- the records themselves (their fields are the app's content) get a partition per account, dropped at
-- sign-out. A write to an account's records takes the row of its `record_logs` entry first: writers of one
-- account take turns, so the change log's sequence numbers are given in commit order and a reader that
-- has seen number n has seen every change before it.

CREATE SEQUENCE replica.sign_in_generations AS bigint;

-- Text compared and ordered byte by byte (COLLATE "C"), as SQLite does, whatever the database's locale.
CREATE TABLE replica.accounts (
    account text COLLATE "C" PRIMARY KEY,
    directory text NOT NULL UNIQUE,
    state text NOT NULL DEFAULT 'signedIn' CHECK (state IN ('signedIn', 'signingOut')),
    signed_in_at double precision NOT NULL,
    generation bigint NOT NULL
);

CREATE TABLE replica.sources (
    account text COLLATE "C" NOT NULL REFERENCES replica.accounts(account) ON DELETE CASCADE,
    name text COLLATE "C" NOT NULL UNIQUE,
    kind text NOT NULL,
    index_name text NOT NULL,
    -- JSON object of the source's settings (root, branch, command, …)
    settings text NOT NULL,
    added double precision NOT NULL,
    -- what the source last reported: 'idle', 'syncing', 'watching', 'degraded', 'failed', 'stopped'
    state text NOT NULL DEFAULT 'idle',
    detail text,
    last_error text,
    last_error_at double precision,
    last_commit double precision,
    pending bigint NOT NULL DEFAULT 0,
    updated double precision NOT NULL,
    PRIMARY KEY (account, name)
);

-- A number every commit to the catalog changes: a process compares two readings to learn whether
-- another one signed an account in or out meanwhile.
CREATE TABLE replica.catalog_version (
    single boolean PRIMARY KEY DEFAULT true CHECK (single),
    version bigint NOT NULL
);
INSERT INTO replica.catalog_version(single, version) VALUES (true, 0);

CREATE FUNCTION replica.catalog_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    UPDATE replica.catalog_version SET version = version + 1;
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION replica.catalog_changed() FROM PUBLIC;

CREATE TRIGGER accounts_changed AFTER INSERT OR UPDATE OR DELETE ON replica.accounts
    FOR EACH STATEMENT EXECUTE FUNCTION replica.catalog_changed();
CREATE TRIGGER sources_changed AFTER INSERT OR UPDATE OR DELETE ON replica.sources
    FOR EACH STATEMENT EXECUTE FUNCTION replica.catalog_changed();

-- One account's canonical records. A deleted record stays as a tombstone (version kept, fields emptied)
-- so that a late, older write cannot bring it back.
CREATE TABLE replica.records (
    account text NOT NULL,
    kind text COLLATE "C" NOT NULL,
    id text COLLATE "C" NOT NULL,
    version bigint NOT NULL,
    deleted boolean NOT NULL DEFAULT false,
    -- JSON array of account IDs allowed to read the record; NULL: the owning account only
    readers text,
    modified double precision,
    -- JSON object of the record's fields ('{}' for a tombstone)
    fields text NOT NULL,
    PRIMARY KEY (account, kind, id)
) PARTITION BY LIST (account);

-- The change log the projection engine follows from its checkpoint (kept with the index).
CREATE TABLE replica.changes (
    account text NOT NULL,
    seq bigint NOT NULL,
    kind text NOT NULL,
    id text NOT NULL,
    version bigint NOT NULL,
    at double precision NOT NULL,
    PRIMARY KEY (account, seq)
);

-- Per account: the last change-log number given (never reused, even after pruning) and a number every
-- write to the account's records changes. Its row is the lock writers of one account take turns on.
CREATE TABLE replica.record_logs (
    account text PRIMARY KEY,
    last_seq bigint NOT NULL DEFAULT 0,
    version bigint NOT NULL DEFAULT 0
);

-- Deletions from an index that failed and are retried with back-off until they succeed.
CREATE TABLE replica.pending_deletions (
    account text NOT NULL,
    index_name text NOT NULL,
    target_kind text NOT NULL CHECK (target_kind IN ('identifier', 'domain')),
    target text NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    next_attempt double precision NOT NULL,
    last_error text,
    queued double precision NOT NULL,
    PRIMARY KEY (account, index_name, target_kind, target)
);

-- Running totals, such as sync deliveries ignored because a newer version was already held.
CREATE TABLE replica.record_counters (
    account text NOT NULL,
    name text NOT NULL,
    value bigint NOT NULL,
    PRIMARY KEY (account, name)
);

DO $$
DECLARE
    name text;
BEGIN
    FOREACH name IN ARRAY ARRAY['records', 'changes', 'record_logs', 'pending_deletions', 'record_counters'] LOOP
        EXECUTE format('ALTER TABLE replica.%I ENABLE ROW LEVEL SECURITY', name);
        EXECUTE format('ALTER TABLE replica.%I FORCE ROW LEVEL SECURITY', name);
        EXECUTE format($policy$CREATE POLICY account_rows ON replica.%I
                           USING (account = current_setting('replica.account', true))
                           WITH CHECK (account = current_setting('replica.account', true))$policy$, name);
    END LOOP;
END
$$;

-- add_account and remove_account now cover the record tables too.
CREATE OR REPLACE FUNCTION replica.partitioned_tables() RETURNS text[] LANGUAGE sql IMMUTABLE
AS $$ SELECT ARRAY['items', 'vectors', 'enrichment', 'activities', 'records'] $$;

CREATE OR REPLACE FUNCTION replica.plain_tables() RETURNS text[] LANGUAGE sql IMMUTABLE
AS $$ SELECT ARRAY['index_statistics', 'content_types', 'client_state', 'meta', 'checkpoints', 'projections', 'tombstones',
                   'quarantine', 'source_entries', 'embedded', 'changes', 'record_logs', 'pending_deletions',
                   'record_counters'] $$;
