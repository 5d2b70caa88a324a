-- A process that keeps an index's vectors in memory hears when they change, rather than finding out at
-- its next search and reading them all then: every move of an index's `vectors_version` (vectors stored,
-- or deleted with their items) notifies the channel `replica_vectors` with 'account/index', delivered
-- when the transaction commits. The version in replica.meta stays the truth each search checks; a
-- notification only tells a listener to read the vectors before a search needs them.
CREATE FUNCTION replica.vectors_changed() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM pg_notify('replica_vectors', NEW.account || '/' || NEW.index_name);
    RETURN NULL;
END
$$;

-- On the partitioned table: PostgreSQL clones the trigger onto every partition, those made later included.
CREATE TRIGGER vectors_changed AFTER INSERT OR UPDATE ON replica.meta
    FOR EACH ROW WHEN (NEW.key = 'vectors_version') EXECUTE FUNCTION replica.vectors_changed();
