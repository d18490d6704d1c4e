"""Reading one record back from a WARC file at a known offset."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from schema.errors import ArchiveError


@contextmanager
def record_at(path: Path, offset: int) -> Iterator[Any]:
    """The WARC record starting at `offset`; ArchiveError naming file and offset if there is none."""
    if not path.exists():
        raise ArchiveError(
            f"{path} is missing; restore raw/ from a backup, then run `incidents archive verify`"
        )
    with open(path, "rb") as fh:
        fh.seek(offset)
        try:
            record = next(iter(ArchiveIterator(fh)), None)
        except (ArchiveLoadFailed, OSError, EOFError, ValueError) as exc:
            brief = str(exc).split(", first line", 1)[0][:120]
            raise ArchiveError(
                f"{path} offset {offset}: no readable WARC record ({brief}); run `incidents archive verify`"
            ) from exc
        if record is None:
            raise ArchiveError(f"{path} offset {offset}: no WARC record there (file truncated?)")
        yield record


def read_content(path: Path, offset: int) -> bytes:
    """The record's payload as a browser would see it: de-chunked and content-decoded."""
    with record_at(path, offset) as record:
        try:
            return bytes(record.content_stream().read())
        except Exception as exc:  # zlib, EOF, brotli: any damage to the stored bytes
            raise ArchiveError(f"{path} offset {offset}: payload cannot be read ({exc})") from exc
