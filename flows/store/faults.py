"""Fault injection points for the tests: `INCIDENTS_FAULT` names one, the code calls `after()` or `before()`.

    INCIDENTS_FAULT=after:record     kill -9 this process right after the step named `record`
    INCIDENTS_FAULT=fail:draft       the step named `draft` fails as on a full disk (ENOSPC)
    INCIDENTS_FAULT=torn:audit       the audit line is half written, then kill -9 (a torn tail)

The points, in one list (each is one `faults.after(STEP)` / `faults.before(STEP)` line):

    decisions (flows/store/journal.py, records.py, audit.py: after: and fail:)
        reserved    the record id is reserved (.IL-NNNN.reserved)
        intent      the decision's journal entry is on disk
        record      the record file is written (also history, gone: lifecycle's steps)
        draft       the draft file is saved
        audit       the audit line is appended (torn:audit tears it)
        steps       every step is done, the intent not yet removed
    ingest (after: only)
        warc        a batch of WARC records is fsynced, its index rows not yet committed
                    (flows/archive/warc.py)
        index       the batch's archive index rows are committed (flows/archive/warc.py)
        queued      a page's draft is queued, the ledger not yet told (flows/stages.py)
        ledger      the page's ledger entry is written (flows/stages.py)
        discovery   the run's discovered entries are marked seen (flows/discover.py)

Several points may be given, separated by commas. Unset (always, outside the tests) it costs
one dictionary look-up per point. The kill is a real SIGKILL of this process: nothing is
flushed, no `finally` runs, exactly as when the OOM killer or `kill -9` strikes.
"""

from __future__ import annotations

import errno
import os
import signal

VARIABLE = "INCIDENTS_FAULT"


def _wanted(kind: str, step: str) -> bool:
    spec = os.environ.get(VARIABLE)
    if not spec:
        return False
    return f"{kind}:{step}" in {part.strip() for part in spec.split(",")}


def kill_now() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def after(step: str) -> None:
    """Called right after `step` is done: dies there when the tests ask for it."""
    if _wanted("after", step):
        kill_now()


def before(step: str, path: object = None) -> None:
    """Called right before `step`: fails there like a full disk when the tests ask for it."""
    if _wanted("fail", step):
        raise OSError(errno.ENOSPC, "No space left on device (injected)", str(path) if path else None)


def torn(step: str) -> bool:
    """True when the tests want `step`'s write torn (half written, then a kill)."""
    return _wanted("torn", step)
