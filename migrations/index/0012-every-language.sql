-- Every language (issue 45): the full-text index is made again with replica's own analyzer, FTS5's
-- tokenizer `replica` (ICU's words for every script, pairs of characters beside long Chinese, Japanese
-- and Korean words, Snowball's stem beside each word), in place of SQLite's `porter unicode61`.
--
-- items.language is the language an item's words are stemmed for (its `language` attribute, else the
-- one its text is in; NULL for none): FTS5 makes a row's tokens again to remove them, so the writer
-- stems them for the language they were indexed in. The new table is empty here: when the index opens,
-- replica finds no analyzer recorded in `meta` and indexes every row again (each with its language),
-- then builds the ranking lists again if the index kept them. A kill before that ends is resumed at the
-- next open.
ALTER TABLE items ADD COLUMN language TEXT;

DROP TABLE items_text;
CREATE VIRTUAL TABLE items_text USING fts5(
    title, keywords, people, description, body,
    content = 'items', content_rowid = 'id',
    tokenize = 'replica'
);
INSERT INTO items_text(items_text, rank) VALUES ('rank', 'bm25(10.0, 5.0, 5.0, 2.0, 1.0)');
INSERT INTO items_text(items_text, rank) VALUES ('hashsize', 16777216);

DELETE FROM meta WHERE key = 'analyzer';
