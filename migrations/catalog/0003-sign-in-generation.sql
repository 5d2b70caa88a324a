-- Each sign-in of an account gets a number never used before in this store, so that a file opened
-- under one sign-in can tell, at every operation, that the account was signed out (and perhaps signed
-- in again) since: its generation no longer matches. The counter outlives the accounts it numbered.
ALTER TABLE accounts ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;

CREATE TABLE counters (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) STRICT;
INSERT INTO counters(name, value) VALUES ('sign_in_generation', 0);
