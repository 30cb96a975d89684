"""Stamping a recall's page and learning what each memory held before (MemoryRepository.stamp_with_prior), on every
store: each memory is stamped and says its stamp before (none when never used), a memory another reader stamped later
keeps that stamp and says it, a deleted one is not stamped and says it is deleted, and an id never stored is left
out."""

from __future__ import annotations

from core.memories import MemoryService
from core.model import NewMemory
from core.repository.digests import StoredStamp
from tests.conftest import Engine, FakeClock

NS = "alice"
EARLY = "2026-05-01T10:00:00.000000Z"
LATE = "2026-05-01T12:00:00.000000Z"


def test_each_memory_is_stamped_and_says_what_it_held_before(engine: Engine, clock: FakeClock) -> None:
    store = engine.memories(engine.new_table())
    memories = MemoryService(store, clock)
    for content in ("never used", "used before", "stamped later by another", "deleted"):
        memories.create(NS, NewMemory.parse({"content": content}))
    store.stamp(NS, [2], "2026-04-30T09:00:00.000000Z")
    store.stamp(NS, [3], LATE)
    memories.delete(NS, 4)

    priors = store.stamp_with_prior(NS, [1, 2, 3, 4, 99], EARLY)

    assert priors == {
        1: StoredStamp("active", None),
        2: StoredStamp("active", "2026-04-30T09:00:00.000000Z"),
        3: StoredStamp("active", LATE),
        4: StoredStamp("deleted", None),
    }
    stored = {memory_id: store.get(NS, memory_id) for memory_id in (1, 2, 3, 4)}
    assert {memory_id: memory.last_accessed_at for memory_id, memory in stored.items() if memory} == {
        1: EARLY,
        2: EARLY,
        3: LATE,  # never moved back
        4: None,  # a deleted memory is not stamped
    }
    assert store.stamp_with_prior(NS, [], EARLY) == {}
