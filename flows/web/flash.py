"""Status messages after an action: a fixed table of codes, filled only with checked ids.

A redirect carries `?done=<code>` and the ids the message names (`draft`, `record`, `n`, ...);
the text is ours. Any other `done` value, or an id that is not one, shows nothing: a link
cannot put its own sentence in the status bar."""

from __future__ import annotations

import hmac
import re
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from starlette.datastructures import QueryParams

_PARAMS: dict[str, re.Pattern[str]] = {
    "draft": re.compile(r"d-[0-9a-f]{16}"),
    "record": re.compile(r"IL-\d{4,}"),
    "version": re.compile(r"\d{1,9}"),
    "n": re.compile(r"\d{1,6}"),
    "failed": re.compile(r"\d{1,6}"),
    "batch": re.compile(r"[0-9a-f]{32}"),
}

MESSAGES: dict[str, str] = {
    "approved": "Approved {draft} as {record}.",
    "rejected": "Rejected {draft}.",
    "saved": "Saved your edits to {draft} (version {version}); it is still pending.",
    "reopened": "Reopened {draft}: it is back in the queue.",
    "source-added": "Approved {draft} as another source of {record}.",
    "corrected": "Corrected {record}: a new version, the earlier one kept in its history.",
    "bulk-rejected": "Rejected {n} selected {drafts}.",
    "bulk-rejected-some": "Rejected {n} selected {drafts}; {failed} were not pending any more.",
    "bulk-undone": "Undid the bulk rejection: reopened {n} {drafts}.",
    "bulk-undone-some": "Undid the bulk rejection: reopened {n} {drafts}; {failed} had changed since.",
    "named": "Decisions from this browser are now taken in your name.",
    "unskipped-draft": "Drafted {draft} from the skipped pages (doubtful lane).",
    "unskipped": "Drafted {n} skipped {pages} into the doubtful lane.",
}


@dataclass(frozen=True)
class Flash:
    code: str
    text: str
    record: str | None = None
    batch: str | None = None


def flash_url(path: str, code: str, **ids: object) -> str:
    """`path` with `done=code` and the ids its message needs (unknown codes are a programming error)."""
    if code not in MESSAGES:
        raise KeyError(code)
    query = urlencode({"done": code, **{k: str(v) for k, v in ids.items()}})
    return f"{path}{'&' if '?' in path else '?'}{query}"


def flash_of(params: QueryParams) -> Flash | None:
    """The message a request's query names, or None (an unknown code or a malformed id)."""
    code = params.get("done", "")
    template = MESSAGES.get(code)
    if template is None:
        return None
    values: dict[str, str] = {}
    for name, pattern in _PARAMS.items():
        value = params.get(name)
        if value is not None:
            if not pattern.fullmatch(value):
                return None
            values[name] = value
    if "n" in values:  # "1 draft", "2 drafts"
        plural = "" if values["n"] == "1" else "s"
        values |= {"drafts": "draft" + plural, "pages": "page" + plural}
    try:
        text = template.format(**values)
    except KeyError:
        return None  # a code without the ids its message names
    return Flash(code, text, values.get("record"), values.get("batch"))


class Stash:
    """Forms kept for one redirect (a reviewer's edits after a version conflict, the drafts of a
    bulk rejection for its undo): in memory, the newest 500, each readable only by the browser
    (CSRF cookie) that left it. A server restart forgets them."""

    def __init__(self, size: int = 500) -> None:
        self.size = size
        self._items: OrderedDict[str, tuple[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, owner: str, value: Any) -> str:
        key = secrets.token_hex(16)
        with self._lock:
            self._items[key] = (owner, value)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return key

    def get(self, owner: str, key: str) -> Any | None:
        with self._lock:
            found = self._items.get(key)
        if found is None or not owner or not hmac.compare_digest(found[0], owner):
            return None
        return found[1]

    def pop(self, owner: str, key: str) -> Any | None:
        value = self.get(owner, key)
        if value is not None:
            with self._lock:
                self._items.pop(key, None)
        return value
