"""A Dask worker preload that makes the worker's Python unable to import incident-ingest, as on a
machine where it was never installed (tests/flows/test_dask_pool.py)."""

import sys


class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"flows", "extractors", "schema"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())
