"""WARC file ownership: each writing process appends only to files named by its host and pid.

Shared storage then needs no lock across hosts for appending: writers never share a file.
Every reader (verify, cdxj-indexer, warcio, export) reads all of them whoever wrote them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from flows.archive import Archive, verify
from flows.archive.warc import Writer, writer_host, writer_of
from flows.settings import Settings
from tests.flows.archive.helpers import warc_files, warcio

ROOT = Path(__file__).parents[3]
CDXJ_INDEXER = str(Path(sys.executable).with_name("cdxj-indexer"))

# A writer process: stores pages named after itself until told to stop (a line on stdin) or
# until it has written `count` of them; prints each page's number once it is archived.
WRITER = textwrap.dedent(
    """
    import os
    import sys
    from pathlib import Path
    import flows.archive.warc as warc
    if len(sys.argv) > 4:
        warc.writer_host = lambda: sys.argv[4]  # pretend to run on another machine
    from flows.archive import Archive
    from flows.settings import Settings
    data_dir, who, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    max_bytes = 30_000 if count else 100 << 20  # rotate often, or keep one file open
    with Archive(Settings(data_dir=data_dir, warc_max_bytes=max_bytes)) as archive:
        for n in range(count):
            archive.store_resource(b"<p>%d</p>" % n + os.urandom(4000).hex().encode(),
                                   url=f"https://example.org/{who}/{n}", content_type="text/html")
            print(n, flush=True)
        if count == 0:  # write until stopped, bigger records so that a kill lands mid-write
            n = 0
            while True:
                archive.store_resource(b"<p>%d</p>" % n + os.urandom(400_000),
                                       url=f"https://example.org/{who}/{n}", content_type="text/html")
                print(n, flush=True)
                n += 1
    """
)


def _writer(data_dir: Path, who: str, count: int, *host: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(data_dir), who, str(count), *host],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )


def _targets(path: Path) -> list[str]:
    with open(path, "rb") as fh:
        return [
            str(r.rec_headers.get_header("WARC-Target-URI"))
            for r in ArchiveIterator(fh)
            if r.rec_type != "warcinfo"
        ]


def test_names_say_host_and_process_and_sort_in_writing_order() -> None:
    name = "warc/incidents-20261207153000123456-node-7.example.org-4242-00012.warc.gz"
    assert writer_of(name) == Writer("20261207153000123456", "node-7.example.org", 4242)
    # files from before names carried the host: written on this machine, under the shared lock
    assert writer_of("warc/incidents-20260101000000000000-4242-a1b2c3.warc.gz") == Writer(
        "20260101000000000000", None, 4242
    )
    assert writer_of("imported/0123456789ab-crawl.warc.gz") is None
    assert set(writer_host()) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def test_two_processes_write_concurrently_each_to_files_it_owns(data_dir: Path) -> None:
    procs = {who: _writer(data_dir, who, 25) for who in ("a", "b")}
    assert [p.wait(timeout=180) for p in procs.values()] == [0, 0]
    files = warc_files(data_dir / "raw")
    writers: dict[str, set[Writer | None]] = {"a": set(), "b": set()}
    for path in files:
        writer = writer_of(path.name)
        assert writer is not None and writer.host == writer_host(), path.name
        targets = _targets(path)
        who = {url.split("/")[3] for url in targets}
        assert len(who) == 1, f"{path.name} holds records of {who}"  # one writer per file
        writers[who.pop()].add(writer)
    for who, proc in procs.items():
        assert writers[who] == {Writer(next(iter(writers[who])).stamp, writer_host(), proc.pid)}  # type: ignore[union-attr]
        mine = [p for p in files if writer_of(p.name) in writers[who]]
        assert len(mine) > 1  # rotated at 30 kB: several files, each its writer's alone
        # in name order, a writer's files hold its records in the order it wrote them
        numbers = [int(url.rsplit("/", 1)[1]) for p in sorted(mine) for url in _targets(p)]
        assert numbers == list(range(25))
    with Archive(Settings(data_dir=data_dir)) as archive:
        assert len(archive.captures()) == 50
        assert verify(archive.raw, archive.index).ok
        rows = archive.index.files()
        assert {row["name"] for row in rows} == {f"warc/{p.name}" for p in files}
    checked = warcio("check", *map(str, files))
    assert checked.returncode == 0, checked.stdout
    indexed = subprocess.run(
        [CDXJ_INDEXER, *map(str, files)], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    urls = {json.loads(line.split(" ", 2)[2])["url"] for line in indexed.splitlines()}
    assert urls == {f"https://example.org/{who}/{n}" for who in "ab" for n in range(25)}


def test_a_live_writers_open_file_is_never_touched(data_dir: Path) -> None:
    proc = _writer(data_dir, "live", 0)
    assert proc.stdout is not None
    proc.stdout.readline()  # it holds an open file now, and keeps writing to it
    try:
        with Archive(Settings(data_dir=data_dir)) as archive:
            mine = archive.store_resource(
                b"<p>mine</p>", url="https://example.org/me/0", content_type="text/html"
            )
            theirs = [row for row in archive.index.files() if row["name"] != mine.warc_file]
        assert writer_of(mine.warc_file) == Writer(
            writer_of(mine.warc_file).stamp, writer_host(), os.getpid()
        )  # type: ignore[union-attr]
        assert theirs and all(writer_of(row["name"]).pid == proc.pid for row in theirs)  # type: ignore[union-attr]
        assert not all(row["closed"] for row in theirs)  # its open file stayed open
        proc.stdout.readline()  # and it went on writing after ours
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)


def test_a_gone_writers_file_is_closed_on_its_host_and_left_alone_elsewhere(data_dir: Path) -> None:
    here = _writer(data_dir, "here", 0)
    away = _writer(data_dir, "away", 0, "elsewhere.example")
    for proc in (here, away):
        assert proc.stdout is not None
        for _ in range(3):
            proc.stdout.readline()
    for proc in (here, away):  # killed wherever they are, maybe mid-write
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    with Archive(Settings(data_dir=data_dir)) as archive:
        archive.store_resource(b"<p>after</p>", url="https://example.org/after", content_type="text/html")
        rows = {row["name"]: row for row in archive.index.files()}
        problems = verify(archive.raw, archive.index).problems or []
    for name, row in rows.items():
        writer = writer_of(name)
        assert writer is not None
        if writer.pid == here.pid:  # gone from this host: its torn tail cut, closed, read-only
            assert row["closed"] and not (data_dir / "raw" / name).stat().st_mode & 0o222
        elif writer.host == "elsewhere.example":  # this host cannot tell: a writer there closes it
            assert not row["closed"]
    # the only problem verify can still see is a torn tail in the other host's open file
    assert all(
        writer_of(p.warc_file).host == "elsewhere.example" and "interrupted write" in p.problem  # type: ignore[union-attr]
        for p in problems
    ), problems


def test_reindex_leaves_each_writers_newest_file_open_for_its_host_to_close(data_dir: Path) -> None:
    from flows.archive.reindex import reindex

    procs = [_writer(data_dir, who, 0) for who in ("x", "y")]
    for proc in procs:
        assert proc.stdout is not None
        for _ in range(3):
            proc.stdout.readline()
    for proc in procs:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    settings = Settings(data_dir=data_dir)
    reindex(settings.raw_dir, settings.warc_max_bytes)
    with Archive(settings) as archive:
        still_open = {writer_of(row["name"]).pid for row in archive.index.files() if not row["closed"]}  # type: ignore[union-attr]
        assert still_open == {proc.pid for proc in procs}  # not only the newest file of all
        archive.store_resource(b"<p>after</p>", url="https://example.org/after", content_type="text/html")
        # both writers are gone from this host: their files closed, any torn tail cut
        assert verify(archive.raw, archive.index).ok
        assert len(archive.captures()) >= 7


def test_export_packages_every_writers_files(data_dir: Path) -> None:
    import zipfile

    from flows.archive.wacz import export_wacz

    procs = [_writer(data_dir, who, 8) for who in ("p", "q")]
    assert [p.wait(timeout=180) for p in procs] == [0, 0]
    files = warc_files(data_dir / "raw")
    assert len({writer_of(p.name) for p in files}) == 2
    with Archive(Settings(data_dir=data_dir)) as archive:
        assert export_wacz(archive, data_dir / "out.wacz") == len(files)
    with zipfile.ZipFile(data_dir / "out.wacz") as wacz:
        packed = {Path(n).name for n in wacz.namelist() if n.startswith("archive/")}
    assert packed == {p.name for p in files}
