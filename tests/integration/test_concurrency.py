"""Concurrent writers and readers against Amazon DynamoDB Local, whose conditional writes behave like the cloud's.

Threads are released together by a barrier so their requests overlap. HTTP requests go through one TestClient
per thread: each request then runs on its own event loop, so the blocking service calls really overlap.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from adapters.dynamodb import DynamoDBMemoryRepository
from core.access import DEFAULT_NAMESPACE
from core.contract import RetrievalQuery
from core.errors import MemoryNotFoundError, VersionMismatchError, WriteConflictError
from core.history import HistoryQuery
from core.memories import MemoryService
from core.model import Memory, MemoryChanges, NewMemory
from core.writes import UPDATE_ATTEMPTS
from handlers.auth import open_access
from handlers.http.app import create_app
from tests.conftest import Engine, FakeClock
from tests.copies import assert_copies_mirror

T = TypeVar("T")
THREADS = 8


def run_together(count: int, work: Callable[[int], T]) -> list[T]:
    """Run `work(0)` ... `work(count - 1)` on `count` threads released at the same moment; results in index order."""
    barrier = threading.Barrier(count)

    def start(index: int) -> T:
        barrier.wait(timeout=30)
        return work(index)

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(start, range(count)))


@dataclass
class Store:
    """A service over DynamoDB Local with its repository in reach, for reads that do not stamp."""

    repository: DynamoDBMemoryRepository
    service: MemoryService
    app: FastAPI

    def stored(self, memory_id: int) -> Memory:
        memory = self.repository.get(DEFAULT_NAMESPACE, memory_id)
        assert memory is not None
        return memory

    def create(self, content: str = "original") -> Memory:
        return self.service.create(DEFAULT_NAMESPACE, NewMemory.parse({"content": content}))


@pytest.fixture
def store(ddb_local_engine: Engine, clock: FakeClock) -> Store:
    repository = DynamoDBMemoryRepository(ddb_local_engine.client, ddb_local_engine.new_table())
    service = MemoryService(repository, clock)
    return Store(repository, service, create_app(service, open_access(), version="test"))


def test_concurrent_creates_get_distinct_ids(ddb_local_service: MemoryService) -> None:
    created = run_together(
        THREADS, lambda i: ddb_local_service.create(DEFAULT_NAMESPACE, NewMemory.parse({"content": f"writer {i}"}))
    )

    assert sorted(m.id for m in created) == list(range(1, THREADS + 1))
    page = ddb_local_service.search(DEFAULT_NAMESPACE, RetrievalQuery.parse({"limit": 100}))
    assert page.total == THREADS
    assert {m.id: m.content for m in page.items} == {m.id: m.content for m in created}


def test_concurrent_creates_over_http_get_distinct_ids_and_locations(store: Store) -> None:
    responses = run_together(
        THREADS, lambda i: TestClient(store.app).post("/memories", json={"content": f"writer {i}"})
    )

    assert [r.status_code for r in responses] == [201] * THREADS
    ids = sorted(r.json()["id"] for r in responses)
    assert ids == list(range(1, THREADS + 1))
    assert sorted(r.headers["Location"] for r in responses) == sorted(f"/memories/{i}" for i in ids)


@pytest.mark.parametrize("round_", range(3))
def test_concurrent_patches_with_same_if_match_let_exactly_one_win(store: Store, round_: int) -> None:
    memory = store.create()

    responses = run_together(
        THREADS,
        lambda i: TestClient(store.app).patch(
            f"/memories/{memory.id}", json={"content": f"writer {i}"}, headers={"If-Match": '"1"'}
        ),
    )

    statuses = [r.status_code for r in responses]
    assert sorted(statuses) == [200] + [412] * (THREADS - 1)
    winner = responses[statuses.index(200)].json()
    assert winner["version"] == 2
    assert all(r.headers["ETag"] == '"2"' for r in responses)
    final = store.stored(memory.id)
    assert (final.version, final.content) == (2, winner["content"])


def test_concurrent_service_updates_with_the_same_expected_version_let_exactly_one_win(
    ddb_local_service: MemoryService,
) -> None:
    memory = ddb_local_service.create(DEFAULT_NAMESPACE, NewMemory.parse({"content": "original"}))

    def update(i: int) -> Memory | VersionMismatchError:
        changes = MemoryChanges.parse({"content": f"writer {i}"})
        try:
            return ddb_local_service.update(DEFAULT_NAMESPACE, memory.id, changes, expected_version=1)
        except VersionMismatchError as exc:
            return exc

    outcomes = run_together(THREADS, update)

    winners = [o for o in outcomes if isinstance(o, Memory)]
    assert len(winners) == 1
    assert all(o.current_version == 2 for o in outcomes if isinstance(o, VersionMismatchError))
    assert winners[0].version == 2


# Each writer changes a different editable field; none names a version, so the service re-reads and retries.
CHANGES: list[dict[str, Any]] = [
    {"content": "rewritten"},
    {"tags": ["travel", "work"]},
    {"memory_type": "event"},
    {"status": "invalid"},
]


@pytest.mark.parametrize("round_", range(3))
def test_concurrent_patches_without_if_match_within_the_retry_bound_all_succeed_and_lose_nothing(
    store: Store, round_: int
) -> None:
    # A writer's conditional write fails only when another writer committed in between, and each writer commits
    # once, so with no more writers than UPDATE_ATTEMPTS every one of them gets through.
    changes = CHANGES[:UPDATE_ATTEMPTS]
    memory = store.create()

    responses = run_together(
        len(changes), lambda i: TestClient(store.app).patch(f"/memories/{memory.id}", json=changes[i])
    )

    assert [r.status_code for r in responses] == [200] * len(changes)
    assert sorted(r.json()["version"] for r in responses) == list(range(2, 2 + len(changes)))
    final = store.stored(memory.id)
    for change in changes:
        assert {field: getattr(final, field) for field in change} == change
    assert final.version == 1 + len(changes)


def test_concurrent_patches_without_if_match_lose_nothing_when_write_conflicts_are_retried(store: Store) -> None:
    memory = store.create()

    def patch(i: int) -> list[int]:
        client = TestClient(store.app)
        statuses: list[int] = []
        # 409 means "changed nothing, retry"; a writer can lose at most once to each other writer.
        while not statuses or statuses[-1] == 409:
            assert len(statuses) < 10, statuses
            statuses.append(client.patch(f"/memories/{memory.id}", json=CHANGES[i]).status_code)
        return statuses

    histories = run_together(len(CHANGES), patch)

    assert all(history[-1] == 200 for history in histories), histories
    final = store.stored(memory.id)
    for change in CHANGES:
        assert {field: getattr(final, field) for field in change} == change
    assert final.version == 1 + len(CHANGES)


def test_concurrent_reads_never_make_a_patch_fail_and_leave_the_latest_stamp(store: Store) -> None:
    memory = store.create()
    readers, reads_each, patches = THREADS - 1, 12, 12

    def patcher() -> list[Any]:
        client = TestClient(store.app)
        etag, outcomes = f'"{memory.version}"', []
        for n in range(patches):
            response = client.patch(f"/memories/{memory.id}", json={"content": f"edit {n}"}, headers={"If-Match": etag})
            outcomes.append(response.status_code)
            etag = response.headers.get("ETag", etag)
        return outcomes

    def reader() -> list[Any]:
        client = TestClient(store.app)
        return [client.get(f"/memories/{memory.id}") for _ in range(reads_each)]

    results = run_together(1 + readers, lambda i: patcher() if i == 0 else reader())

    patch_statuses, reads = results[0], results[1:]
    # Stamps never change the version, so a patcher that follows its own ETags never sees a 412 or 409.
    assert patch_statuses == [200] * patches
    assert all(r.status_code == 200 for history in reads for r in history)
    for history in reads:
        stamps = [r.json()["last_accessed_at"] for r in history]
        versions = [r.json()["version"] for r in history]
        assert stamps == sorted(stamps), "a reader saw last_accessed_at move backwards"
        assert versions == sorted(versions), "a reader saw the version move backwards"
    final = store.stored(memory.id)
    assert final.last_accessed_at == max(r.json()["last_accessed_at"] for history in reads for r in history)
    assert (final.version, final.content) == (1 + patches, f"edit {patches - 1}")


def test_concurrent_retags_retypes_and_deletes_leave_every_tag_copy_and_count_exact(
    ddb_local_engine: Engine,
    ddb_local_table: str,
    ddb_local_repository: DynamoDBMemoryRepository,
    ddb_local_service: MemoryService,
) -> None:
    tags = ["travel", "food", "work"]
    created = [
        ddb_local_service.create(DEFAULT_NAMESPACE, NewMemory.parse({"content": f"note {n}", "tags": tags[: n % 4]}))
        for n in range(4)
    ]
    ids = [memory.id for memory in created]
    patches: list[dict[str, Any]] = [
        {"tags": ["travel", "work"]},
        {"tags": []},
        {"tags": ["food"], "memory_type": "event"},
        {"status": "invalid"},
        {"content": "rewritten", "status": "active"},
        {"tags": tags, "content": "all of them"},
    ]

    def work(index: int) -> None:
        for round_ in range(6):
            memory_id = ids[(index + round_) % len(ids)]
            try:
                if index == THREADS - 1 and round_ == 5:
                    ddb_local_service.delete(DEFAULT_NAMESPACE, memory_id)
                else:
                    patch = MemoryChanges.parse(patches[(index * 7 + round_) % len(patches)])
                    ddb_local_service.update(DEFAULT_NAMESPACE, memory_id, patch)
            except (WriteConflictError, MemoryNotFoundError):
                pass  # lost every retry to the others, or deleted meanwhile: either way nothing half-written

    run_together(THREADS, work)

    assert_copies_mirror(ddb_local_engine, ddb_local_table, DEFAULT_NAMESPACE)
    for tag in tags:
        found = ddb_local_service.search(DEFAULT_NAMESPACE, RetrievalQuery.parse({"tag": tag, "status": "active"}))
        stored = [ddb_local_repository.get(DEFAULT_NAMESPACE, i) for i in ids]
        expected = [m.id for m in stored if m and tag in m.tags and m.status == "active"]
        assert ([m.id for m in found.items], found.total) == (expected, len(expected))


def test_concurrent_patches_deletes_restores_and_purges_leave_each_history_exact(
    ddb_local_engine: Engine,
    ddb_local_table: str,
    ddb_local_repository: DynamoDBMemoryRepository,
    ddb_local_service: MemoryService,
) -> None:
    service = ddb_local_service
    ids = [
        service.create(DEFAULT_NAMESPACE, NewMemory.parse({"content": f"note {n}", "tags": ["t"]})).id for n in range(3)
    ]
    landed: list[list[tuple[int, str]]] = [[] for _ in range(THREADS)]  # (memory id, change) each thread saw land

    def work(index: int) -> None:
        for round_ in range(8):
            memory_id = ids[(index + round_) % len(ids)]
            step = (index + round_) % 4
            try:
                if step == 0:
                    service.delete(DEFAULT_NAMESPACE, memory_id, key_id=f"{index:012x}")
                    landed[index].append((memory_id, "deleted"))
                elif step == 1:
                    service.restore(DEFAULT_NAMESPACE, memory_id, key_id=f"{index:012x}")
                    landed[index].append((memory_id, "restored"))
                else:
                    content = f"thread {index} round {round_}"
                    service.update(DEFAULT_NAMESPACE, memory_id, MemoryChanges.parse({"content": content}))
                    landed[index].append((memory_id, "updated"))
            except (WriteConflictError, MemoryNotFoundError):
                pass  # refused, or lost every retry: it must have left no revision

    run_together(THREADS, work)

    for memory_id in ids:
        history = service.history(DEFAULT_NAMESPACE, memory_id, HistoryQuery.parse({"limit": 100})).items[::-1]
        changes = [revision.change for revision in history]
        assert [revision.revision for revision in history] == list(range(1, len(history) + 1))
        assert sorted(changes[1:]) == sorted(change for done in landed for mid, change in done if mid == memory_id)
        assert changes[0] == "created"
        for before, after in itertools.pairwise(history):
            # Each revision follows from the one before: a delete or restore moves only the status. (Not
            # `changed_at`: it is when each request arrived, and overlapping requests land in any order.)
            bumped = 1 if after.change == "updated" else 0
            assert after.version == before.version + bumped
            assert (after.status == "deleted") == (after.change == "deleted")
        stored = ddb_local_repository.get(DEFAULT_NAMESPACE, memory_id)
        assert stored is not None
        assert history[-1].memory() == stored.model_copy(update={"last_accessed_at": None})
        if stored.status == "deleted":
            service.purge(DEFAULT_NAMESPACE, memory_id)
    assert_copies_mirror(ddb_local_engine, ddb_local_table, DEFAULT_NAMESPACE)
