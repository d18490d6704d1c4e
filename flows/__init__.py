"""I/O and orchestration: fetching, archiving, stores, Prefect flows, the CLI."""
