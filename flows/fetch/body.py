"""Streaming a response body to disk under a size cap, on both wire and decoded bytes."""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterable
from typing import BinaryIO

from schema.errors import FetchError

HEAD_BYTES = 64 * 1024  # decoded bytes kept in memory for rel=canonical and sniffing
_STEP = 256 * 1024  # decoded bytes produced per inflate call: bounds memory on a gzip bomb


class BodyTooLarge(FetchError):
    """The body passed the size cap; nothing of it is kept."""


class _Inflater:
    """Incremental gzip/deflate decoding that never produces more than the cap."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._gzip = encoding in ("gzip", "x-gzip")
        self._d = self._new()
        self._raw_deflate_tried = False

    def _new(self) -> zlib._Decompress:
        return zlib.decompressobj(16 + zlib.MAX_WBITS if self._gzip else zlib.MAX_WBITS)

    def feed(self, data: bytes, room: int) -> Iterable[bytes]:
        """Decoded pieces of `data`; stops once more than `room` bytes came out."""
        produced = 0
        while data and produced <= room:
            try:
                out = self._d.decompress(data, min(_STEP, room - produced + 1))
            except zlib.error:
                if self._gzip or self._raw_deflate_tried:
                    raise
                # "deflate" is sent both zlib-wrapped (as specified) and raw (as IIS did).
                self._raw_deflate_tried = True
                self._d = zlib.decompressobj(-zlib.MAX_WBITS)
                continue
            self._raw_deflate_tried = True
            produced += len(out)
            if out:
                yield out
            if self._d.unconsumed_tail:
                data = self._d.unconsumed_tail
            elif self._d.eof and self._d.unused_data and self._gzip:
                data = self._d.unused_data  # a further gzip member
                self._d = self._new()
            else:
                data = b""


class BodySink:
    """Writes wire bytes to `out` and tracks the decoded size, digest and first bytes."""

    def __init__(
        self, out: BinaryIO, *, encoding: str, cap: int, url: str, head_limit: int = HEAD_BYTES
    ) -> None:
        encoding = encoding.strip().lower()
        if encoding in ("", "identity"):
            self._inflater: _Inflater | None = None
        elif encoding in ("gzip", "x-gzip", "deflate"):
            self._inflater = _Inflater(encoding)
        else:
            raise FetchError(
                f"unsupported Content-Encoding {encoding!r} from {url}; "
                "the server ignored our Accept-Encoding (gzip, deflate)"
            )
        self._out = out
        self._cap = cap
        self._url = url
        self.wire_size = 0
        self.decoded_size = 0
        self.decoded_sha256 = hashlib.sha256()
        self.head = bytearray()
        self._head_limit = head_limit

    def _decoded(self, piece: bytes) -> None:
        self.decoded_size += len(piece)
        if self.decoded_size > self._cap:
            raise BodyTooLarge(
                f"body of {self._url} inflates past the cap of {self._cap} bytes "
                f"(Content-Encoding {self._inflater.encoding if self._inflater else 'identity'}); "
                "raise INCIDENTS_MAX_BODY_BYTES if the page is genuine"
            )
        self.decoded_sha256.update(piece)
        if len(self.head) < self._head_limit:
            self.head += piece[: self._head_limit - len(self.head)]

    def write(self, chunk: bytes) -> None:
        self.wire_size += len(chunk)
        if self.wire_size > self._cap:
            raise BodyTooLarge(
                f"body of {self._url} is larger than the cap of {self._cap} bytes; "
                "raise INCIDENTS_MAX_BODY_BYTES if the page is genuine"
            )
        self._out.write(chunk)
        if self._inflater is None:
            self._decoded(chunk)
            return
        try:
            for piece in self._inflater.feed(chunk, self._cap - self.decoded_size):
                self._decoded(piece)
        except zlib.error as exc:
            raise FetchError(
                f"body of {self._url} is not valid {self._inflater.encoding} ({exc}); "
                "the server sent corrupt data"
            ) from exc
