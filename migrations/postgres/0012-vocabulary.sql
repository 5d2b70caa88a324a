-- The index's vocabulary (issue 45, typos forgiven), as the SQLite index keeps it (its migration 0013):
-- each token (a word or a stem) of 4 to 32 characters of an alphabetic script with how many items hold
-- it, kept by the writer in the transaction that writes the items' words, so that a search finds the
-- tokens one or two edits from a typed word by a range of this table rather than by reading the GIN
-- index. A partition per account, like every table keyed by account; `word` holds words, so it is kept
-- out of the planner's statistics (protect_partition). The analyzer's version changed with it: an
-- index opened after this migration has its words made again, and its vocabulary with them.

CREATE TABLE replica.vocabulary (
    account text NOT NULL,
    index_name text NOT NULL,
    word text COLLATE "C" NOT NULL,
    documents bigint NOT NULL,
    PRIMARY KEY (account, index_name, word)
) PARTITION BY LIST (account);
-- A search reads the tokens of one first letter by the primary key's range (an index on the first letter
-- and the length, as the SQLite index has, was planned as a walk through every token until the partition
-- was analyzed, which the app's role cannot do, and would sample the words' letters into statistics).

CREATE OR REPLACE FUNCTION replica.partitioned_tables() RETURNS text[] LANGUAGE sql IMMUTABLE
AS $$ SELECT ARRAY['items', 'vectors', 'enrichment', 'activities', 'records', 'index_statistics', 'content_types',
                   'client_state', 'meta', 'checkpoints', 'projections', 'tombstones', 'quarantine', 'source_entries',
                   'embedded', 'changes', 'record_logs', 'pending_deletions', 'record_counters',
                   'ranking_state', 'ranking_lists', 'ranking_changes', 'vocabulary'] $$;

DO $$
DECLARE
    account_name text;
BEGIN
    PERFORM replica.protect_partition('vocabulary');
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
