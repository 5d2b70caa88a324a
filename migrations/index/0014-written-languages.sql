-- Every language (issue 45): how many items of each language the index has been given, counted by the
-- writer as it writes them (`WrittenLanguages`), so that a query whose language cannot be told is stemmed
-- for the languages of the account's items. Counted here once from the language each item's words were
-- stemmed for; a new index starts with none.
INSERT OR REPLACE INTO meta(key, value)
SELECT 'languages', coalesce(group_concat(language || ':' || items, ' '), '')
FROM (SELECT language, count(*) AS items FROM items WHERE language IS NOT NULL GROUP BY language ORDER BY language);
