-- Words made again in the background (issue 45, §4): when another analyzer made an index's words (an
-- older replica, another ICU), replica makes them again a batch per transaction into this table while
-- searches read `items.words`, then writes them over `items.words` in one transaction once every item
-- has them, and empties it. A row's words here are dropped when the item's text is written meanwhile
-- (its `items.words` are then this analyzer's already). A partition per account, like every table keyed
-- by account, kept out of the planner's statistics (protect_partition): it holds words.

CREATE TABLE replica.words_next (
    account text NOT NULL,
    index_name text NOT NULL,
    id bigint NOT NULL,
    words tsvector NOT NULL,
    length integer NOT NULL,
    PRIMARY KEY (account, index_name, id)
) PARTITION BY LIST (account);

CREATE OR REPLACE FUNCTION replica.partitioned_tables() RETURNS text[] LANGUAGE sql IMMUTABLE
AS $$ SELECT ARRAY['items', 'vectors', 'enrichment', 'activities', 'records', 'index_statistics', 'content_types',
                   'client_state', 'meta', 'checkpoints', 'projections', 'tombstones', 'quarantine', 'source_entries',
                   'embedded', 'changes', 'record_logs', 'pending_deletions', 'record_counters',
                   'ranking_state', 'ranking_lists', 'ranking_changes', 'vocabulary', 'words_next'] $$;

DO $$
DECLARE
    account_name text;
BEGIN
    PERFORM replica.protect_partition('words_next');
    -- The new table's partitions for the accounts that have the others (add_account makes what is missing).
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
