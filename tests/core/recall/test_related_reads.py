"""What related memories read (core.recall.related): the namespace's digests and the stored stamps of the few it
answers, never a record (a digest is its memory's record but the stamp); one deleted between its digest and its
stamp is left out, and the next most similar takes its place."""

from __future__ import annotations

from collections.abc import Sequence

from adapters.memory import InMemoryMemoryRepository
from core.memories import MemoryService
from core.model import Memory, NewMemory
from core.recall.indexing import RecallIndexer
from core.recall.related import RelatedQuery, RelatedService
from core.recall.standin import StandInEmbedder
from core.repository.digests import StoredStamp
from tests.conftest import FakeClock

NS = "alice"
STAND_IN = StandInEmbedder()


class DeletedMeanwhile(InMemoryMemoryRepository):
    """Notes each record read; deletes `doomed` (by `deleter`) when its stamp is first asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.records_read: list[int] = []
        self.doomed: int | None = None
        self.deleter: MemoryService | None = None

    def records(self, namespace: str, memory_ids: Sequence[int]) -> list[Memory]:
        self.records_read += memory_ids
        return super().records(namespace, memory_ids)

    def stored_stamps(self, namespace: str, memory_ids: Sequence[int]) -> dict[int, StoredStamp]:
        doomed, self.doomed = self.doomed, None
        if doomed is not None and doomed in memory_ids and self.deleter is not None:
            self.deleter.delete(namespace, doomed)
        return super().stored_stamps(namespace, memory_ids)


def test_related_memories_read_no_record_and_one_deleted_meanwhile_gives_its_place_to_the_next() -> None:
    clock = FakeClock()
    store = DeletedMeanwhile()
    memories = MemoryService(store, clock, indexer=RecallIndexer(STAND_IN))
    made = [memories.create(NS, NewMemory.parse({"content": f"The user works at Acme{mark}"})) for mark in "!?."]
    memories.get(NS, made[1].id)  # used once: its stamp is answered with it
    related = RelatedService(store, STAND_IN, clock)
    asked = RelatedQuery.parse({"limit": 1})

    before = related.related(NS, made[0].id, asked)
    store.doomed, store.deleter = made[2].id, memories
    after = related.related(NS, made[0].id, asked)

    assert [item.memory.id for item in before.items] == [made[2].id]  # equally similar: the newest first
    assert [item.memory for item in after.items] == [store.get(NS, made[1].id)]  # with its stored stamp
    assert store.records_read == []
