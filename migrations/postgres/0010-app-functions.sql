-- The app's role may call only the functions replica calls as it, and none of them acts on anything but
-- the account its transaction names.
--
-- The set-up this schema documented until now granted the app's role every function the owner makes
-- (`ALTER DEFAULT PRIVILEGES … GRANT EXECUTE ON FUNCTIONS TO replica_app`; PostgresSchema.grants did
-- `GRANT EXECUTE ON ALL FUNCTIONS`), the owner's helpers included, which run as the owner (SECURITY
-- DEFINER) and take a table's name: `SELECT replica.protect_partition('accounts')` as the app's role
-- enabled and forced row-level security with a policy on the catalog's `accounts`, and from then on every
-- process saw no account (`'sources'` the same; keep_words_out_of_statistics set any table's statistics).
--
-- Now:
-- 1. Every function of the schema is revoked from PUBLIC and, but for the app's eight below, from every
--    role but its owner; the schema's default privileges no longer grant functions to anyone.
-- 2. The app's functions are granted to the app's roles: those that held them already, and those the
--    schema's tables are given to (the default privileges on tables of the set-up, or a grant on
--    replica.accounts). A later migration that adds a function the app calls grants it the same way.
--    The app's functions: partition_name (a name from a digest; runs as the caller), and, run as the
--    owner, add_account, remove_account, analyze_ranking_lists and the four searches, each of which acts
--    on the partitions of the account the transaction names in `replica.account` and on nothing else.
-- 3. protect_partition and keep_words_out_of_statistics run as their caller (the owner: add_account,
--    the migrations), so that a role that does not own a table cannot change it through them, and refuse
--    any table but the account tables and their partitions. add_account refuses an empty account.
-- 4. The tables that are no account's (the catalog, catalog_version, migrations) lose what the app's role
--    may have had the helpers do to them (row-level security and a policy, statistics targets of 0):
--    they have none by design.

-- 3. The owner's helpers: the caller's rights, and only the account tables and their partitions. The
-- check is in keep_words_out_of_statistics, which protect_partition calls first. (Not in a function of its
-- own: a function this migration made would belong to whoever applies it, a superuser perhaps, and
-- add_account, which runs as the schema's owner, could not call it.)
CREATE OR REPLACE FUNCTION replica.protect_partition(partition text) RETURNS void
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- First: it refuses any table but an account table or a partition of one.
    PERFORM replica.keep_words_out_of_statistics(partition);
    EXECUTE format('ALTER TABLE replica.%I ENABLE ROW LEVEL SECURITY', partition);
    EXECUTE format('ALTER TABLE replica.%I FORCE ROW LEVEL SECURITY', partition);
    IF NOT EXISTS (SELECT 1 FROM pg_policies WHERE schemaname = 'replica' AND tablename = partition AND policyname = 'account_rows') THEN
        EXECUTE format($policy$CREATE POLICY account_rows ON replica.%I
                           USING (account = current_setting('replica.account', true))
                           WITH CHECK (account = current_setting('replica.account', true))$policy$, partition);
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION replica.keep_words_out_of_statistics(relation text) RETURNS void
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    column_name name;
BEGIN
    IF relation IS NULL OR NOT (relation = ANY (replica.partitioned_tables()) OR EXISTS (
            SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
            WHERE c.relnamespace = 'replica'::regnamespace AND p.relnamespace = 'replica'::regnamespace
              AND c.relname = relation AND p.relname = ANY (replica.partitioned_tables()))) THEN
        RAISE EXCEPTION 'replica.% is not a table keyed by account or a partition of one', coalesce(relation, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOR column_name IN
        SELECT a.attname FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
        WHERE a.attrelid = format('replica.%I', relation)::regclass AND a.attnum > 0 AND NOT a.attisdropped
          AND t.typcategory IN ('S', 'A', 'U') AND coalesce(a.attstattarget, -1) <> 0
          AND a.attname NOT IN ('account', 'index_name', 'owner')
    LOOP
        EXECUTE format('ALTER TABLE ONLY replica.%I ALTER COLUMN %I SET STATISTICS 0', relation, column_name);
    END LOOP;
END
$$;

-- The account's partitions, as before, for a named account only: an empty name is no account's.
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
    IF account = '' THEN
        RAISE EXCEPTION 'the transaction names no account (replica.account is empty)' USING ERRCODE = 'invalid_parameter_value';
    END IF;
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

-- 4. What protect_partition and keep_words_out_of_statistics may have done to a table that is no account's.
DO $$
DECLARE
    relation text;
    column_name name;
BEGIN
    FOR relation IN
        SELECT c.relname FROM pg_class c
        WHERE c.relnamespace = 'replica'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
          AND c.relname <> ALL (replica.partitioned_tables())
          AND (c.relrowsecurity OR c.relforcerowsecurity OR EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid AND p.polname = 'account_rows'))
    LOOP
        EXECUTE format('DROP POLICY IF EXISTS account_rows ON replica.%I', relation);
        EXECUTE format('ALTER TABLE replica.%I NO FORCE ROW LEVEL SECURITY', relation);
        EXECUTE format('ALTER TABLE replica.%I DISABLE ROW LEVEL SECURITY', relation);
        RAISE WARNING 'replica.% had row-level security, which only the tables keyed by account have: removed', relation;
    END LOOP;
    -- keep_words_out_of_statistics on such a table: its statistics as PostgreSQL's default.
    FOR relation, column_name IN
        SELECT c.relname, a.attname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
        WHERE c.relnamespace = 'replica'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
          AND c.relname <> ALL (replica.partitioned_tables()) AND a.attnum > 0 AND NOT a.attisdropped AND a.attstattarget = 0
    LOOP
        EXECUTE format('ALTER TABLE replica.%I ALTER COLUMN %I SET STATISTICS -1', relation, column_name);
        RAISE WARNING 'replica.%.% had a statistics target of 0, which only the tables keyed by account have: reset', relation, column_name;
    END LOOP;
END
$$;

-- 1 and 2. Who may call what.
DO $$
DECLARE
    app_functions regprocedure[] := ARRAY[
        'replica.partition_name(text, text)',
        'replica.add_account()',
        'replica.remove_account()',
        'replica.analyze_ranking_lists()',
        'replica.items_matching(text, tsquery)',
        'replica.items_matching_counts(text, tsquery[])',
        'replica.ranked_matches(text, tsquery[], boolean, float8, integer, float8, float8, float8, float8, '
            'text[], text[], text[], text[], text[], text[], float8, float8, float8, float8)',
        'replica.unlisted_postings(text, text[], tsquery[], integer)']::regprocedure[];
    schema_owner oid := (SELECT nspowner FROM pg_namespace WHERE nspname = 'replica');
    app_roles oid[];
    entry record;
    app_role oid;
    left_over text;
BEGIN
    -- The app's roles: those the schema's tables are given to (the default privileges on its tables, or a
    -- grant on the catalog), and those that may call a function of the app's already.
    SELECT coalesce(array_agg(DISTINCT role), '{}') INTO app_roles FROM (
        SELECT a.grantee AS role FROM pg_default_acl d CROSS JOIN LATERAL aclexplode(d.defaclacl) AS a
        WHERE d.defaclnamespace = 'replica'::regnamespace AND d.defaclobjtype = 'r' AND a.grantee NOT IN (0, d.defaclrole, schema_owner)
        UNION
        SELECT a.grantee FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) AS a
        WHERE c.oid = 'replica.accounts'::regclass AND a.privilege_type = 'INSERT' AND a.grantee NOT IN (0, c.relowner, schema_owner)
        UNION
        SELECT a.grantee FROM pg_proc p CROSS JOIN LATERAL aclexplode(p.proacl) AS a
        WHERE p.oid = ANY (app_functions) AND a.privilege_type = 'EXECUTE' AND a.grantee NOT IN (0, p.proowner, schema_owner)
    ) AS roles;

    -- No function of the schema for PUBLIC; no function but the app's for any role but its owner.
    FOR entry IN SELECT p.oid::regprocedure AS function FROM pg_proc p WHERE p.pronamespace = 'replica'::regnamespace LOOP
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', entry.function);
    END LOOP;
    FOR entry IN
        SELECT DISTINCT p.oid::regprocedure AS function, a.grantee
        FROM pg_proc p CROSS JOIN LATERAL aclexplode(p.proacl) AS a
        WHERE p.pronamespace = 'replica'::regnamespace AND a.grantee NOT IN (0, p.proowner) AND p.oid <> ALL (app_functions)
    LOOP
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM %I CASCADE', entry.function, pg_get_userbyid(entry.grantee));
    END LOOP;

    -- The schema's default privileges that granted them: of every role this one may act for (the others'
    -- do not apply to what the migrations create). Database-wide defaults also reach other schemas, so
    -- they are the operator's to change: one that would give the app's role a later migration's function
    -- is warned of, not changed.
    FOR entry IN
        SELECT DISTINCT d.defaclrole, a.grantee
        FROM pg_default_acl d CROSS JOIN LATERAL aclexplode(d.defaclacl) AS a
        WHERE d.defaclobjtype = 'f' AND d.defaclnamespace = 'replica'::regnamespace
          AND a.privilege_type = 'EXECUTE' AND a.grantee NOT IN (0, d.defaclrole) AND pg_has_role(d.defaclrole, 'MEMBER')
    LOOP
        EXECUTE format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA replica REVOKE EXECUTE ON FUNCTIONS FROM %I',
                       pg_get_userbyid(entry.defaclrole), pg_get_userbyid(entry.grantee));
    END LOOP;
    FOR entry IN
        SELECT DISTINCT d.defaclrole, a.grantee
        FROM pg_default_acl d CROSS JOIN LATERAL aclexplode(d.defaclacl) AS a
        WHERE d.defaclobjtype = 'f' AND d.defaclnamespace = 0 AND a.privilege_type = 'EXECUTE'
          AND a.grantee = ANY (app_roles) AND pg_has_role(d.defaclrole, 'MEMBER')
    LOOP
        RAISE WARNING 'the database-wide default privileges of % give % every function % makes, replica''s later ones too: '
            'take that back (ALTER DEFAULT PRIVILEGES FOR ROLE % REVOKE EXECUTE ON FUNCTIONS FROM %)',
            pg_get_userbyid(entry.defaclrole), pg_get_userbyid(entry.grantee), pg_get_userbyid(entry.defaclrole),
            pg_get_userbyid(entry.defaclrole), pg_get_userbyid(entry.grantee);
    END LOOP;

    -- The app's functions, to the app's roles.
    FOREACH app_role IN ARRAY app_roles LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I',
                       (SELECT string_agg(f::text, ', ') FROM unnest(app_functions) AS f), pg_get_userbyid(app_role));
    END LOOP;

    -- Checked, not assumed (a grant by another grantor would survive the revokes): no role but the owner
    -- may call a function that is not the app's.
    SELECT string_agg(DISTINCT format('%s to %s', p.oid::regprocedure, coalesce(pg_get_userbyid(nullif(a.grantee, 0)), 'PUBLIC')), '; ')
    INTO left_over
    FROM pg_proc p CROSS JOIN LATERAL aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) AS a
    WHERE p.pronamespace = 'replica'::regnamespace AND a.grantee <> p.proowner
      AND (a.grantee = 0 OR p.oid <> ALL (app_functions));
    IF left_over IS NOT NULL THEN
        RAISE EXCEPTION 'replica''s functions are still granted beyond the app''s (%): revoke them as their grantor', left_over
            USING ERRCODE = 'insufficient_privilege';
    END IF;
END
$$;
