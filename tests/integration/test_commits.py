"""One commit of several memories' changes, on every store: all of it lands or none of it does, and the totals and tag
copies it moves are counted once per partition however many of its changes move them."""

from __future__ import annotations

import pytest

from core import changes, writes
from core.contract import RetrievalQuery
from core.digest import Digest
from core.errors import MemoryNotFoundError
from core.model import Memory, MemoryChanges
from core.repository import Commit
from core.repository.commit import Loaded, StaleLoadError
from tests.conftest import StoredMemories

NS = "alice"
NOW = "2026-04-06T14:13:00.000000Z"
LATER = "2026-04-06T14:14:00.000000Z"


def memory(memory_id: int, tags: list[str]) -> Memory:
    return Memory(
        id=memory_id,
        content=f"memory {memory_id}",
        tags=tags,
        created_at=NOW,
        updated_at=NOW,
        last_accessed_at=None,
        memory_type="fact",
        status="active",
        version=1,
    )


def total(repository: StoredMemories, **filters: str) -> int:
    return repository.find(NS, RetrievalQuery.parse({**filters, "limit": 1})).total


def loaded(repository: StoredMemories, memory_id: int) -> Loaded:
    found = repository.load(NS, memory_id)
    assert found is not None
    return found


def test_a_commit_of_two_creates_sharing_a_tag_stores_both_and_counts_each_once(repository: StoredMemories) -> None:
    created = [changes.created(memory(i, ["work", f"only{i}"]), None, Digest()) for i in (1, 2)]

    repository.commit(Commit(NS, tuple(created)))

    assert [m.id for m in repository.find(NS, RetrievalQuery.parse({"tag": "work"})).items] == [1, 2]
    assert (total(repository), total(repository, tag="work"), total(repository, tag="only2")) == (2, 2, 1)
    assert [revision.change for revision in repository.history(NS, 2, 10, 0).items] == ["created"]


def test_a_commit_moving_two_memories_between_totals_moves_each_once(repository: StoredMemories) -> None:
    for memory_id in (1, 2, 3):
        writes.add(repository, NS, memory(memory_id, ["work"]))
    deleted = changes.deleted(loaded(repository, 1), LATER, None)
    invalid = changes.updated(loaded(repository, 2), MemoryChanges.parse({"status": "invalid"}), None, LATER, None, _no)
    assert invalid is not None

    repository.commit(Commit(NS, (deleted, invalid)))

    counts = {status: total(repository, status=status) for status in ("active", "invalid", "deleted")}
    assert counts == {"active": 1, "invalid": 1, "deleted": 1}
    assert {status: total(repository, status=status, tag="work") for status in counts} == counts


def test_a_commit_with_one_stale_change_writes_none_of_its_changes(repository: StoredMemories) -> None:
    writes.add(repository, NS, memory(1, ["work"]))
    writes.add(repository, NS, memory(2, ["work"]))
    first, second = loaded(repository, 1), loaded(repository, 2)
    writes.apply(repository, NS, 2, MemoryChanges.parse({"content": "changed meanwhile"}), None, NOW)
    deleted = changes.deleted(first, LATER, None)
    stale = changes.deleted(second, LATER, None)

    with pytest.raises(StaleLoadError):
        repository.commit(Commit(NS, (deleted, stale)))

    assert repository.get(NS, 1) == memory(1, ["work"])
    assert len(repository.history(NS, 1, 10, 0).items) == 1
    assert (total(repository), total(repository, status="deleted")) == (2, 0)


def test_a_removal_of_a_memory_changed_since_its_load_removes_nothing(repository: StoredMemories) -> None:
    writes.add(repository, NS, memory(1, ["work"]))
    writes.delete(repository, NS, 1, NOW)
    stale = loaded(repository, 1)
    writes.restore(repository, NS, 1, LATER)
    writes.delete(repository, NS, 1, LATER)

    assert repository.remove(NS, stale) is False
    assert [r.change for r in repository.history(NS, 1, 10, 0).items] == ["deleted", "restored", "deleted", "created"]
    assert writes.purge(repository, NS, 1) is True
    with pytest.raises(MemoryNotFoundError):
        repository.history(NS, 1, 10, 0)


def _no(content: str, tags: object) -> Digest:
    raise AssertionError("a change of status alone computes no digest")
