-- Meaning in every language (issue 46): how many items of each language without stems (Chinese,
-- Japanese, Thai…) the index has been given, apart from `languages` (which a query whose language cannot
-- be told is stemmed for), so that a Chinese question over Spanish notes is known to be across
-- languages. An index that already holds items of such languages (their `language` is NULL) cannot say
-- which, and gets no count: its queries in those languages count as in its items' language, as before.
INSERT OR IGNORE INTO meta(key, value)
SELECT 'languages_unstemmed', '' WHERE NOT EXISTS (SELECT 1 FROM items WHERE language IS NULL);
