"""Recall's contract through the use case, on every store (in memory, Amazon DynamoDB Local): every match ranked and
counted, ordered by score then id, paged by offset; the retrieval's filters; every time-based part computed at
`as_of`; the returned rows stamped with one timestamp, their `use` computed from the stamp stored before; and a
question or memories the model could not embed ranked without meaning, and said so (CONTRACT.md, Recall)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest

from core.clock import format_timestamp, parse_timestamp
from core.contract import RetrievalQuery
from core.digest import Vector
from core.memories import MemoryService
from core.model import Memory, MemoryChanges, NewMemory
from core.recall.answer import RecallPage
from core.recall.embedding import EmbedderUnavailableError, Kind
from core.recall.indexing import RecallIndexer
from core.recall.query import RecallQuery
from core.recall.ranking import (
    DEFAULT_RECENCY_HALF_LIFE_DAYS,
    DEFAULT_USE_HALF_LIFE_DAYS,
    DEFAULT_WEIGHTS,
    RankingSettings,
)
from core.recall.service import RecallService
from core.recall.standin import StandInEmbedder
from tests.conftest import Engine, FakeClock, StoredMemories

NS = "alice"
STAND_IN = StandInEmbedder()


class Outage(StandInEmbedder):
    """The stand-in model while it is unavailable: every call fails as an unreachable model does."""

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        raise EmbedderUnavailableError("the model is unreachable")


class Renamed(StandInEmbedder):
    """Another model, as far as the store can tell."""

    model = "stand-in:renamed"


@pytest.fixture
def repository(engine: Engine) -> StoredMemories:
    return engine.memories(engine.new_table())


@pytest.fixture
def memories(repository: StoredMemories, clock: FakeClock) -> MemoryService:
    """The memory service as deployed: every write of content or tags computes the memory's digest first."""
    return MemoryService(repository, clock, indexer=RecallIndexer(STAND_IN))


@pytest.fixture
def recall(repository: StoredMemories, clock: FakeClock) -> RecallService:
    return RecallService(repository, STAND_IN, clock=clock)


def create(service: MemoryService, content: str, **fields: Any) -> Memory:
    return service.create(NS, NewMemory.parse({"content": content, **fields}))


def ask(recall: RecallService, *, stamp: bool = True, **fields: Any) -> RecallPage:
    return recall.recall(NS, RecallQuery.parse({"query": "what does the user eat", **fields}), stamp=stamp)


def ids(page: RecallPage) -> list[int]:
    return [item.memory.id for item in page.items]


def later(timestamp: str, days: float) -> str:
    """The contract timestamp `days` after `timestamp`."""
    return format_timestamp(parse_timestamp(timestamp) + timedelta(days=days))


FOODS = (
    "The user eats no meat",
    "The user eats fish on fridays",
    "The user lives in Lyon",
    "The user eats no meat",
    "The user drinks tea",
    "The user eats no meat",
)


def test_every_match_is_ranked_by_score_then_id_both_descending(
    memories: MemoryService, repository: StoredMemories, clock: FakeClock
) -> None:
    for content in FOODS:
        create(memories, content)
    # Without the newer part, which would rank the repeats newest first by score (tests/core/recall/test_newer.py).
    recall = RecallService(
        repository, STAND_IN, RankingSettings(weights={**DEFAULT_WEIGHTS, "newer": 0.0}), clock=clock
    )

    page = ask(recall, stamp=False)

    ranked = sorted(page.items, key=lambda item: (item.score, item.memory.id), reverse=True)
    assert [item.memory.id for item in ranked] == ids(page)
    # The three equal memories tie on every part: newest id first.
    ties = [item.memory.id for item in page.items if item.memory.content == "The user eats no meat"]
    assert ties == [6, 4, 1]
    assert ids(page)[:3] == ties
    assert (page.total, page.has_more, page.limit, page.offset) == (len(FOODS), False, 10, 0)


def test_offset_pages_through_the_one_ranking_without_overlap_or_gap(
    memories: MemoryService, recall: RecallService
) -> None:
    for content in FOODS:
        create(memories, content)
    whole = ids(ask(recall, stamp=False))

    pages = [ask(recall, stamp=False, limit=4, offset=offset) for offset in (0, 4, 8)]

    assert [ids(page) for page in pages] == [whole[:4], whole[4:], []]
    assert [page.has_more for page in pages] == [True, False, False]
    assert {page.total for page in pages} == {len(FOODS)}


@pytest.mark.parametrize(
    "filters",
    [
        {},
        {"status": "active"},
        {"status": "invalid"},
        {"status": "deleted"},
        {"memory_type": "preference"},
        {"tag": " Food "},
        {"tag": "food", "status": "deleted"},
        {"tag": "nothing-has-this"},
        {"tag": "#not a tag"},
    ],
)
def test_the_filters_match_exactly_what_retrieval_matches_with_active_as_the_default_status(
    memories: MemoryService, recall: RecallService, filters: dict[str, Any]
) -> None:
    create(memories, "The user eats no meat", tags=["food"], memory_type="preference")
    create(memories, "The user ate fish once", tags=["food"], status="invalid")
    gone = create(memories, "The user eats eggs", tags=["food"])
    create(memories, "The user lives in Lyon", memory_type="identity")
    memories.delete(NS, gone.id)

    page = ask(recall, stamp=False, **filters)

    # Recall's default is status=active (CONTRACT.md): an invalid memory only when asked for.
    listed = memories.search(NS, RetrievalQuery.parse({"status": "active", **filters}), stamp=False)
    assert sorted(ids(page)) == sorted(memory.id for memory in listed.items)
    assert page.total == listed.total


def test_the_same_as_of_gives_the_same_answer_and_a_later_one_decays_recency_and_use(
    memories: MemoryService, recall: RecallService
) -> None:
    memory = create(memories, "The user eats no meat")
    memories.get(NS, memory.id)  # used once, right after it was written
    used_at = memories.get(NS, memory.id, stamp=False).last_accessed_at
    assert used_at is not None
    as_of = later(used_at, 0)

    first, again = ask(recall, stamp=False, as_of=as_of), ask(recall, stamp=False, as_of=as_of)
    half_recency = ask(recall, stamp=False, as_of=later(memory.updated_at, DEFAULT_RECENCY_HALF_LIFE_DAYS))
    half_use = ask(recall, stamp=False, as_of=later(used_at, DEFAULT_USE_HALF_LIFE_DAYS))

    assert first == again
    assert first.as_of == as_of
    assert [page.items[0].parts["recency"] for page in (first, half_recency)] == [1.0, 0.5]
    assert [page.items[0].parts["use"] for page in (first, half_use)] == [1.0, 0.5]


def test_the_returned_rows_are_stamped_with_one_timestamp_and_use_comes_from_the_stamp_before(
    memories: MemoryService, recall: RecallService, repository: StoredMemories
) -> None:
    made = [create(memories, content) for content in FOODS]
    memories.get(NS, made[0].id)  # read once before: its use part counts that read, not this recall's stamp
    before = {memory.id: repository.get(NS, memory.id) for memory in made}

    page = ask(recall, limit=3)

    (stamp,) = {item.memory.last_accessed_at for item in page.items}
    assert stamp is not None
    assert len(page.items) == 3
    for memory in made:
        stored, earlier = repository.get(NS, memory.id), before[memory.id]
        assert stored is not None
        assert earlier is not None
        assert stored.last_accessed_at == (stamp if memory.id in ids(page) else earlier.last_accessed_at), memory.id
    uses = {item.memory.id: item.parts["use"] for item in page.items}
    assert uses == {memory_id: (1.0 if memory_id == made[0].id else 0.0) for memory_id in uses}


def test_without_stamping_nothing_is_stamped_and_the_stored_stamps_show(
    memories: MemoryService, recall: RecallService, repository: StoredMemories
) -> None:
    made = [create(memories, content) for content in FOODS[:3]]
    memories.get(NS, made[1].id)
    before = [repository.get(NS, memory.id) for memory in made]

    page = ask(recall, stamp=False)

    assert [repository.get(NS, memory.id) for memory in made] == before
    assert {item.memory.id: item.memory for item in page.items} == {m.id: m for m in before if m is not None}


def test_a_question_the_model_cannot_embed_is_ranked_without_meaning_and_says_so(
    memories: MemoryService, repository: StoredMemories, clock: FakeClock
) -> None:
    for content in FOODS:
        create(memories, content)

    # Without the newer part: the stand-in's vectors take any two of these as versions, whose lift (up to the whole
    # newer weight) could outweigh the question's word (tests/core/recall/test_newer.py).
    settings = RankingSettings(weights={**DEFAULT_WEIGHTS, "newer": 0.0})
    page = RecallService(repository, Outage(), settings, clock=clock).recall(NS, RecallQuery.parse({"query": "eats"}))

    assert (page.ranking.semantic, page.total, page.ranking.unembedded) == (False, len(FOODS), 0)
    assert {item.parts["semantic"] for item in page.items} == {0.0}
    # Ranked on the other parts: the memories sharing the question's word first.
    eating = [item.memory.id for item in page.items if "eats" in item.memory.content]
    assert ids(page)[: len(eating)] == eating
    assert page.items[0].parts["lexical"] > 0


def test_memories_without_a_vector_of_the_model_are_ranked_and_counted_unembedded(
    repository: StoredMemories, clock: FakeClock, recall: RecallService
) -> None:
    waiting = MemoryService(repository, clock, indexer=RecallIndexer(Outage()))
    other_model = MemoryService(repository, clock, indexer=RecallIndexer(Renamed()))
    embedded = MemoryService(repository, clock, indexer=RecallIndexer(STAND_IN))
    create(waiting, "The user eats no meat")
    create(other_model, "The user eats fish")
    create(embedded, "The user eats eggs")
    embedded.update(NS, 1, MemoryChanges.parse({"memory_type": "preference"}))  # no new text: still waiting

    page = ask(recall, stamp=False)

    assert (page.total, page.ranking.unembedded, page.ranking.semantic) == (3, 2, True)
    semantic = {item.memory.id: item.parts["semantic"] for item in page.items}
    assert semantic[1] == semantic[2] == 0.0 < semantic[3]
    assert page.ranking.model == STAND_IN.model
