-- Three fixes to the partitions made per account.
--
-- 1. Row-level security is a property of each table, and a partition does not take its parent's: the
--    app's role, granted the partitions by the schema's default privileges, could read another account's
--    partition by its name (`SELECT * FROM replica.items_<hash>`) with no policy applied. Every partition
--    now has the parent's policy, enabled and forced, from the moment add_account makes it.
-- 2. The search functions named the account through current_setting(), which PostgreSQL cannot use to
--    prune partitions when it plans, and a SECURITY DEFINER function is never inlined: each call was
--    planned over every account's partition (51 ms a call at 300 accounts, against 0.57 ms with the
--    account written in; BENCHMARKS.md). They now read the calling account's own partition.
-- 3. add_account told an account's own partition from another account's by comparing the bound that
--    pg_get_expr prints with format('%L'), which writes E'…' for a name holding a backslash: signing such
--    an account in a second time said its own partition was "taken by another account". The bound is now
--    compared with the literal pg_get_expr prints (quotes doubled, backslashes as they are).

CREATE FUNCTION replica.protect_partition(partition text) RETURNS void
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
END
$$;
REVOKE ALL ON FUNCTION replica.protect_partition(text) FROM PUBLIC;

DO $$
DECLARE
    partition text;
BEGIN
    FOR partition IN
        SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
        JOIN pg_namespace n ON n.oid = p.relnamespace
        WHERE n.nspname = 'replica' AND p.relname = ANY (replica.partitioned_tables())
    LOOP
        PERFORM replica.protect_partition(partition);
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION replica.add_account() RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    account text := current_setting('replica.account');
    bound text := 'FOR VALUES IN (''' || replace(current_setting('replica.account'), '''', '''''') || ''')';
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
            PERFORM replica.protect_partition(partition);
        ELSIF holder <> bound THEN
            RAISE EXCEPTION 'the partition name % is taken by another account', partition USING ERRCODE = 'unique_violation';
        END IF;
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION replica.items_matching(index_name text, query tsquery)
RETURNS SETOF replica.items
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    account text := current_setting('replica.account');
    partition text := replica.partition_name('items', current_setting('replica.account'));
BEGIN
    IF to_regclass(format('replica.%I', partition)) IS NULL THEN RETURN; END IF;
    RETURN QUERY EXECUTE format('SELECT * FROM replica.%I AS items WHERE items.account = $1 AND items.index_name = $2 AND items.words @@ $3',
                                partition)
        USING account, index_name, query;
END
$$;

CREATE OR REPLACE FUNCTION replica.items_matching_counts(index_name text, queries tsquery[])
RETURNS bigint[]
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    account text := current_setting('replica.account');
    partition text := replica.partition_name('items', current_setting('replica.account'));
    counts bigint[] := '{}';
    query tsquery;
    found bigint;
BEGIN
    FOREACH query IN ARRAY coalesce(queries, '{}') LOOP
        found := 0;
        IF to_regclass(format('replica.%I', partition)) IS NOT NULL THEN
            EXECUTE format('SELECT count(*) FROM replica.%I AS items WHERE items.account = $1 AND items.index_name = $2 AND items.words @@ $3',
                           partition)
                INTO found USING account, index_name, query;
        END IF;
        counts := counts || found;
    END LOOP;
    RETURN counts;
END
$$;

REVOKE ALL ON FUNCTION replica.items_matching(text, tsquery) FROM PUBLIC;
REVOKE ALL ON FUNCTION replica.items_matching_counts(text, tsquery[]) FROM PUBLIC;
