-- The index writer now drops an item's vectors itself when it replaces the item's text (and queues
-- enrichment itself): triggers on UPDATE of items made a text-changing rebuild four to five times
-- slower (issue 3's replication benchmark: 5,000 items/s with the trigger, 21,700 without it).
-- Deleting an item still drops its vectors through items_deleted_vectors.
DROP TRIGGER IF EXISTS items_text_changed_vectors;
DROP TRIGGER IF EXISTS items_inserted_enrichment;
DROP TRIGGER IF EXISTS items_updated_enrichment;
