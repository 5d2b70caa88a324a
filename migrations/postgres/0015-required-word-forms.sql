-- Every word required, in several languages at once (issue 45): a required word is any of its forms (the
-- word as typed and its stem for each language the query is stemmed for), so ranked_matches takes, beside
-- each term, the number of the word it is a form of; with requires_all, a row passes when it holds at least
-- one term of every word. The old function is dropped, and the roles that could call it may call this one.

CREATE TEMPORARY TABLE required_forms_callers ON COMMIT DROP AS
    SELECT DISTINCT pg_get_userbyid(a.grantee) AS role
    FROM pg_proc p CROSS JOIN LATERAL aclexplode(p.proacl) AS a
    WHERE p.oid = 'replica.ranked_matches(text, tsquery[], boolean, float8, integer, float8, float8, float8, float8, text[], text[], text[], text[], text[], text[], float8, float8, float8, float8, float8[])'::regprocedure
      AND a.privilege_type = 'EXECUTE' AND a.grantee NOT IN (0, p.proowner);

DROP FUNCTION replica.ranked_matches(text, tsquery[], boolean, float8, integer, float8, float8, float8, float8,
    text[], text[], text[], text[], text[], text[], float8, float8, float8, float8, float8[]);

CREATE FUNCTION replica.ranked_matches(
    index_name text, terms tsquery[], requires_all boolean, now float8, asked integer,
    k1 float8, k1_plus_one float8, one_minus_b float8, b float8,
    domains text[], content_trees text[], owners text[], excluded_owners text[], authors text[], recipients text[],
    created_from float8, created_before float8, modified_from float8, modified_before float8,
    weights float8[], term_words integer[])
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
    frequency text;
    passes text := 'true';
    every_term text;
    any_term tsquery;
BEGIN
    IF to_regclass(format('replica.%I', partition)) IS NULL OR coalesce(cardinality(terms), 0) = 0 THEN RETURN; END IF;
    -- Every word: any of its terms (a term is a word of its own where `term_words` does not say).
    every_term := (SELECT string_agg(w.any_form, ' AND ') FROM (
        SELECT '(' || string_agg(format('h.h%s', x), ' OR ' ORDER BY x) || ')' AS any_form
        FROM generate_series(1, cardinality(terms)) AS x GROUP BY coalesce(term_words[x], -x)) AS w);
    FOR t IN 1..cardinality(terms) LOOP
        any_term := CASE WHEN t = 1 THEN terms[1] ELSE any_term || terms[t] END;
        flags := flags || format('%s i.words @@ $3[%s] AS h%s', CASE WHEN t > 1 THEN ',' ELSE '' END, t, t);
        -- A term's frequency is read only where it can count: in a row that holds it (and every term, when all are required).
        -- A prefix's places are counted once each: a word and its stem beside it both begin with it.
        IF numnode(terms[t]) = 1 AND right(terms[t]::text, 2) = ':*' THEN
            frequency := format('(SELECT coalesce(sum(CASE x.w WHEN ''A'' THEN 10 WHEN ''B'' THEN 5 WHEN ''C'' THEN 2 ELSE 1 END), 0)::float8 '
                || 'FROM (SELECT DISTINCT p.p, p.w FROM unnest(i.words) AS u(lexeme, positions, weights), '
                || 'unnest(u.positions, u.weights) AS p(p, w) WHERE starts_with(u.lexeme, %L)) AS x)',
                (SELECT u.lexeme FROM unnest(left(terms[t]::text, -2)::tsvector) AS u));
        ELSE
            frequency := format('round(ts_rank_cd(''{0.1,0.2,0.5,1}''::float4[], i.words, $3[%s], 0)::float8 * 10)', t);
        END IF;
        frequencies := frequencies || format(', CASE WHEN %s THEN %s ELSE 0 END AS f%s',
            CASE WHEN requires_all THEN every_term ELSE format('h.h%s', t) END, frequency, t);
        counts := counts || format('%s count(*) FILTER (WHERE m.h%s) AS n%s', CASE WHEN t > 1 THEN ',' ELSE '' END, t, t);
        -- BM25.idf: log((rows - hits + 0.5) / (hits + 0.5)), 1e-6 when not above 0 (NaN, as log's, below 0),
        -- times the term's weight (a word as typed counts less than its stem).
        idfs := idfs || format(
            ', (SELECT CASE WHEN x.r <= 0 THEN ''NaN''::float8 WHEN ln(x.r) <= 0 THEN 1e-6::float8 ELSE ln(x.r) END * $21[%s] '
            || 'FROM (SELECT ((st.items::float8 - c.n%s::float8) + 0.5::float8) / (c.n%s::float8 + 0.5::float8) AS r) AS x) AS i%s',
            t, t, t, t);
        hit_list := hit_list || format('%s c.n%s', CASE WHEN t > 1 THEN ',' ELSE '' END, t);
        part := format('s.i%s * (m.f%s * $7) / (m.f%s + $6 * ($8 + $9 * m.length / s.average))', t, t, t);
        score := CASE WHEN t = 1 THEN part ELSE '(' || score || ') + (' || part || ')' END;
    END LOOP;
    IF requires_all THEN passes := passes || ' AND ' || every_term; END IF;
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
            SELECT i.id, i.length, i.expires > $5 AND coalesce(%s, false) AS passes, h.* %s
            FROM replica.%I AS i CROSS JOIN LATERAL (SELECT %s OFFSET 0) AS h
            WHERE i.account = $1 AND i.index_name = $2 AND i.words @@ $4
        ), c AS (
            SELECT %s FROM m
        ), s AS (
            SELECT st.items, st.words, greatest(st.words::float8 / st.items::float8, 1e-9::float8) AS average %s
            FROM replica.%I AS st, c WHERE st.account = $1 AND st.index_name = $2 AND st.items > 0
        )
        SELECT m.id, m.length, %s AS score, ARRAY[%s]::bigint[], s.items, s.words
        FROM m, c, s WHERE m.passes ORDER BY 3 DESC, 1 LIMIT $10
        $sql$, passes, frequencies, partition, flags, counts, idfs, statistics, score, hit_list)
    USING account, index_name, terms, any_term, now, k1, k1_plus_one, one_minus_b, b, asked,
        domains, content_trees, owners, excluded_owners, authors, recipients,
        created_from, created_before, modified_from, modified_before, weights;
END
$$;
REVOKE ALL ON FUNCTION replica.ranked_matches(text, tsquery[], boolean, float8, integer, float8, float8, float8, float8,
    text[], text[], text[], text[], text[], text[], float8, float8, float8, float8, float8[], integer[]) FROM PUBLIC;

DO $$
DECLARE
    caller text;
BEGIN
    FOR caller IN SELECT role FROM pg_temp.required_forms_callers LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION replica.ranked_matches(text, tsquery[], boolean, float8, integer, float8, float8, '
            'float8, float8, text[], text[], text[], text[], text[], text[], float8, float8, float8, float8, float8[], integer[]) TO %I', caller);
    END LOOP;
END
$$;
