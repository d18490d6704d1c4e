"""Plain-file stores of the data directory: records/, records/queue/, records/audit.jsonl."""
