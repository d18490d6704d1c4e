-- Discovery's state in PostgreSQL: as discovery/0001_initial.sql, with its clock in SQL's words.
CREATE TABLE IF NOT EXISTS seen (url TEXT PRIMARY KEY, source TEXT, title TEXT,
    first_seen TEXT DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')));
CREATE TABLE IF NOT EXISTS checked (url TEXT PRIMARY KEY, at DOUBLE PRECISION NOT NULL);
