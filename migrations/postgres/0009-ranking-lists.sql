-- The ranking lists on PostgreSQL too: impact-ordered postings of the words in many items, so that a
-- ranked search of common words reads the few hundred items where they weigh most instead of scoring
-- every match (the SQLite index has kept them since its migration 0010; ReplicaIndex's RankingLists is
-- the search, the same on both backends).
--
-- Per index: what the lists were built from (ranking_state), the tiers of each word's list
-- (ranking_lists: row ids, weighted frequencies and lengths, varint-coded, as on SQLite), and the
-- items written or deleted since the build (ranking_changes), which a search ranks through the GIN
-- index instead. Each table has a partition per account, like every table keyed by account: signing
-- out drops them, and the words the lists name leave the data files with the account's other rows.
-- ranking_lists.term holds words, so it is kept out of the planner's statistics (migration 0006).

CREATE TABLE replica.ranking_state (
    account text NOT NULL,
    index_name text NOT NULL,
    rows bigint NOT NULL,
    tokens bigint NOT NULL,
    first_tier integer NOT NULL,
    threshold integer NOT NULL,
    built double precision NOT NULL,
    PRIMARY KEY (account, index_name)
) PARTITION BY LIST (account);

CREATE TABLE replica.ranking_lists (
    account text NOT NULL,
    index_name text NOT NULL,
    term text NOT NULL,
    tier integer NOT NULL,
    documents bigint NOT NULL,
    floor double precision NOT NULL,
    entries bytea NOT NULL,
    PRIMARY KEY (account, index_name, term, tier)
) PARTITION BY LIST (account);
-- Varint-coded already: compressing it again would cost every read and save little (partitions take
-- their parent's storage).
ALTER TABLE replica.ranking_lists ALTER COLUMN entries SET STORAGE EXTERNAL;

CREATE TABLE replica.ranking_changes (
    account text NOT NULL,
    index_name text NOT NULL,
    id bigint NOT NULL,
    PRIMARY KEY (account, index_name, id)
) PARTITION BY LIST (account);

CREATE OR REPLACE FUNCTION replica.partitioned_tables() RETURNS text[] LANGUAGE sql IMMUTABLE
AS $$ SELECT ARRAY['items', 'vectors', 'enrichment', 'activities', 'records', 'index_statistics', 'content_types',
                   'client_state', 'meta', 'checkpoints', 'projections', 'tombstones', 'quarantine', 'source_entries',
                   'embedded', 'changes', 'record_logs', 'pending_deletions', 'record_counters',
                   'ranking_state', 'ranking_lists', 'ranking_changes'] $$;

-- Each item of the words `tokens` has that no list covers (a word in few items when the lists were
-- built), with its weighted frequency of the word and its length, at most `most` a word, when another
-- of the words has a list (else the search does not use the lists): the GIN index finds them, which
-- the policies would not let it do for the caller (docs/postgres.md). `terms` holds each token as a
-- tsquery. Expired items too, as the lists count them.
CREATE FUNCTION replica.unlisted_postings(index_name text, tokens text[], terms tsquery[], most integer)
RETURNS TABLE(word integer, id bigint, frequency float8, length float8)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    account text := current_setting('replica.account');
    partition text := replica.partition_name('items', current_setting('replica.account'));
    lists text := replica.partition_name('ranking_lists', current_setting('replica.account'));
BEGIN
    IF to_regclass(format('replica.%I', partition)) IS NULL OR coalesce(cardinality(terms), 0) = 0 THEN RETURN; END IF;
    RETURN QUERY EXECUTE format($sql$
        SELECT w.ordinal::integer, i.id, round(ts_rank_cd('{0.1,0.2,0.5,1}'::float4[], i.words, w.term, 0)::float8 * 10), i.length::float8
        FROM unnest($3, $4) WITH ORDINALITY AS w(token, term, ordinal)
        CROSS JOIN LATERAL (
            SELECT i.id, i.words, i.length FROM replica.%I AS i
            WHERE i.account = $1 AND i.index_name = $2 AND i.words @@ w.term LIMIT $5
        ) AS i
        WHERE NOT EXISTS (SELECT 1 FROM replica.%I AS l
                          WHERE l.account = $1 AND l.index_name = $2 AND l.term = w.token AND l.tier = 0)
          -- Nothing unless another of the words has a list: without one, the search does not use the lists.
          AND EXISTS (SELECT 1 FROM replica.%I AS l WHERE l.account = $1 AND l.index_name = $2 AND l.term = ANY($3) AND l.tier = 0)
        $sql$, partition, lists, lists)
    USING account, index_name, tokens, terms, most;
END
$$;
REVOKE ALL ON FUNCTION replica.unlisted_postings(text, text[], tsquery[], integer) FROM PUBLIC;

-- The planner's numbers for the calling account's lists, taken right after a build: without them it
-- planned a search's reading of the lists as for an empty table (9 ms a search instead of 4, until
-- autovacuum came by). Only the numbers are sampled: the words are kept out of the statistics.
CREATE FUNCTION replica.analyze_ranking_lists() RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    name text;
BEGIN
    FOREACH name IN ARRAY ARRAY['ranking_state', 'ranking_lists', 'ranking_changes'] LOOP
        EXECUTE format('ANALYZE replica.%I', replica.partition_name(name, current_setting('replica.account')));
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION replica.analyze_ranking_lists() FROM PUBLIC;

DO $$
DECLARE
    name text;
    account_name text;
BEGIN
    FOREACH name IN ARRAY ARRAY['ranking_state', 'ranking_lists', 'ranking_changes'] LOOP
        PERFORM replica.protect_partition(name);
    END LOOP;
    -- The new tables' partitions for the accounts that have the others (add_account makes what is missing).
    FOR account_name IN
        SELECT account FROM replica.accounts
        WHERE to_regclass(format('replica.%I', replica.partition_name('items', account))) IS NOT NULL
    LOOP
        PERFORM set_config('replica.account', account_name, true);
        PERFORM replica.add_account();
    END LOOP;
    PERFORM set_config('replica.account', '', true);
END
$$;
