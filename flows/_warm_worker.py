"""Preloaded by the extraction workers' fork server (flows/pool.py): importing it warms the
drafter in the server, once, so every worker forked from it starts warm."""

import gc

from flows.pool import warm

warm()
# What the warm-up built lives as long as the worker: frozen, the collector of every forked
# worker no longer walks it (about 2% of a worker's CPU), nor writes to its pages.
gc.freeze()
