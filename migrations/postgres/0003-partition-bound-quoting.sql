-- add_account told an account's own partition from another account's by comparing the partition's bound,
-- as pg_get_expr prints it, with format('%L'). For a name holding a backslash %L writes an E'…' literal,
-- which pg_get_expr never prints, so signing such an account in a second time said its own partition was
-- "taken by another account". The bound is now compared with the literal pg_get_expr prints: quotes
-- doubled, backslashes as they are (standard_conforming_strings, on since PostgreSQL 9.1).
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
        ELSIF holder <> bound THEN
            RAISE EXCEPTION 'the partition name % is taken by another account', partition USING ERRCODE = 'unique_violation';
        END IF;
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION replica.add_account() FROM PUBLIC;
