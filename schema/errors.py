"""The exception tree every layer raises; the CLI alone turns it into exit codes.

IngestError                 anything the user must act on (exit 1)
├── InputError              a path, file or argument we cannot use (empty, binary, missing)
├── RecordInvalid           a record, draft or edit that fails the schema or vocabulary
├── FetchError              a source that could not be fetched (timeout, 404, oversize, ...)
├── ArchiveError            raw/ is damaged or an archived capture cannot be read
├── ExtractionError         no article text could be extracted from a page
├── ReviewError             a review decision that cannot be taken (unknown id, decided)
├── DataDirError            the data directory cannot be used now (full, read-only, I/O error, locked)
├── DatabaseError           INCIDENTS_DATABASE_URL's server is unreachable or its schema is old (exit 2)
└── SkipSource              a deliberate skip (robots.txt, not a postmortem), not a failure
"""

from __future__ import annotations


class IngestError(Exception):
    """Base of all errors the project raises on purpose; the message says what to do."""

    exit_code = 1


class InputError(IngestError):
    """A file, path or argument we were handed cannot be used as it is."""


class RecordInvalid(IngestError):
    """A record, draft or edit fails validation; `problems` holds (field, why) pairs."""

    def __init__(self, message: str, problems: list[tuple[str, str]] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or []


class FetchError(IngestError):
    """A source could not be fetched; the message names the URL and the cause."""


class ArchiveError(IngestError):
    """raw/ is damaged, or a capture that a draft points at cannot be read."""


class ExtractionError(IngestError):
    """A page yielded no article text (empty, binary, only navigation, truncated)."""


class ReviewError(IngestError):
    """A review action is not possible in the draft's current state."""


class DataDirError(IngestError):
    """The data directory failed under us (full, read-only, an I/O error, a lock held past its
    timeout), not the program: the message names it and what to do (flows/failures.py)."""


class DatabaseError(IngestError):
    """The configured database (INCIDENTS_DATABASE_URL) cannot be used as it is: unreachable, or
    its schema is older or newer than this program's. A configuration problem: exit 2."""

    exit_code = 2


class SkipSource(IngestError):
    """A source deliberately left out (robots.txt, not a postmortem); counted apart from errors."""
