-- An any-word search no longer tests each match for each term (`words @@ term`, in a lateral subquery per
-- row) before ranking it: a term's weighted frequency, which ts_rank_cd gives for every match anyway, is
-- above 0 exactly where the match holds the term (every instance of a lexeme counts a weight of at least
-- 0.1, rounded to at least 1), so the frequencies give the document frequencies too. Measured on 100,000
-- paragraphs, two words each in about 12% of them: 90 ms a search instead of 104 (BENCHMARKS.md,
-- "Issue 20 §6, seventh"). A search that requires every word keeps the tests, which spare it the
-- frequencies of the rows that lack a word.

CREATE OR REPLACE FUNCTION replica.ranked_matches(
    index_name text, terms tsquery[], requires_all boolean, now float8, asked integer,
    k1 float8, k1_plus_one float8, one_minus_b float8, b float8,
    domains text[], content_trees text[], owners text[], excluded_owners text[], authors text[], recipients text[],
    created_from float8, created_before float8, modified_from float8, modified_before float8)
RETURNS TABLE(id bigint, length integer, score float8, hits bigint[], items bigint, words bigint)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    account text := current_setting('replica.account');
    partition text := replica.partition_name('items', current_setting('replica.account'));
    statistics text := replica.partition_name('index_statistics', current_setting('replica.account'));
    types text := replica.partition_name('content_types', current_setting('replica.account'));
    flags text := '';
    frequencies text := '';
    counts text := '';
    idfs text := '';
    hit_list text := '';
    score text := '';
    part text;
    passes text := 'true';
    every_term text;
    any_term tsquery;
    tests text := '';
BEGIN
    IF to_regclass(format('replica.%I', partition)) IS NULL OR coalesce(cardinality(terms), 0) = 0 THEN RETURN; END IF;
    every_term := (SELECT string_agg(format('h.h%s', x), ' AND ') FROM generate_series(1, cardinality(terms)) AS x);
    FOR t IN 1..cardinality(terms) LOOP
        any_term := CASE WHEN t = 1 THEN terms[1] ELSE any_term || terms[t] END;
        IF requires_all THEN
            -- Each term tested first, and its frequency read only in a row that holds every term.
            flags := flags || format('%s i.words @@ $3[%s] AS h%s', CASE WHEN t > 1 THEN ',' ELSE '' END, t, t);
            frequencies := frequencies || format(
                ', CASE WHEN %s THEN round(ts_rank_cd(''{0.1,0.2,0.5,1}''::float4[], i.words, $3[%s], 0)::float8 * 10) ELSE 0 END AS f%s',
                every_term, t, t);
            counts := counts || format('%s count(*) FILTER (WHERE m.h%s) AS n%s', CASE WHEN t > 1 THEN ',' ELSE '' END, t, t);
        ELSE
            -- Every match's frequency of each term; above 0 where the match holds the term.
            frequencies := frequencies || format(
                ', round(ts_rank_cd(''{0.1,0.2,0.5,1}''::float4[], i.words, $3[%s], 0)::float8 * 10) AS f%s', t, t);
            counts := counts || format('%s count(*) FILTER (WHERE m.f%s > 0) AS n%s', CASE WHEN t > 1 THEN ',' ELSE '' END, t, t);
        END IF;
        -- BM25.idf: log((rows - hits + 0.5) / (hits + 0.5)), 1e-6 when not above 0 (NaN, as log's, below 0).
        idfs := idfs || format(
            ', (SELECT CASE WHEN x.r <= 0 THEN ''NaN''::float8 WHEN ln(x.r) <= 0 THEN 1e-6::float8 ELSE ln(x.r) END '
            || 'FROM (SELECT ((st.items::float8 - c.n%s::float8) + 0.5::float8) / (c.n%s::float8 + 0.5::float8) AS r) AS x) AS i%s',
            t, t, t);
        hit_list := hit_list || format('%s c.n%s', CASE WHEN t > 1 THEN ',' ELSE '' END, t);
        part := format('s.i%s * (m.f%s * $7) / (m.f%s + $6 * ($8 + $9 * m.length / s.average))', t, t, t);
        score := CASE WHEN t = 1 THEN part ELSE '(' || score || ') + (' || part || ')' END;
    END LOOP;
    IF requires_all THEN
        passes := passes || ' AND ' || every_term;
        tests := format('CROSS JOIN LATERAL (SELECT %s OFFSET 0) AS h', flags);
    END IF;
    IF domains IS NOT NULL THEN
        -- A domain and its subdomains; the range compares bytes, as SQLite does.
        passes := passes || ' AND EXISTS (SELECT 1 FROM unnest($11) AS d WHERE i.domain = d '
            || 'OR (i.domain COLLATE "C" >= d || ''.'' AND i.domain COLLATE "C" < d || ''/''))';
    END IF;
    IF content_trees IS NOT NULL THEN
        passes := passes || format(' AND i.content_type IN (SELECT ct.name FROM replica.%I AS ct WHERE ct.account = $1 ', types)
            || 'AND ct.index_name = $2 AND EXISTS (SELECT 1 FROM unnest($12) AS tree WHERE strpos(ct.tree, tree) > 0))';
    END IF;
    IF owners IS NOT NULL THEN passes := passes || ' AND i.owner = ANY($13)'; END IF;
    IF excluded_owners IS NOT NULL THEN passes := passes || ' AND i.owner <> ALL($14)'; END IF;
    IF authors IS NOT NULL THEN passes := passes || ' AND EXISTS (SELECT 1 FROM unnest($15) AS a WHERE strpos(i.authors, a) > 0)'; END IF;
    IF recipients IS NOT NULL THEN passes := passes || ' AND EXISTS (SELECT 1 FROM unnest($16) AS r WHERE strpos(i.recipients, r) > 0)'; END IF;
    IF created_from IS NOT NULL THEN passes := passes || ' AND i.created >= $17'; END IF;
    IF created_before IS NOT NULL THEN passes := passes || ' AND i.created < $18'; END IF;
    IF modified_from IS NOT NULL THEN passes := passes || ' AND i.modified >= $19'; END IF;
    IF modified_before IS NOT NULL THEN passes := passes || ' AND i.modified < $20'; END IF;

    RETURN QUERY EXECUTE format($sql$
        WITH m AS MATERIALIZED (
            SELECT i.id, i.length, i.expires > $5 AND coalesce(%s, false) AS passes %s %s
            FROM replica.%I AS i %s
            WHERE i.account = $1 AND i.index_name = $2 AND i.words @@ $4
        ), c AS (
            SELECT %s FROM m
        ), s AS (
            SELECT st.items, st.words, greatest(st.words::float8 / st.items::float8, 1e-9::float8) AS average %s
            FROM replica.%I AS st, c WHERE st.account = $1 AND st.index_name = $2 AND st.items > 0
        )
        SELECT m.id, m.length, %s AS score, ARRAY[%s]::bigint[], s.items, s.words
        FROM m, c, s WHERE m.passes ORDER BY 3 DESC, 1 LIMIT $10
        $sql$, passes, CASE WHEN requires_all THEN ', h.*' ELSE '' END, frequencies, partition, tests, counts, idfs, statistics, score, hit_list)
    USING account, index_name, terms, any_term, now, k1, k1_plus_one, one_minus_b, b, asked,
        domains, content_trees, owners, excluded_owners, authors, recipients,
        created_from, created_before, modified_from, modified_before;
END
$$;
REVOKE ALL ON FUNCTION replica.ranked_matches(text, tsquery[], boolean, float8, integer, float8, float8, float8, float8,
    text[], text[], text[], text[], text[], text[], float8, float8, float8, float8) FROM PUBLIC;

