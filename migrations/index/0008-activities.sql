-- User activities (NSUserActivity): what the account's person did in the app, donated by the app.
-- An activity about an indexed item (related) raises that item's ranking by engagement; a
-- search-eligible activity about nothing indexed becomes an item of its own (owner 'activities').
CREATE TABLE activities (
    id INTEGER PRIMARY KEY,
    persistent TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    title TEXT,
    related TEXT,
    keywords TEXT,
    -- the last time it happened, and how many times it was donated
    date REAL NOT NULL,
    views INTEGER NOT NULL DEFAULT 1,
    search INTEGER NOT NULL,
    prediction INTEGER NOT NULL,
    attributes TEXT,
    entity_type TEXT,
    entity_id TEXT
) STRICT;

CREATE INDEX activities_related ON activities(related) WHERE related IS NOT NULL;
