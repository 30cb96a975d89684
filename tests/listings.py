"""Listings on Amazon DynamoDB Local checked against the in-memory store: a stock of varied memories written to both
twins alike, a page compared on both, and a recorder of the Queries a client sends."""

from __future__ import annotations

import random
from typing import Any

from core.contract import RetrievalQuery
from core.memories import MemoryService
from core.model import MEMORY_TYPES, MemoryChanges, NewMemory
from tests.conftest import Engine

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
