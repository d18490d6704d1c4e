from __future__ import annotations

from pathlib import Path

import pytest

from flows.store.queue import QueueStore
from schema.errors import ReviewError
from tests.flows.factories import make_draft


def test_add_then_duplicate(tmp_path: Path) -> None:
    queue = QueueStore(tmp_path / "queue")
    draft = make_draft(1)
    assert queue.add(draft) is True
    assert queue.add(draft) is False
    assert queue.ids() == [draft.draft_id]
    assert queue.get(draft.draft_id) == draft
    assert sorted(p.name for p in (tmp_path / "queue").iterdir() if not p.name.startswith(".queue")) == [
        f"{draft.draft_id}.json"
    ]


def test_prefix_lookup_and_unknown_id(tmp_path: Path) -> None:
    queue = QueueStore(tmp_path)
    draft = make_draft(2)
    queue.add(draft)
    assert queue.resolve(draft.draft_id[:8]) == draft.draft_id
    with pytest.raises(ReviewError, match="no draft 'd-nothere'"):
        queue.get("d-nothere")


def test_save_bumps_version_and_refuses_stale_writes(tmp_path: Path) -> None:
    queue = QueueStore(tmp_path)
    draft = make_draft(3)
    queue.add(draft)
    saved = queue.save(draft.model_copy(update={"status": "rejected"}), expected_version=1)
    assert saved.version == 2
    with pytest.raises(ReviewError, match="changed meanwhile"):
        queue.save(draft, expected_version=1)
    assert queue.get(draft.draft_id).status == "rejected"


def test_filter_by_status(tmp_path: Path) -> None:
    queue = QueueStore(tmp_path)
    for n in range(3):
        queue.add(make_draft(n))
    first = queue.get(queue.ids()[0])
    queue.save(first.model_copy(update={"status": "approved"}), expected_version=1)
    assert len(list(queue.drafts("pending"))) == 2
    assert [d.draft_id for d in queue.drafts("approved")] == [first.draft_id]


def test_save_given_the_current_draft_writes_the_same_and_checks_its_version(tmp_path: Path) -> None:
    # `current` (read by a caller holding the draft's lock) spares the re-read, nothing else.
    given, read = QueueStore(tmp_path / "given"), QueueStore(tmp_path / "read")
    draft = make_draft(4)
    given.add(draft)
    read.add(draft)
    change = draft.model_copy(update={"status": "rejected"})
    assert given.save(change, expected_version=1, current=draft) == read.save(change, expected_version=1)
    assert given.path_for(draft.draft_id).read_bytes() == read.path_for(draft.draft_id).read_bytes()
    with pytest.raises(ReviewError, match="changed meanwhile"):
        given.save(change, expected_version=1, current=given.get(draft.draft_id))
