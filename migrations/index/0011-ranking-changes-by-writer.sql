-- The ranking lists hear of new and rewritten items from the writer, not from triggers.
--
-- A trigger on items makes SQLite open a statement journal for every INSERT and UPDATE of items, and
-- each statement journal has FTS5 flush the terms it holds in memory into a segment of its own. With
-- migration 0010's triggers, whose WHEN clause is false until lists are built, a bulk load ran three to
-- four times slower (FTS5 wrote a segment per item), and updates in place after it ran three to five times
-- slower (SQLite 3.40, measured with `replica-bench profile-updates` and in Python). The writer now
-- records each row whose text it indexes in ranking_changes, in the same transaction, while lists exist.
-- Deletes keep their trigger: the vectors' and enrichment's triggers on DELETE already open the journal.
DROP TRIGGER items_inserted_ranking;
DROP TRIGGER items_text_updated_ranking;
