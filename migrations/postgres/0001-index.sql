-- replica's indexes on PostgreSQL, in the schema `replica`.
--
-- Every table is keyed by account first and no statement reads across accounts, so that the schema is
-- ready for Citus (`SELECT create_distributed_table('replica.items', 'account')`, and the same for each
-- table, with no other change). Row-level security is enabled and forced on every table: a transaction
-- sees and writes only the rows of the account it names in the setting `replica.account`.
--
-- The tables that hold an account's words (items and their text, vectors, activities, enrichment) have a
-- partition per account, made at sign-in (`replica.add_account`): one account's pages and GIN postings
-- are never another's, and signing out drops the account's partitions (`replica.remove_account`), which
-- removes its text from the data files at the next checkpoint. Deleting rows would not: VACUUM leaves
-- the bytes of deleted rows in the pages' free space, and a GIN index keeps every word it was ever given
-- (measured: BENCHMARKS.md, "PostgreSQL: what a sign-out leaves"). The other tables hold identifiers
-- and positions, and their rows are deleted.

CREATE SEQUENCE replica.item_ids AS bigint;

CREATE TABLE replica.items (
    account text NOT NULL,
    index_name text NOT NULL,
    id bigint NOT NULL DEFAULT nextval('replica.item_ids'),
    identifier text NOT NULL,
    domain text,
    content_type text,
    created double precision,
    modified double precision,
    expires double precision NOT NULL,
    -- lowercased names and handles, one per line with a line break on each side, for filters
    authors text,
    recipients text,
    -- every attribute but textContent, as a JSON object
    attributes text NOT NULL,
    owner text NOT NULL DEFAULT 'api',
    source_version text,
    indexed double precision NOT NULL,
    title text NOT NULL DEFAULT '',
    keywords text NOT NULL DEFAULT '',
    people text NOT NULL DEFAULT '',
    description text NOT NULL DEFAULT '',
    body text NOT NULL DEFAULT '',
    -- the words as FTS5's tokenizer makes them (so both stores match the same items), weighted by the
    -- column they are in: A title, B keywords and people, C description, D body
    words tsvector NOT NULL,
    -- how many words the item has in all: BM25's document length
    length integer NOT NULL,
    PRIMARY KEY (account, index_name, id),
    UNIQUE (account, index_name, identifier)
) PARTITION BY LIST (account);

CREATE INDEX items_words ON replica.items USING gin (words);
CREATE INDEX items_domain ON replica.items (account, index_name, domain) WHERE domain IS NOT NULL;
CREATE INDEX items_expires ON replica.items (account, index_name, expires) WHERE expires < 32503680000;

-- Per index: how many items it holds and how many words they have, for BM25's averages, kept with the
-- writes so that no other account's items move a score.
CREATE TABLE replica.index_statistics (
    account text NOT NULL,
    index_name text NOT NULL,
    items bigint NOT NULL DEFAULT 0,
    words bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (account, index_name)
);

CREATE TABLE replica.content_types (
    account text NOT NULL,
    index_name text NOT NULL,
    name text NOT NULL,
    tree text NOT NULL,
    PRIMARY KEY (account, index_name, name)
);

CREATE TABLE replica.client_state (
    account text NOT NULL,
    index_name text NOT NULL,
    state bytea NOT NULL,
    updated double precision NOT NULL,
    PRIMARY KEY (account, index_name)
);

CREATE TABLE replica.meta (
    account text NOT NULL,
    index_name text NOT NULL,
    key text NOT NULL,
    value text NOT NULL,
    PRIMARY KEY (account, index_name, key)
);

CREATE TABLE replica.checkpoints (
    account text NOT NULL,
    index_name text NOT NULL,
    consumer text NOT NULL,
    position text NOT NULL,
    updated double precision NOT NULL,
    PRIMARY KEY (account, index_name, consumer)
);

CREATE TABLE replica.projections (
    account text NOT NULL,
    index_name text NOT NULL,
    kind text NOT NULL,
    version integer NOT NULL,
    target_version integer,
    cursor text,
    PRIMARY KEY (account, index_name, kind)
);

CREATE TABLE replica.tombstones (
    account text NOT NULL,
    index_name text NOT NULL,
    identifier text NOT NULL,
    version bigint NOT NULL,
    PRIMARY KEY (account, index_name, identifier)
);

CREATE TABLE replica.quarantine (
    account text NOT NULL,
    index_name text NOT NULL,
    identifier text NOT NULL,
    kind text NOT NULL,
    record_id text NOT NULL,
    version bigint NOT NULL,
    reason text NOT NULL,
    at double precision NOT NULL,
    PRIMARY KEY (account, index_name, identifier)
);

CREATE TABLE replica.source_entries (
    account text NOT NULL,
    index_name text NOT NULL,
    source text NOT NULL,
    key text NOT NULL,
    stamp text NOT NULL,
    skip_reason text,
    PRIMARY KEY (account, index_name, source, key)
);

-- Passage vectors as stored on SQLite: a float32 scale, then one signed byte per dimension.
CREATE TABLE replica.vectors (
    account text NOT NULL,
    index_name text NOT NULL,
    item bigint NOT NULL,
    passage integer NOT NULL,
    vector bytea NOT NULL,
    PRIMARY KEY (account, index_name, item, passage)
) PARTITION BY LIST (account);

CREATE TABLE replica.embedded (
    account text NOT NULL,
    index_name text NOT NULL,
    item bigint NOT NULL,
    model text NOT NULL,
    indexed double precision NOT NULL,
    PRIMARY KEY (account, index_name, item)
);

CREATE TABLE replica.enrichment (
    account text NOT NULL,
    index_name text NOT NULL,
    item bigint NOT NULL,
    pending boolean NOT NULL DEFAULT true,
    input text,
    summary text,
    priority boolean,
    -- why the item was not (fully) enriched: reason codes, never content
    skipped text,
    attempts integer NOT NULL DEFAULT 0,
    next_attempt double precision,
    error text,
    PRIMARY KEY (account, index_name, item)
) PARTITION BY LIST (account);

CREATE TABLE replica.activities (
    account text NOT NULL,
    index_name text NOT NULL,
    id bigint NOT NULL DEFAULT nextval('replica.item_ids'),
    persistent text NOT NULL,
    type text NOT NULL,
    title text,
    related text,
    keywords text,
    date double precision NOT NULL,
    views integer NOT NULL DEFAULT 1,
    search boolean NOT NULL,
    prediction boolean NOT NULL,
    attributes text,
    entity_type text,
    entity_id text,
    PRIMARY KEY (account, index_name, id),
    UNIQUE (account, index_name, persistent)
) PARTITION BY LIST (account);

-- Isolation: each table admits only the rows of the account the transaction names. Forced, so that the
-- tables' owner is held to it too.
DO $$
DECLARE
    name text;
BEGIN
    FOREACH name IN ARRAY ARRAY['items', 'index_statistics', 'content_types', 'client_state', 'meta', 'checkpoints',
                                 'projections', 'tombstones', 'quarantine', 'source_entries', 'vectors', 'embedded',
                                 'enrichment', 'activities'] LOOP
        EXECUTE format('ALTER TABLE replica.%I ENABLE ROW LEVEL SECURITY', name);
        EXECUTE format('ALTER TABLE replica.%I FORCE ROW LEVEL SECURITY', name);
        EXECUTE format($policy$CREATE POLICY account_rows ON replica.%I
                           USING (account = current_setting('replica.account', true))
                           WITH CHECK (account = current_setting('replica.account', true))$policy$, name);
    END LOOP;
END
$$;

-- Searching by words under row-level security: the `@@` operator is not LEAKPROOF, so a policy keeps
-- PostgreSQL from using the GIN index for it (the policy's condition must run first). This function runs
-- as its owner, which the README has created with BYPASSRLS, and states the account condition itself,
-- from the same setting the policy reads: it sees the calling transaction's account only, with the
-- index. Called by an owner without BYPASSRLS it stays correct, the policy applying inside it as well.
CREATE FUNCTION replica.items_matching(index_name text, query tsquery)
RETURNS SETOF replica.items
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT * FROM replica.items
    WHERE items.account = current_setting('replica.account') AND items.index_name = $1 AND items.words @@ $2
$$;

-- How many items of the calling transaction's account match each query: BM25's document frequencies.
CREATE FUNCTION replica.items_matching_counts(index_name text, queries tsquery[])
RETURNS bigint[]
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(array_agg((SELECT count(*) FROM replica.items
                               WHERE items.account = current_setting('replica.account') AND items.index_name = $1
                                 AND items.words @@ query) ORDER BY position), '{}')
    FROM unnest($2) WITH ORDINALITY AS queries(query, position)
$$;

REVOKE ALL ON FUNCTION replica.items_matching(text, tsquery) FROM PUBLIC;
REVOKE ALL ON FUNCTION replica.items_matching_counts(text, tsquery[]) FROM PUBLIC;

-- The tables with a partition per account, and the others, for the two functions below.
CREATE FUNCTION replica.partitioned_tables() RETURNS text[] LANGUAGE sql IMMUTABLE
AS $$ SELECT ARRAY['items', 'vectors', 'enrichment', 'activities'] $$;

CREATE FUNCTION replica.plain_tables() RETURNS text[] LANGUAGE sql IMMUTABLE
AS $$ SELECT ARRAY['index_statistics', 'content_types', 'client_state', 'meta', 'checkpoints', 'projections', 'tombstones',
                   'quarantine', 'source_entries', 'embedded'] $$;

-- The name of an account's partition of a table: from a hash of the account, so any account name makes a
-- valid one; two accounts whose hashes begin alike are told apart by the check in add_account.
CREATE FUNCTION replica.partition_name(table_name text, account text) RETURNS text LANGUAGE sql IMMUTABLE
AS $$ SELECT table_name || '_' || substr(md5(account), 1, 24) $$;

-- Makes the partitions of the calling transaction's account (`replica.account`); does nothing for those
-- that exist. Runs as the owner, who may create tables; the app role may not.
CREATE FUNCTION replica.add_account() RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    account text := current_setting('replica.account');
    name text;
    partition text;
    holder text;
BEGIN
    FOREACH name IN ARRAY replica.partitioned_tables() LOOP
        partition := replica.partition_name(name, account);
        SELECT pg_get_expr(c.relpartbound, c.oid) INTO holder FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'replica' AND c.relname = partition;
        IF holder IS NULL THEN
            EXECUTE format('CREATE TABLE replica.%I PARTITION OF replica.%I FOR VALUES IN (%L)', partition, name, account);
        ELSIF holder <> format('FOR VALUES IN (%L)', account) THEN
            RAISE EXCEPTION 'the partition name % is taken by another account', partition USING ERRCODE = 'unique_violation';
        END IF;
    END LOOP;
END
$$;

-- Removes everything of the calling transaction's account: drops its partitions (their files go at the
-- next checkpoint) and deletes its rows from the other tables.
CREATE FUNCTION replica.remove_account() RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    account text := current_setting('replica.account');
    name text;
BEGIN
    FOREACH name IN ARRAY replica.partitioned_tables() LOOP
        EXECUTE format('DROP TABLE IF EXISTS replica.%I', replica.partition_name(name, account));
    END LOOP;
    FOREACH name IN ARRAY replica.plain_tables() LOOP
        EXECUTE format('DELETE FROM replica.%I WHERE account = $1', name) USING account;
    END LOOP;
END
$$;

REVOKE ALL ON FUNCTION replica.add_account() FROM PUBLIC;
REVOKE ALL ON FUNCTION replica.remove_account() FROM PUBLIC;
