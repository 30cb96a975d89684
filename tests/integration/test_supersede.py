"""Superseding on every store (CONTRACT.md, Keeping memories true): in one atomic write with the create (or behind a
check that the superseding memory is still active), each listed memory becomes invalid with its version +1 and a
revision naming what superseded it; a refused supersede writes nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from adapters.dynamodb.namespaces import Namespaces
from core import writes
from core.contract import RetrievalQuery
from core.errors import InvalidInputError, MemoryNotFoundError
from core.memories import MemoryService
from core.model import IdempotentCreate, Memory, MemoryChanges, NewMemory
from core.portable import parse_line
from core.recall.query import RecallQuery
from core.repository import Commit
from tests.conftest import Engine, FakeClock, StoredMemories

NS = "alice"


def create(service: MemoryService, content: str, **fields: Any) -> Memory:
    return service.create(NS, NewMemory.parse({"content": content, **fields}))


def snapshot(repository: StoredMemories, ids: range) -> list[Any]:
    """Every record and history of `ids` as stored (None for a missing one)."""
    found: list[Any] = []
    for memory_id in ids:
        found.append(repository.get(NS, memory_id))
        if found[-1] is not None:
            found.append(repository.history(NS, memory_id, 100, 0))
    return found


def test_a_create_that_supersedes_makes_the_listed_memories_invalid_in_its_own_write(
    service: MemoryService, repository: StoredMemories, clock: FakeClock
) -> None:
    job = create(service, "Works at Acme as a designer", tags=["work"])
    title = create(service, "Is a senior designer", tags=["work"])
    service.get(NS, job.id)
    read = repository.get(NS, job.id)
    clock.advance(seconds=5)

    new = create(service, "Works at Globex as a product lead", tags=["work"], supersedes=[job.id, title.id])

    assert new.id == 3
    assert (new.version, new.status) == (1, "active")
    for old in (job, title):
        stored = repository.get(NS, old.id)
        assert stored is not None
        assert (stored.status, stored.version, stored.updated_at) == ("invalid", 2, new.created_at)
        assert (stored.content, stored.tags, stored.created_at) == (old.content, old.tags, old.created_at)
        latest = repository.history(NS, old.id, 1, 0).items[0]
        assert (latest.change, latest.superseded_by, latest.revision, latest.version) == ("superseded", 3, 2, 2)
    assert read is not None
    assert repository.get(NS, job.id).last_accessed_at == read.last_accessed_at  # type: ignore[union-attr]
    totals = {s: service.search(NS, _query(status=s), stamp=False).total for s in ("active", "invalid")}
    assert totals == {"active": 1, "invalid": 2}
    assert service.search(NS, _query(tag="work", status="invalid"), stamp=False).total == 2
    recalled = {
        candidate.memory_id for candidate in repository.recall_candidates(NS, RecallQuery.parse({"query": "x"}))
    }
    assert recalled == {3}


def test_a_supersede_answers_the_superseded_records_in_the_order_asked_and_keeps_the_superseder(
    service: MemoryService, repository: StoredMemories
) -> None:
    old = [create(service, f"Lives in city {i}", status="invalid" if i == 1 else "active") for i in range(3)]
    now = create(service, "Lives in Porto")

    answer = service.supersede(NS, now.id, [old[2].id, old[0].id, old[1].id])

    assert [(m.id, m.status, m.version) for m in answer.items] == [
        (3, "invalid", 2),
        (1, "invalid", 2),
        (2, "invalid", 2),
    ]
    assert repository.get(NS, now.id) == now
    assert [r.change for r in repository.history(NS, now.id, 10, 0).items] == ["created"]


@pytest.mark.parametrize(
    ("ids", "fields"),
    [
        ([2, 99], ["ids[1]"]),
        ([2, 3], ["ids[1]"]),
        ([2, 2], ["ids[1]"]),
        ([1, 2], ["ids[0]"]),
        ([99, 3, 2, 2], ["ids[0]", "ids[1]", "ids[3]"]),
    ],
)
def test_a_supersede_with_a_missing_deleted_repeated_or_self_entry_writes_nothing(
    service: MemoryService, repository: StoredMemories, ids: list[int], fields: list[str]
) -> None:
    create(service, "Eats anything")
    create(service, "Is vegetarian")
    create(service, "Is pescatarian")
    service.delete(NS, 3)
    before = snapshot(repository, range(1, 5))

    with pytest.raises(InvalidInputError) as refused:
        service.supersede(NS, 1, ids)

    assert [error.field for error in refused.value.errors] == fields
    assert snapshot(repository, range(1, 5)) == before


def test_a_refused_create_that_supersedes_stores_no_memory_and_changes_none(
    service: MemoryService, repository: StoredMemories
) -> None:
    create(service, "Drives a Fiat")
    before = snapshot(repository, range(1, 4))

    with pytest.raises(InvalidInputError) as refused:
        create(service, "Drives a Volvo", supersedes=[1, 7])

    assert [error.field for error in refused.value.errors] == ["supersedes[1]"]
    assert snapshot(repository, range(1, 4)) == before
    assert service.search(NS, _query(), stamp=False).total == 1


def test_only_an_active_memory_supersedes_and_a_missing_or_deleted_one_is_not_found(service: MemoryService) -> None:
    create(service, "Old phone 555-0100")
    create(service, "Wrong phone", status="invalid")
    create(service, "Gone")
    service.delete(NS, 3)

    with pytest.raises(InvalidInputError) as invalid:
        service.supersede(NS, 2, [1])
    assert [error.field for error in invalid.value.errors] == ["id"]
    for missing in (3, 9):
        with pytest.raises(MemoryNotFoundError):
            service.supersede(NS, missing, [1])


def test_a_create_that_supersedes_retried_with_its_key_supersedes_once(
    service: MemoryService, repository: StoredMemories
) -> None:
    create(service, "Manager is Dana")
    new = NewMemory.parse({"content": "Manager is Eli", "supersedes": [1]})
    key = IdempotentCreate.of("manager-change", new, "Idempotency-Key")

    first = service.create(NS, new, key)
    again = service.create(NS, new, key)

    assert again == first
    stored = repository.get(NS, 1)
    assert stored is not None
    assert (stored.status, stored.version) == ("invalid", 2)


@dataclass
class ChangedOnce:
    """A store whose first commit finds memory `victim` changed by another writer just before it."""

    store: StoredMemories
    victim: int
    left: int = 1
    commits: int = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def commit(self, commit: Commit) -> None:
        self.commits += 1
        if self.left:
            self.left -= 1
            writes.apply(
                self.store,
                NS,
                self.victim,
                MemoryChanges.parse({"tags": ["edited"]}),
                None,
                "2026-04-06T14:12:30.000000Z",
            )
        self.store.commit(commit)


def test_a_supersede_whose_superseder_changed_since_its_load_is_decided_again(repository: StoredMemories) -> None:
    service = MemoryService(repository, FakeClock())
    create(service, "Gym is FitOne")
    create(service, "Gym is Iron Works")
    racing = ChangedOnce(repository, victim=2)

    MemoryService(racing, FakeClock()).supersede(NS, 2, [1])

    assert racing.commits == 2  # the first commit found memory 2 changed (its check failed) and wrote nothing
    stored, superseder = repository.get(NS, 1), repository.get(NS, 2)
    assert stored is not None
    assert superseder is not None
    assert (stored.status, stored.version, superseder.tags) == ("invalid", 2, ["edited"])
    assert [r.change for r in repository.history(NS, 1, 10, 0).items] == ["superseded", "created"]


def test_a_supersede_that_goes_stale_is_decided_again_on_what_is_stored_now(repository: StoredMemories) -> None:
    service = MemoryService(repository, FakeClock())
    create(service, "Gym is FitOne")
    create(service, "Gym is Iron Works")
    racing = MemoryService(ChangedOnce(repository, victim=1), FakeClock())

    racing.supersede(NS, 2, [1])

    stored = repository.get(NS, 1)
    assert stored is not None
    assert (stored.status, stored.version, stored.tags) == ("invalid", 3, ["edited"])
    assert [r.change for r in repository.history(NS, 1, 10, 0).items] == ["superseded", "updated", "created"]


def test_a_supersede_too_large_for_one_dynamodb_transaction_is_refused_whole(ddb_local_engine: Engine) -> None:
    repository = ddb_local_engine.memories(ddb_local_engine.new_table())
    service = MemoryService(repository, FakeClock())
    tags = [f"tag{i}" for i in range(20)]
    old = [create(service, f"Version {i}", tags=tags).id for i in range(10)]
    now = create(service, "Version 10", tags=tags)
    before = snapshot(repository, range(1, 12))

    with pytest.raises(InvalidInputError) as refused:
        service.supersede(NS, now.id, old)

    assert [error.field for error in refused.value.errors] == ["ids"]
    assert "at most 100" in refused.value.errors[0].message
    assert snapshot(repository, range(1, 12)) == before
    assert [m.status for m in service.supersede(NS, now.id, old[:3]).items] == ["invalid"] * 3


def _query(**filters: str) -> RetrievalQuery:
    return RetrievalQuery.parse({"limit": 1, **filters})


def test_a_supersede_survives_an_export_and_an_import_on_dynamodb_local(ddb_local_engine: Engine) -> None:
    table = ddb_local_engine.new_table()
    service = MemoryService(ddb_local_engine.memories(table), FakeClock())
    create(service, "Lives in Lyon")
    create(service, "Lives in Nantes", supersedes=[1])
    namespaces = Namespaces(ddb_local_engine.client, table)
    exported = list(namespaces.export(NS, include_deleted=True, history=True))
    lines = [memory.line() for memory in exported]
    imported = [parse_line(line, number) for number, line in enumerate(lines, start=2)]

    namespaces.begin_import("bob", "0" * 64)
    namespaces.load("bob", imported, lambda counts: None)
    namespaces.finish_import("bob", imported)

    assert [memory.line() for memory in namespaces.export("bob", include_deleted=True, history=True)] == lines
    assert '"change":"superseded"' in lines[0]
    assert '"superseded_by":2' in lines[0]
    assert "superseded_by" not in lines[1]
