"""Recall's reads of the matches that can reach its page (core.recall.reach), on every store (in memory, Amazon
DynamoDB Local): ranked without meaning, where only use sets most matches apart, offset pages still walk through the
one exact ranking while reading their stamps first; and a store's stored stamps say what its records say."""

from __future__ import annotations

from typing import Any

import pytest

from core.memories import MemoryService
from core.model import Memory, MemoryChanges, NewMemory
from core.recall.answer import RecallPage
from core.recall.indexing import RecallIndexer
from core.recall.query import RecallQuery
from core.recall.ranking import Part
from core.recall.service import RecallService
from core.recall.standin import StandInEmbedder
from core.repository.digests import StoredStamp
from tests.conftest import Engine, FakeClock, StoredMemories

NS = "alice"
STAND_IN = StandInEmbedder()


class Renamed(StandInEmbedder):
    """The model a deployment moved to: none of the stored vectors is its own yet."""

    model = "stand-in:renamed"


@pytest.fixture
def repository(engine: Engine) -> StoredMemories:
    return engine.memories(engine.new_table())


@pytest.fixture
def memories(repository: StoredMemories, clock: FakeClock) -> MemoryService:
    return MemoryService(repository, clock, indexer=RecallIndexer(STAND_IN))


def create(memories: MemoryService, content: str, **fields: Any) -> Memory:
    return memories.create(NS, NewMemory.parse({"content": content, **fields}))


def answer(page: RecallPage) -> list[tuple[int, float, dict[Part, float]]]:
    return [(item.memory.id, item.score, dict(item.parts)) for item in page.items]


def test_ranked_without_meaning_offset_pages_walk_through_the_one_ranking_use_decides(
    memories: MemoryService, repository: StoredMemories, clock: FakeClock
) -> None:
    made = [create(memories, f"note {n} on gardening", memory_type=("fact", "event")[n % 2]) for n in range(36)]
    used = [made[n].id for n in (19, 3, 35, 11, 27, 7, 23, 15, 31)]  # used in this order, days apart
    for memory_id in used:
        clock.advance(days=3)
        memories.get(NS, memory_id)
    memories.delete(NS, made[7].id)
    memories.update(NS, made[10].id, MemoryChanges.parse({"status": "invalid"}))
    recall = RecallService(repository, Renamed(), clock=clock)
    asked = {"query": "which sports", "as_of": "2026-06-01T00:00:00Z"}

    whole = recall.recall(NS, RecallQuery.parse({**asked, "limit": 50}), stamp=False)
    pages = [
        recall.recall(NS, RecallQuery.parse({**asked, "limit": 4, "offset": offset}), stamp=False)
        for offset in range(0, 36, 4)
    ]

    shown = [memory.id for memory in made if memory.id not in {made[7].id, made[10].id}]
    never_used = sorted(set(shown) - set(used), reverse=True)
    latest_use_first = [memory_id for memory_id in reversed(used) if memory_id in shown]
    assert [item.memory.id for item in whole.items] == [*latest_use_first, *never_used]
    assert [row for page in pages for row in answer(page)] == answer(whole)
    assert {page.total for page in pages} == {whole.total} == {34}
    assert whole.ranking.unembedded == 34


@pytest.mark.parametrize(
    "asked",
    [[1, 2, 3], [5, 40], [1, 2, 30, 31, 32, 60, 99], list(range(1, 61)), [60, 1, 1, 30]],
    ids=["a run", "far apart", "runs and strays", "every one", "unordered, repeated"],
)
def test_stored_stamps_say_what_the_records_say_of_the_ids_still_stored(
    memories: MemoryService, repository: StoredMemories, clock: FakeClock, asked: list[int]
) -> None:
    made = [create(memories, f"note {n}") for n in range(60)]
    for memory in made[::7]:
        clock.advance(minutes=5)
        memories.get(NS, memory.id)
    memories.delete(NS, made[29].id)
    memories.delete(NS, made[39].id)
    memories.purge(NS, made[39].id)

    stamps = repository.stored_stamps(NS, asked)

    assert stamps == {
        record.id: StoredStamp(record.status, record.last_accessed_at) for record in repository.records(NS, asked)
    }
    assert 40 not in stamps
    assert repository.stored_stamps("bob", asked) == {}
    assert repository.stored_stamps(NS, []) == {}
