-- The archive index in PostgreSQL: as index/0001_initial.sql, with `seq` to order captures as
-- inserted (SQLite's rowid) and 64-bit offsets; "offset" is quoted (a reserved word here).
CREATE TABLE IF NOT EXISTS captures (
    seq BIGINT GENERATED ALWAYS AS IDENTITY,
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    canonical_url TEXT NOT NULL,
    captured_at TEXT NOT NULL,
    status INTEGER,
    mime TEXT,
    payload_sha256 TEXT,
    payload_digest TEXT,
    warc_file TEXT NOT NULL,
    "offset" BIGINT NOT NULL,
    length BIGINT NOT NULL,
    revisit_of TEXT,
    kind TEXT NOT NULL,
    record_id TEXT NOT NULL,
    content_type TEXT,
    etag TEXT,
    last_modified TEXT,
    source_path TEXT,
    requested_url TEXT
);
CREATE INDEX IF NOT EXISTS captures_canonical ON captures (canonical_url, captured_at);
CREATE INDEX IF NOT EXISTS captures_url ON captures (url, captured_at);
CREATE INDEX IF NOT EXISTS captures_digest ON captures (canonical_url, payload_digest);
CREATE INDEX IF NOT EXISTS captures_requested ON captures (requested_url, captured_at);
CREATE INDEX IF NOT EXISTS captures_record ON captures (record_id);
CREATE INDEX IF NOT EXISTS captures_file ON captures (warc_file, "offset");
CREATE TABLE IF NOT EXISTS warc_files (
    name TEXT PRIMARY KEY,
    origin TEXT NOT NULL,
    size BIGINT NOT NULL,
    closed INTEGER NOT NULL,
    sha256 TEXT
);
CREATE TABLE IF NOT EXISTS import_skips (
    warc_file TEXT NOT NULL,
    "offset" BIGINT NOT NULL,
    record_type TEXT NOT NULL,
    url TEXT NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (warc_file, "offset")
);
CREATE TABLE IF NOT EXISTS records (
    warc_file TEXT NOT NULL,
    "offset" BIGINT NOT NULL,
    length BIGINT NOT NULL,
    record_type TEXT NOT NULL,
    record_id TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    PRIMARY KEY (warc_file, "offset")
);
CREATE TABLE IF NOT EXISTS link_checks (
    canonical_url TEXT PRIMARY KEY,
    checked_at TEXT NOT NULL,
    result TEXT NOT NULL,
    detail TEXT,
    first_gone_at TEXT
);
