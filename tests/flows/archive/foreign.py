"""Foreign WARC files as other tools write them (wget --warc-file, Webrecorder), made with warcio."""

from __future__ import annotations

import gzip
from io import BytesIO
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

PAGES = {
    "https://status.example.com/incidents/42": b"<html><title>Outage</title><body>down</body></html>",
    "https://status.example.com/logo.png": b"\x89PNG\r\n\x1a\n" + bytes(40),
}


def write_foreign_warc(path: Path, *, gzip_per_record: bool = True) -> None:
    """warcinfo, then request + response per page, then a revisit of the first page."""
    buffer = BytesIO()
    writer = WARCWriter(buffer, gzip=gzip_per_record, warc_version="1.0")
    writer.write_record(writer.create_warcinfo_record(path.name, {"software": "Wget/1.21.3"}))
    first = None
    for url, body in PAGES.items():
        kind = "image/png" if url.endswith(".png") else "text/html; charset=UTF-8"
        http = StatusAndHeaders("200 OK", [("Content-Type", kind), ("ETag", '"abc"')], protocol="HTTP/1.1")
        response = writer.create_warc_record(
            url, "response", payload=BytesIO(body), length=len(body), http_headers=http
        )
        request = writer.create_warc_record(
            url,
            "request",
            http_headers=StatusAndHeaders(
                "GET / HTTP/1.1", [("Host", "status.example.com")], is_http_request=True
            ),
        )
        writer.write_request_response_pair(request, response)
        first = first or response
    assert first is not None
    revisit = writer.create_revisit_record(
        first.rec_headers.get_header("WARC-Target-URI"),
        first.rec_headers.get_header("WARC-Payload-Digest"),
        first.rec_headers.get_header("WARC-Target-URI"),
        first.rec_headers.get_header("WARC-Date"),
        http_headers=StatusAndHeaders(
            "200 OK", [("Content-Type", "text/html; charset=UTF-8")], protocol="HTTP/1.1"
        ),
        warc_headers_dict={"WARC-Refers-To": first.rec_headers.get_header("WARC-Record-ID")},
    )
    writer.write_record(revisit)
    path.write_bytes(buffer.getvalue())


def write_whole_stream_gzip(path: Path) -> None:
    """A WARC gzipped as one stream (what `gzip file.warc` gives): not indexable by offset."""
    plain = path.with_suffix("")
    write_foreign_warc(plain, gzip_per_record=False)
    path.write_bytes(gzip.compress(plain.read_bytes()))
    plain.unlink()
