-- The accounts a store knows. An account is signed in (searched, written to) or on its way out:
-- a sign-out is recorded here first, so an interrupted one is finished at the next start and the
-- account is never searched again from the moment it is recorded.
CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    directory TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL DEFAULT 'signedIn' CHECK (state IN ('signedIn', 'signingOut')),
    signed_in_at REAL NOT NULL
) STRICT;
