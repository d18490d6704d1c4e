-- raw/index.sqlite as the first release made it (every statement IF NOT EXISTS, so an index
-- written before migrations existed takes this as its version 1 unchanged).
CREATE TABLE IF NOT EXISTS captures (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    canonical_url TEXT NOT NULL,
    captured_at TEXT NOT NULL,
    status INTEGER,
    mime TEXT,
    payload_sha256 TEXT,
    payload_digest TEXT,
    warc_file TEXT NOT NULL,
    offset INTEGER NOT NULL,
    length INTEGER NOT NULL,
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
-- latest() asks for a URL as canonical, as given or as first requested (before redirects): one
-- OR over three columns, which SQLite answers from indexes only when all three have one (without
-- this, every fetch scanned the whole table). record_id: the importer's revisit lookups.
CREATE INDEX IF NOT EXISTS captures_requested ON captures (requested_url, captured_at);
CREATE INDEX IF NOT EXISTS captures_record ON captures (record_id);
CREATE TABLE IF NOT EXISTS warc_files (
    name TEXT PRIMARY KEY,      -- relative to raw/
    origin TEXT NOT NULL,       -- written | imported
    size INTEGER NOT NULL,      -- bytes of complete records; a longer file has a torn tail
    closed INTEGER NOT NULL,    -- 1: never appended to again
    sha256 TEXT                 -- imported files: digest of the file as copied in
);
-- Records of imported files that are not captures of web pages (metadata://, dns:, directory
-- listings...), and why; added after the first release: CREATE IF NOT EXISTS is its migration.
CREATE TABLE IF NOT EXISTS import_skips (
    warc_file TEXT NOT NULL,
    offset INTEGER NOT NULL,
    record_type TEXT NOT NULL,
    url TEXT NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (warc_file, offset)
);
-- Every record we write, of every type (warcinfo, request, response, metadata...): where it is
-- and the sha256 of its stored bytes (the gzip member), so `archive verify` catches a forged or
-- damaged record in a file still open for appending (a closed file also has its whole sha256).
-- Added after the first release: records written before it are checked as they were.
CREATE TABLE IF NOT EXISTS records (
    warc_file TEXT NOT NULL,
    offset INTEGER NOT NULL,
    length INTEGER NOT NULL,
    record_type TEXT NOT NULL,
    record_id TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    PRIMARY KEY (warc_file, offset)
);
CREATE TABLE IF NOT EXISTS link_checks (
    canonical_url TEXT PRIMARY KEY,
    checked_at TEXT NOT NULL,
    result TEXT NOT NULL,       -- unchanged | changed | gone | failed
    detail TEXT,
    first_gone_at TEXT
);
