"""Pure models and vocabularies of incident-ingest: no I/O beyond reading its own data files."""
