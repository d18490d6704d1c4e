-- The review queue's index and record ids, in a shared database only (on one machine the queue
-- folder and records/ are the index, and ids are allocated under a file lock).
-- record_ids: one counter row, locked by the UPDATE that takes the next id (dense across hosts).
CREATE TABLE IF NOT EXISTS record_ids (name TEXT PRIMARY KEY, last INTEGER NOT NULL);
INSERT INTO record_ids (name, last) VALUES ('IL', 0) ON CONFLICT DO NOTHING;
-- queue: every draft in records/queue/, its status and version (the files stay the truth).
CREATE TABLE IF NOT EXISTS queue (draft_id TEXT PRIMARY KEY, status TEXT NOT NULL, version INTEGER NOT NULL,
    updated_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS queue_status ON queue (status, draft_id);
