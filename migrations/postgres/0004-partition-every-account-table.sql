-- A partition per account for every table keyed by account, not only those that hold an item's or a
-- record's words.
--
-- The other tables lost an account's rows at sign-out by DELETE, and PostgreSQL leaves a deleted row's
-- bytes in its page until the space is reused: a batch's client state (the app's own bytes), item
-- identifiers in tombstones and the quarantine, a file tree's paths in source_entries, record IDs in the
-- change log, domains in the retry queue could all be read from the data files after the sign-out. Now
-- every one of them has a partition per account, and signing out drops them all: no table-wide VACUUM,
-- and after the next checkpoint no data file holds any of the account's bytes.
--
-- Each table is rebuilt as a partitioned table with the same columns, defaults, checks and primary key,
-- its rows copied into the partitions of their accounts, its privileges and its row-level policy kept.

CREATE OR REPLACE FUNCTION replica.partitioned_tables() RETURNS text[] LANGUAGE sql IMMUTABLE
AS $$ SELECT ARRAY['items', 'vectors', 'enrichment', 'activities', 'records', 'index_statistics', 'content_types',
                   'client_state', 'meta', 'checkpoints', 'projections', 'tombstones', 'quarantine', 'source_entries',
                   'embedded', 'changes', 'record_logs', 'pending_deletions', 'record_counters'] $$;

-- No table is left whose rows are deleted one by one: removing an account is dropping its partitions.
CREATE OR REPLACE FUNCTION replica.remove_account() RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    name text;
BEGIN
    FOREACH name IN ARRAY replica.partitioned_tables() LOOP
        EXECUTE format('DROP TABLE IF EXISTS replica.%I', replica.partition_name(name, current_setting('replica.account')));
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION replica.remove_account() FROM PUBLIC;
DROP FUNCTION replica.plain_tables();

DO $$
DECLARE
    tables text[] := ARRAY['index_statistics', 'content_types', 'client_state', 'meta', 'checkpoints', 'projections',
                           'tombstones', 'quarantine', 'source_entries', 'embedded', 'changes', 'record_logs',
                           'pending_deletions', 'record_counters'];
    name text;
    old text;
    grant_row record;
    account_name text;
BEGIN
    -- 1. The partitioned tables beside the old ones.
    FOREACH name IN ARRAY tables LOOP
        old := name || '_unpartitioned';
        EXECUTE format('ALTER TABLE replica.%I RENAME TO %I', name, old);
        EXECUTE format('ALTER TABLE replica.%I RENAME CONSTRAINT %I TO %I', old, name || '_pkey', old || '_pkey');
        EXECUTE format('CREATE TABLE replica.%I (LIKE replica.%I INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES) '
                       'PARTITION BY LIST (account)', name, old);
        FOR grant_row IN
            SELECT coalesce(r.rolname, 'PUBLIC') AS grantee, a.privilege_type
            FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) AS a LEFT JOIN pg_roles r ON r.oid = a.grantee
            WHERE c.oid = format('replica.%I', old)::regclass AND a.grantee <> c.relowner
        LOOP
            EXECUTE format('GRANT %s ON replica.%I TO %s', grant_row.privilege_type, name,
                           CASE WHEN grant_row.grantee = 'PUBLIC' THEN 'PUBLIC' ELSE quote_ident(grant_row.grantee) END);
        END LOOP;
        -- The same policy as every table and partition (0003's protect_partition works on any table).
        PERFORM replica.protect_partition(name);
    END LOOP;

    -- 2. The partitions of every account that has rows, then the rows.
    FOR account_name IN
        SELECT account FROM replica.accounts
        UNION SELECT account FROM replica.index_statistics_unpartitioned UNION SELECT account FROM replica.content_types_unpartitioned
        UNION SELECT account FROM replica.client_state_unpartitioned UNION SELECT account FROM replica.meta_unpartitioned
        UNION SELECT account FROM replica.checkpoints_unpartitioned UNION SELECT account FROM replica.projections_unpartitioned
        UNION SELECT account FROM replica.tombstones_unpartitioned UNION SELECT account FROM replica.quarantine_unpartitioned
        UNION SELECT account FROM replica.source_entries_unpartitioned UNION SELECT account FROM replica.embedded_unpartitioned
        UNION SELECT account FROM replica.changes_unpartitioned UNION SELECT account FROM replica.record_logs_unpartitioned
        UNION SELECT account FROM replica.pending_deletions_unpartitioned UNION SELECT account FROM replica.record_counters_unpartitioned
    LOOP
        PERFORM set_config('replica.account', account_name, true);
        PERFORM replica.add_account();
    END LOOP;
    PERFORM set_config('replica.account', '', true);
    FOREACH name IN ARRAY tables LOOP
        old := name || '_unpartitioned';
        -- Owner with BYPASSRLS (the migration refuses to run otherwise): every account's rows move.
        EXECUTE format('INSERT INTO replica.%I SELECT * FROM replica.%I', name, old);
        EXECUTE format('DROP TABLE replica.%I', old);
    END LOOP;
END
$$;
