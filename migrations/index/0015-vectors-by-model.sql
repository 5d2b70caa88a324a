-- Meaning in every language (issue 46): after a store changes its embedding model, an item keeps its
-- vectors from the former model until it is embedded again, and searches ask those vectors with the
-- former model's query vector meanwhile. Whether an index still holds a model's vectors is asked on
-- every search, so it must not read the whole table.
CREATE INDEX embedded_model ON embedded(model);
