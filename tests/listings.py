"""Listings on Amazon DynamoDB Local checked against the in-memory store: a stock of varied memories written to both
twins alike, a page compared on both, a recorder of the Queries a client sends, and a `migrate` run under load."""

from __future__ import annotations

import contextlib
import random
import threading
from collections.abc import Callable
from typing import Any

from adapters.dynamodb import Migrated, migrate
from core.contract import RetrievalQuery
from core.errors import DomainError
from core.memories import MemoryService
from core.model import MEMORY_TYPES, MemoryChanges, NewMemory
from tests.conftest import Engine, FakeClock

NS = "alice"
TAGS = ["travel", "food", "work"]


class Queries:
    """The parameters of every Query the engine's client sends."""

    EVENT = "before-parameter-build.dynamodb.Query"

    def __init__(self, engine: Engine) -> None:
        self.sent: list[dict[str, Any]] = []
        assert engine.client is not None
        self._events = engine.client.meta.events
        self._events.register(self.EVENT, self._record)

    def _record(self, params: dict[str, Any], **_: Any) -> None:
        self.sent.append(dict(params))

    def stop(self) -> None:
        self._events.unregister(self.EVENT, self._record)


def stock(services: tuple[MemoryService, ...], count: int, seed: int = 7) -> None:
    """`count` memories: tags and a word on some, every type, some invalid, some deleted, some read, some patched
    (content, tags, type or status)."""
    rng = random.Random(seed)
    bodies = []
    for n in range(count):
        tags = [tag for tag in TAGS if rng.random() < 0.3]
        content = f"memory {n}" + (" about Espresso" if rng.random() < 0.25 else "")
        status = "invalid" if rng.random() < 0.1 else "active"
        bodies.append({"content": content, "tags": tags, "memory_type": rng.choice(MEMORY_TYPES), "status": status})
    deleted = set(rng.sample(range(1, count + 1), count // 10))
    read = rng.sample(range(1, count + 1), count // 5)
    patches = [
        (
            memory_id,
            rng.choice(
                [
                    {"content": f"patched {memory_id}"},
                    {"tags": [tag for tag in TAGS if rng.random() < 0.5]},
                    {"memory_type": rng.choice(MEMORY_TYPES), "content": f"retyped {memory_id}"},
                    {"status": rng.choice(["active", "invalid"])},
                ]
            ),
        )
        for memory_id in rng.sample(range(1, count + 1), count // 3)
    ]
    for service in services:
        for body in bodies:
            service.create(NS, NewMemory.parse(body))
        for memory_id, patch in patches:
            service.update(NS, memory_id, MemoryChanges.parse(patch))
        for memory_id in read:
            if memory_id not in deleted:
                service.get(NS, memory_id)
        for memory_id in deleted:
            service.delete(NS, memory_id)


def same_page(twins: tuple[MemoryService, MemoryService], query: RetrievalQuery) -> int:
    """Both stores return the same page and total (each stamps its page: search each once); the total."""
    stored, oracle = (service.search(NS, query) for service in twins)
    assert ([m.id for m in stored.items], stored.total) == ([m.id for m in oracle.items], oracle.total), query
    return oracle.total


Change = Callable[[MemoryService], object]


def migrate_under_load(
    twins: tuple[MemoryService, MemoryService],
    engine: Engine,
    table: str,
    change: Callable[[random.Random, int], Change],
    clock: FakeClock | None = None,
) -> tuple[Migrated, int]:
    """`migrate` of the engine's `table` while a thread makes `change(rng, n)` on both twins alike, one at a time (a
    second apart on `clock`), until it is done: the run's result and the number of changes made (a failure of the
    thread is raised here)."""
    stop, made, failures = threading.Event(), [0], list[BaseException]()

    def load() -> None:
        rng = random.Random(3)
        try:
            while not stop.is_set():
                one = change(rng, made[0])
                for service in twins:
                    with contextlib.suppress(DomainError):  # deleted, not deleted, ...: the same on both twins
                        one(service)
                if clock is not None:
                    clock.advance(seconds=1)
                made[0] += 1
        except BaseException as exc:  # surfaced in the test's own thread
            failures.append(exc)
            raise

    worker = threading.Thread(target=load)
    worker.start()
    assert engine.client is not None
    try:
        done = migrate(engine.client, table)
    finally:
        stop.set()
        worker.join()
    if failures:
        raise failures[0]
    return done, made[0]


def migrated_again(engine: Engine, table: str, done: Migrated, left: Callable[[Migrated], int]) -> Migrated:
    """`migrate` run again (3 times at most) while `left(done)` says memories kept changing under the last run (it
    leaves them to the next, as it says); the last run's result."""
    assert engine.client is not None
    for _ in range(3):
        if not left(done):
            break
        done = migrate(engine.client, table)
    return done
