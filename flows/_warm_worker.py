"""Preloaded by the extraction workers' fork server (flows/pool.py): importing it warms the
drafter in the server, once, so every worker forked from it starts warm."""

from flows.pool import warm

warm()
