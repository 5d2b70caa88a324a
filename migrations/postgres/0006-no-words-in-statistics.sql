-- No column of an account's text is sampled into PostgreSQL's statistics.
--
-- ANALYZE (autovacuum's, or an operator's) copies a sample of each column's values into pg_statistic:
-- its most common values, a histogram, a tsvector's most common words. Dropping an account's partitions
-- at sign-out deletes those rows, but a deleted row's bytes stay in pg_statistic's pages until that
-- catalog is vacuumed, which replica's role cannot do: a signed-out account's words could be read from
-- the catalog's file. And an ANALYZE of a partitioned table samples every account's partitions into
-- statistics of the parent, which no sign-out removes.
--
-- Every column that can hold the app's bytes (strings, arrays, tsvectors, bytea, JSON: the type
-- categories S, A and U) of every partitioned table and partition gets a statistics target of 0, so
-- ANALYZE samples none of it; but for the account, the index's name and an item's owner (a source's
-- name), which the planner needs and which hold names, not text. The planner keeps what it needs: the partition bounds, the row counts, the
-- unique keys, and the numeric columns' statistics. protect_partition, which add_account calls for each
-- partition it makes, does the same for the partitions of accounts signed in later.
--
-- What ANALYZE sampled of those columns before this migration stays in pg_statistic until the column's
-- partition is dropped, and its bytes until that catalog is vacuumed: only a superuser can delete them
-- sooner (docs/postgres.md, "What a sign-out leaves").

CREATE OR REPLACE FUNCTION replica.protect_partition(partition text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    EXECUTE format('ALTER TABLE replica.%I ENABLE ROW LEVEL SECURITY', partition);
    EXECUTE format('ALTER TABLE replica.%I FORCE ROW LEVEL SECURITY', partition);
    IF NOT EXISTS (SELECT 1 FROM pg_policies WHERE schemaname = 'replica' AND tablename = partition AND policyname = 'account_rows') THEN
        EXECUTE format($policy$CREATE POLICY account_rows ON replica.%I
                           USING (account = current_setting('replica.account', true))
                           WITH CHECK (account = current_setting('replica.account', true))$policy$, partition);
    END IF;
    PERFORM replica.keep_words_out_of_statistics(partition);
END
$$;
REVOKE ALL ON FUNCTION replica.protect_partition(text) FROM PUBLIC;

CREATE FUNCTION replica.keep_words_out_of_statistics(relation text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    column_name name;
BEGIN
    FOR column_name IN
        SELECT a.attname FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
        WHERE a.attrelid = format('replica.%I', relation)::regclass AND a.attnum > 0 AND NOT a.attisdropped
          AND t.typcategory IN ('S', 'A', 'U') AND a.attstattarget <> 0
          -- Names the app gives, not its text; without their statistics the planner takes a search's
          -- account and index condition for a rare one and scans the partition by its B-tree.
          AND a.attname NOT IN ('account', 'index_name', 'owner')
    LOOP
        -- ONLY: a partitioned table's partitions are each done on their own (this function runs for each).
        EXECUTE format('ALTER TABLE ONLY replica.%I ALTER COLUMN %I SET STATISTICS 0', relation, column_name);
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION replica.keep_words_out_of_statistics(text) FROM PUBLIC;

DO $$
DECLARE
    relation text;
BEGIN
    FOREACH relation IN ARRAY replica.partitioned_tables() LOOP
        PERFORM replica.keep_words_out_of_statistics(relation);
    END LOOP;
    FOR relation IN
        SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
        JOIN pg_namespace n ON n.oid = p.relnamespace
        WHERE n.nspname = 'replica' AND p.relname = ANY (replica.partitioned_tables())
    LOOP
        PERFORM replica.keep_words_out_of_statistics(relation);
    END LOOP;
END
$$;
