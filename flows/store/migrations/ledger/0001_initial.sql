-- raw/ledger.sqlite: per source URL, the last snapshot digest and the draft made from it.
CREATE TABLE IF NOT EXISTS sources (url TEXT PRIMARY KEY, digest TEXT NOT NULL,
    draft_id TEXT NOT NULL, snapshot TEXT, skipped TEXT);
