"""The search index: full text in English, Korean and Japanese, filters, facets, related, kept current."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from flows.library.index import LibraryIndex, Query
from flows.settings import Settings
from flows.store.atomic import write_text
from schema.errors import InputError


@pytest.fixture
def index(library_settings: Settings) -> LibraryIndex:
    with LibraryIndex.for_settings(library_settings) as opened:
        yield opened


def ids(index: LibraryIndex, **query: object) -> list[str]:
    return [item.id for item in index.search(Query(**query)).items]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("롤오버", ["IL-0101"]),  # Korean, inside "매일 노드를 롤오버하는"
        ("커널", ["IL-0101"]),  # Korean, two characters, inside "커널 문제로"
        (
            "不具合",
            ["IL-0102", "IL-0103"],
        ),  # Japanese, inside "カーネルの不具合により"; IL-0103's cause, software-bug
        ("障害", ["IL-0102"]),  # Japanese, two characters, inside "GPUノードの障害が"
        (
            "ノードイメージ",
            ["IL-0101", "IL-0102"],
        ),  # Japanese, in IL-0102's title; IL-0101 is tagged node-image
        ("커", ["IL-0101"]),  # one Korean syllable, at the start of a word
        ("障", ["IL-0102", "IL-0103"]),  # one kanji (IL-0103 by a term's Japanese alias)
        ("커널 문제로", ["IL-0101"]),  # a short and a long word, in one record's Korean text
        ("커널 kernel", ["IL-0101"]),  # tagged linux-kernel: its labels hold both
        ("롤오버 daily", []),  # words are matched within one language's text
        # The vocabulary's labels and aliases in every language: IL-0042 is tagged expired-certificate.
        ("인증서", ["IL-0042"]),
        ("証明書", ["IL-0042"]),
        ("인증서 만료", ["IL-0042"]),
        ("certificates", ["IL-0042"]),  # English stems: certificate
        ("expires", ["IL-0042"]),
        ("cert*", ["IL-0042"]),  # a prefix
        ("CERT*", ["IL-0042"]),
        ("certif", []),  # not a prefix without the star
        ("AMI 커널", ["IL-0101"]),
        ("NotReady", ["IL-0101", "IL-0103"]),
        ("expired certificate", ["IL-0042"]),  # two words, both in one record's text
        ("larkspur", ["IL-0042"]),  # the organisation, any case
        ("kernel", ["IL-0101"]),  # the Korean record's English summary
        ("nothing-like-this", []),
    ],
)
def test_full_text_finds_words_inside_sentences(index: LibraryIndex, word: str, expected: list[str]) -> None:
    assert sorted(ids(index, q=word)) == expected


def test_ranking_puts_the_title_match_first(index: LibraryIndex) -> None:
    # "kubelet" is in IL-0103's title and summary; in IL-0101 it is only a component (not text).
    result = index.search(Query(q="memory leak"))
    assert [item.id for item in result.items] == ["IL-0103"]
    assert result.items[0].score is not None and result.items[0].score > 0


def test_lang_limits_the_text_searched(index: LibraryIndex) -> None:
    assert ids(index, q="NotReady", lang="ko") == ["IL-0101"]
    assert ids(index, q="daily", lang="ko") == []
    assert ids(index, q="daily", lang="en") == ["IL-0101"]
    assert sorted(ids(index, lang="ja")) == ["IL-0102"]


def test_component_filter_returns_the_records_with_ids_and_sources(index: LibraryIndex) -> None:
    result = index.search(Query(component=("node-image",)))
    assert [item.id for item in result.items] == ["IL-0102", "IL-0101"]  # newest first
    assert result.items[1].sources[0].url == "https://tech.nimbus.example/ko/2024/ami-rollover"
    assert result.total == 2
    # Two terms of one kind: both must be there.
    assert ids(index, component=("node-image", "kubelet")) == ["IL-0101"]


def test_filters(index: LibraryIndex) -> None:
    assert ids(index, org="harbor-bank") == ["IL-0103", "IL-0104"]
    assert ids(index, org="Harbor Bank") == ["IL-0103", "IL-0104"]
    assert ids(index, since="2024-01-01", until="2025-12-31") == ["IL-0102", "IL-0101"]
    assert ids(index, root_cause=("expired-certificate",)) == ["IL-0042"]
    assert ids(index, symptom=("nodes-not-ready",), severity=("sev1",)) == ["IL-0103"]
    assert ids(index, contributing=("monitoring-gap",)) == ["IL-0042"]
    assert ids(index, domain=("dns",)) == ["IL-0104"]
    assert ids(index, q="NotReady", domain=("payments",)) == ["IL-0103"]
    assert ids(index, sort="oldest")[0] == "IL-0104"


def test_facets_count_the_matching_records(index: LibraryIndex) -> None:
    facets = index.search(Query(domain=("kubernetes",))).facets
    counts = {kind: {f.term: f.count for f in values} for kind, values in facets.items()}
    assert counts["component"]["kubelet"] == 2
    assert counts["component"]["node-image"] == 2
    assert counts["root_cause"] == {"upgrade-migration": 2, "software-bug": 1}
    assert counts["org"] == {"harbor-bank": 1, "nimbus-korea": 1, "sakura-cloud-works": 1}
    assert counts["lang"] == {"en": 2, "ko": 1, "ja": 1}
    assert counts["year"] == {"2023": 1, "2024": 1, "2025": 1}
    kubelet = next(f for f in facets["component"] if f.term == "kubelet")
    assert set(kubelet.labels) >= {"en", "ko"}


def test_an_unknown_term_is_one_clear_error(index: LibraryIndex) -> None:
    with pytest.raises(InputError, match="did you mean"):
        index.search(Query(component=("node",)))


def test_paging(index: LibraryIndex) -> None:
    first = index.search(Query(page_size=2))
    second = index.search(Query(page_size=2, page=2))
    assert first.total == second.total == 5
    assert len(first.items) == 2 and len(second.items) == 2
    assert not {i.id for i in first.items} & {i.id for i in second.items}


def test_related_share_cause_or_components_with_why(index: LibraryIndex) -> None:
    incident = index.incident("IL-0101")
    assert incident is not None
    related = {r.id: r for r in incident.related}
    assert list(related) == ["IL-0102", "IL-0103"]  # cause + component first, then one component
    assert related["IL-0102"].why[0] == "same root cause: upgrade-migration"
    assert "shared components: kubelet" in related["IL-0103"].why
    assert index.incident("IL-0999") is None


def test_topic_lists_records_newest_first(index: LibraryIndex) -> None:
    topic = index.topic("component", "kubelet")
    assert [item.id for item in topic.items] == ["IL-0101", "IL-0103"]
    assert topic.labels["en"] and topic.labels["ko"]
    assert index.topic("components", "kubelet").total == 2  # the vocabulary's name works too
    with pytest.raises(InputError):
        index.topic("colour", "red")


def _edit(path: Path, **changes: object) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(changes)
    write_text(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def test_edits_by_hand_are_picked_up_on_the_next_query(library_settings: Settings) -> None:
    records = library_settings.records_dir
    with LibraryIndex.for_settings(library_settings, rescan_after=0) as index:
        assert index.refresh().indexed == 5
        assert index.refresh().changed is False

        _edit(records / "IL-0104.json", title={"en": "A DNS zone change took the login service down"})
        assert ids(index, q="took the login") == ["IL-0104"]

        # Same bytes, new mtime (a git checkout of the same content): not re-parsed.
        stat = (records / "IL-0103.json").stat()
        os.utime(records / "IL-0103.json", ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
        stats = index.refresh()
        assert (stats.indexed, stats.touched) == (0, 1)
        (records / "IL-0042.json").unlink()
        stats = index.refresh()
        assert (stats.indexed, stats.removed) == (0, 1)
        assert index.get("IL-0042") is None

    # Another process (a fresh index object) sees the same, and a touched file costs no re-parse.
    with LibraryIndex.for_settings(library_settings) as other:
        os.utime(records / "IL-0101.json")
        stats = other.refresh()
        assert (stats.indexed, stats.touched) == (0, 1)
        assert other.count() == 4


def test_changes_by_rename_show_at_once_and_edits_in_place_within_the_rescan_interval(
    library_settings: Settings,
) -> None:
    records = library_settings.records_dir
    with LibraryIndex.for_settings(library_settings, rescan_after=0.5) as index:
        assert ids(index, q="zone change") == ["IL-0104"]
        # Written by rename (our stores, git, most editors): the folder changes, the next query sees it.
        data = json.loads((records / "IL-0104.json").read_text(encoding="utf-8"))
        data["title"] = {"en": "A DNS zone edit removed the login records"}
        write_text(records / "IL-0104.json", json.dumps(data, indent=2) + "\n")
        assert ids(index, q="zone edit") == ["IL-0104"]
        # Written in place: the folder does not change; a query once the last scan is 0.5 s old
        # starts a rescan in the background, and the queries after it see the edit.
        data["title"] = {"en": "A DNS zone typo removed the login records"}
        (records / "IL-0104.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        time.sleep(0.6)
        deadline = time.monotonic() + 10
        while ids(index, q="zone typo") != ["IL-0104"]:
            assert time.monotonic() < deadline, "an edit in place was not picked up"
            time.sleep(0.05)


def test_a_bad_file_is_named_and_kept_out(library_settings: Settings) -> None:
    records = library_settings.records_dir
    (records / "IL-0200.json").write_text('{"id": "IL-0200", "org": "X"}', encoding="utf-8")
    (records / "IL-0201.json").write_text("not json", encoding="utf-8")
    _edit(records / "IL-0104.json", id="IL-0105")
    with LibraryIndex.for_settings(library_settings) as index:
        stats = index.refresh()
        assert stats.problems == 3
        problems = dict(index.problems())
        assert set(problems) == {"IL-0104.json", "IL-0200.json", "IL-0201.json"}
        assert "does not match its file name" in problems["IL-0104.json"]
        assert index.count() == 4
        # Fixed: indexed on the next query.
        _edit(records / "IL-0104.json", id="IL-0104")
        assert "IL-0104" in ids(index, domain=("dns",))


def test_the_index_is_a_cache(library_settings: Settings) -> None:
    with LibraryIndex.for_settings(library_settings) as index:
        index.refresh()
    (library_settings.raw_dir / "library.sqlite").unlink()
    for suffix in ("-wal", "-shm"):
        (library_settings.raw_dir / f"library.sqlite{suffix}").unlink(missing_ok=True)
    with LibraryIndex.for_settings(library_settings) as index:
        assert index.count() == 5
        assert index.rebuild().indexed == 5


def test_bit_sets() -> None:
    from flows.library import bits

    assert bits.positions(bits.to_mask([0, 3, 9, 4095], 4096)) == [0, 3, 9, 4095]
    assert bits.positions(0) == []
    assert bits.positions(bits.span(2, 5)) == [2, 3, 4]
    assert bits.span(5, 5) == 0


def test_related_is_flows_related_ranking_over_all_records(index: LibraryIndex) -> None:
    from flows.related import rank_related

    everything = list(index.records())
    for record in everything:
        expected = rank_related(record, everything, exclude=record.id, limit=2)
        assert [r.id for r in index.related(record, limit=2)] == [r.record_id for r in expected]


def test_a_damaged_index_is_rebuilt(library_settings: Settings) -> None:
    path = library_settings.raw_dir / "library.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not a database" * 100)
    with LibraryIndex.for_settings(library_settings) as index:
        assert index.count() == 5


@pytest.mark.parametrize(
    "q",
    [
        '"',
        "'",
        "AND",
        "OR NOT",
        "a*",
        "(",
        ")",
        "NEAR(a b)",
        "title:x",
        "🔥",
        "-",
        "^",
        "a " * 200,
        "x" * 5000,
    ],
)
def test_any_query_text_is_words_never_syntax(index: LibraryIndex, q: str) -> None:
    index.search(Query(q=q))  # no FTS5 syntax error reaches the caller


def test_two_processes_share_the_index(library_settings: Settings) -> None:
    records = library_settings.records_dir
    with (
        LibraryIndex.for_settings(library_settings) as first,
        LibraryIndex.for_settings(library_settings) as second,
    ):
        assert ids(first, component=("dns",)) == ["IL-0104"]
        assert ids(second, component=("dns",)) == ["IL-0104"]
        _edit(records / "IL-0103.json", components=["kubelet", "dns"])
        assert first.refresh().indexed == 1
        # The second sees the first's update (and indexes nothing again).
        assert ids(second, component=("dns",)) == ["IL-0103", "IL-0104"]
        assert second.refresh().indexed == 0


def test_results_carry_a_snippet_of_where_the_words_matched(index: LibraryIndex) -> None:
    [item] = index.search(Query(q="leak")).items
    assert item.snippet is not None and "<mark>leak</mark>" in item.snippet
    [item] = index.search(Query(q="인증서")).items  # in IL-0042's Korean summary
    assert item.snippet is not None and "<mark>인증서</mark>가 만료되어" in item.snippet
    # Found through its vocabulary term's Japanese alias: the snippet names the term.
    [item] = index.search(Query(q="証明書")).items
    assert item.snippet is not None and item.snippet.startswith("expired-certificate: ")
    assert "<mark>証明書</mark>" in item.snippet
    assert all(item.snippet is None for item in index.search(Query()).items)


def test_related_are_at_most_five_and_never_tied_by_a_generic_term_alone(library_settings: Settings) -> None:
    from tests.flows.library.records import record

    records = library_settings.records_dir
    for n in range(201, 209):  # eight more kubelet incidents
        each = record(
            f"IL-0{n}", root_cause="capacity", components=["kubelet"], date=f"2020-01-{n - 190:02d}"
        )
        (records / f"IL-0{n}.json").write_text(json.dumps(each), encoding="utf-8")
    for n in (301, 302):  # two that share only monitoring (a generic component) and config-change
        each = record(f"IL-0{n}", root_cause="config-change", components=["monitoring"])
        (records / f"IL-0{n}.json").write_text(json.dumps(each), encoding="utf-8")
    with LibraryIndex.for_settings(library_settings) as index:
        found = index.incident("IL-0103")
        assert found is not None and len(found.related) == 5
        assert all(r.why for r in found.related)
        found = index.incident("IL-0301")
        assert found is not None and found.related == []
