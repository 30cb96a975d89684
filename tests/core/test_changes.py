"""The rules of every change, decided once in the core (core.changes) for every store to persist."""

from __future__ import annotations

from typing import Any

import pytest

from core import changes
from core.digest import Digest, Vector
from core.errors import MemoryNotFoundError, VersionExhaustedError, VersionMismatchError
from core.limits import MAX_VERSION
from core.model import Memory, MemoryChanges
from core.repository.commit import Deletion, Loaded

NOW = "2026-04-06T14:13:00.000000Z"


def memory(**fields: Any) -> Memory:
    defaults: dict[str, Any] = {
        "id": 7,
        "content": "likes tea",
        "tags": ["drink"],
        "created_at": "2026-04-06T14:12:00.000000Z",
        "updated_at": "2026-04-06T14:12:30.000000Z",
        "last_accessed_at": "2026-04-06T14:12:40.000000Z",
        "memory_type": "preference",
        "status": "invalid",
        "version": 3,
    }
    return Memory(**{**defaults, **fields})


def loaded(revisions: int = 4, deletion: Deletion | None = None, **fields: Any) -> Loaded:
    return Loaded(memory(**fields), revisions, deletion, purging=False, token="as loaded")


def marked(text: str) -> Digest:
    """A digest telling which text it was computed for (as its model's name)."""
    return Digest(Vector(b"\x01", 1.0), text)


class Index:
    """An Indexer's digest function that counts its calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[str, ...]]] = []

    def __call__(self, content: str, tags: Any) -> Digest:
        self.calls.append((content, tuple(tags)))
        return marked(content)


def test_a_create_is_revision_one_with_its_digest_and_key() -> None:
    created = memory(version=1, status="active")
    change = changes.created(created, "k1", marked("tea"))

    assert (change.before, change.after, change.deletion, change.digest) == (None, created, None, marked("tea"))
    assert (change.revision.revision, change.revision.change, change.revision.key_id) == (1, "created", "k1")
    assert change.revision.changed_at == created.created_at


def test_an_update_is_the_next_revision_with_a_new_digest_only_when_its_text_changes() -> None:
    index = Index()
    retyped = changes.updated(loaded(), MemoryChanges.parse({"memory_type": "fact"}), None, NOW, "k1", index)
    reworded = changes.updated(loaded(), MemoryChanges.parse({"content": "likes coffee"}), {3}, NOW, None, index)

    assert retyped is not None
    assert reworded is not None
    assert (retyped.revision.revision, retyped.revision.change, retyped.digest) == (5, "updated", None)
    assert (retyped.after.version, retyped.after.updated_at, retyped.after.memory_type) == (4, NOW, "fact")
    assert retyped.after.last_accessed_at == memory().last_accessed_at
    assert reworded.digest == marked("likes coffee")
    assert index.calls == [("likes coffee", ("drink",))]


def test_an_update_that_changes_nothing_decides_no_change_and_indexes_nothing() -> None:
    index = Index()

    assert changes.updated(loaded(), MemoryChanges.parse({"content": "likes tea"}), None, NOW, None, index) is None
    assert index.calls == []


def test_an_update_of_another_version_is_refused_even_when_it_changes_nothing() -> None:
    with pytest.raises(VersionMismatchError) as raised:
        changes.updated(loaded(), MemoryChanges.parse({"content": "likes tea"}), {1, 2}, NOW, None, Index())
    assert raised.value.current_version == 3


def test_an_update_of_a_memory_at_the_last_version_is_refused() -> None:
    with pytest.raises(VersionExhaustedError):
        changes.updated(loaded(version=MAX_VERSION), MemoryChanges.parse({"tags": []}), None, NOW, None, Index())


def test_a_delete_changes_only_the_status_and_keeps_the_one_it_had() -> None:
    change = changes.deleted(loaded(), NOW, "k1")
    before = memory()

    assert change.after == before.model_copy(update={"status": "deleted"})
    assert change.deletion == Deletion(prior_status="invalid", deleted_at=NOW)
    assert (change.revision.revision, change.revision.change, change.digest) == (5, "deleted", None)


def test_a_restore_gives_back_the_status_before_the_delete_and_nothing_else() -> None:
    deleted = loaded(status="deleted", deletion=Deletion(prior_status="invalid", deleted_at=NOW))
    change = changes.restored(changes.deleted_one(deleted, 7), NOW, None)

    assert change.after == memory()
    assert (change.deletion, change.revision.change, change.revision.revision) == (None, "restored", 5)


def test_only_a_visible_memory_is_updated_or_deleted() -> None:
    with pytest.raises(MemoryNotFoundError):
        changes.visible(None, 7)
    with pytest.raises(MemoryNotFoundError):
        changes.visible(loaded(status="deleted", deletion=Deletion("active", NOW)), 7)
    assert changes.visible(loaded(), 7).memory == memory()


def test_only_a_deleted_memory_whose_removal_has_not_begun_is_restored() -> None:
    deletion = Deletion("active", NOW)
    with pytest.raises(MemoryNotFoundError, match="is not deleted"):
        changes.deleted_one(loaded(), 7)
    purging = Loaded(memory(status="deleted"), 4, deletion, purging=True, token=None)
    with pytest.raises(MemoryNotFoundError):
        changes.deleted_one(purging, 7)
    with pytest.raises(MemoryNotFoundError):
        changes.deleted_one(None, 7)
