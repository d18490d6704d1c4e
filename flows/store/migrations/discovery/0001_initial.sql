-- raw/discovery.sqlite: the entries discovery has handed on, and when each was last fetched.
CREATE TABLE IF NOT EXISTS seen (url TEXT PRIMARY KEY, source TEXT, title TEXT,
    first_seen TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')));
CREATE TABLE IF NOT EXISTS checked (url TEXT PRIMARY KEY, at REAL NOT NULL);
