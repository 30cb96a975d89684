"""The records of recall's pages kept with the warm index's digests (core.recall.kept): an agent asking again reads
neither the page's records nor its stamps (learnt from stamping them), a changed memory's record is read again, a cold
process reads them every time, a record of another version than its digest is not kept, and the oldest go first."""

from __future__ import annotations

from collections.abc import Sequence

from adapters.memory import InMemoryMemoryRepository
from core.memories import MemoryService
from core.model import Memory, MemoryChanges, NewMemory
from core.recall.indexing import RecallIndexer
from core.recall.kept import KeptRecords
from core.recall.query import RecallQuery
from core.recall.service import RecallService
from core.recall.standin import StandInEmbedder
from core.repository.digests import Candidate, StoredStamp
from tests.conftest import FakeClock

NS = "alice"
STAND_IN = StandInEmbedder()
QUESTION = RecallQuery.parse({"query": "tea garden", "limit": 5})


class Reads(InMemoryMemoryRepository):
    """The in-memory store, noting the ids whose records or stamps are read (stamping is no read)."""

    def __init__(self) -> None:
        super().__init__()
        self.records_read: list[int] = []
        self.stamps_read: list[int] = []
        self.lagging: dict[int, Memory] = {}  # what an eventually consistent read still returns, by id

    def records(self, namespace: str, memory_ids: Sequence[int]) -> list[Memory]:
        # What every read of records here comes to, with or without their stamps.
        self.records_read += memory_ids
        return [self.lagging.get(memory.id, memory) for memory in super().records(namespace, memory_ids)]

    def stored_stamps(self, namespace: str, memory_ids: Sequence[int]) -> dict[int, StoredStamp]:
        self.stamps_read += memory_ids
        return super().stored_stamps(namespace, memory_ids)


def stocked() -> tuple[Reads, MemoryService, FakeClock]:
    clock = FakeClock()
    store = Reads()
    memories = MemoryService(store, clock, indexer=RecallIndexer(STAND_IN))
    for n in range(12):
        memories.create(NS, NewMemory.parse({"content": f"tea garden note{n}" if n % 2 else f"bike ride {n}"}))
    return store, memories, clock


def page_ids(recall: RecallService) -> list[int]:
    return [item.memory.id for item in recall.recall(NS, QUESTION).items]


def test_a_page_asked_again_reads_neither_its_records_nor_its_stamps_until_a_memory_of_it_changes() -> None:
    store, memories, clock = stocked()
    recall = RecallService(store, STAND_IN, clock=clock)
    first = page_ids(recall)
    assert sorted(store.records_read) == sorted(first)
    store.records_read.clear()

    assert page_ids(recall) == first
    assert (store.records_read, store.stamps_read) == ([], [])

    memories.update(NS, first[1], MemoryChanges.parse({"tags": ["home"]}))
    again = recall.recall(NS, QUESTION)
    assert store.records_read == [first[1]]
    assert next(item.memory for item in again.items if item.memory.id == first[1]).tags == ["home"]


def test_a_cold_process_reads_the_page_s_records_every_time() -> None:
    store, _, clock = stocked()
    recall = RecallService(store, STAND_IN, clock=clock, warm_bytes=0)
    first = page_ids(recall)
    store.records_read.clear()

    assert page_ids(recall) == first
    assert sorted(store.records_read) == sorted(first)


def test_a_record_read_at_another_version_than_its_digest_is_answered_but_not_kept() -> None:
    store, memories, _ = stocked()
    stale = store.records(NS, [2])[0]
    memories.update(NS, 2, MemoryChanges.parse({"content": "tea garden, changed"}))
    store.lagging[2] = stale  # the read still sees the version before
    candidate = next(c for c in store.recall_candidates(NS, QUESTION) if c.memory_id == 2)
    kept = KeptRecords(store)
    store.records_read.clear()

    assert [memory.content for memory in kept.records(NS, [candidate])] == ["tea garden note1"]
    del store.lagging[2]
    assert [memory.content for memory in kept.records(NS, [candidate])] == ["tea garden, changed"]
    assert [memory.content for memory in kept.records(NS, [candidate])] == ["tea garden, changed"]
    assert store.records_read == [2, 2]  # read twice: the stale answer was not kept, the fresh one is


def test_a_record_is_kept_for_its_digest_object_alone_and_the_least_recently_used_go_first() -> None:
    store, _, _ = stocked()
    candidates = {c.memory_id: c for c in store.recall_candidates(NS, RecallQuery.parse({"query": "x"}))}
    kept = KeptRecords(store, size=2)
    kept.records(NS, [candidates[1], candidates[2]])
    kept.records(NS, [candidates[1]])  # 1 used after 2
    kept.records(NS, [candidates[3]])  # 2 out
    store.records_read.clear()

    kept.records(NS, [candidates[1], candidates[3], candidates[2]])
    assert store.records_read == [2]
    # The same digest read again (a cold read, or a warm copy's refresh) is another object: its record is read again.
    fresh: Candidate = next(c for c in store.recall_candidates(NS, QUESTION) if c.memory_id == 3)
    store.records_read.clear()
    kept.records(NS, [fresh])
    assert store.records_read == [3]
