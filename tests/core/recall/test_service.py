"""The recall use case on the in-memory store: equal inputs give equal outputs (the same store asked twice, or two
stores built the same way), the limit is capped at 50, and the weights that ranked an answer are the settings' and
say how its scores were summed. tests/integration/test_recall_contract.py runs the contract on every store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.memory import InMemoryMemoryRepository
from core.clock import parse_timestamp
from core.limits import RECALL_MAX_LIMIT
from core.memories import MemoryService
from core.model import MEMORY_TYPES, Memory, MemoryChanges, NewMemory
from core.recall.answer import RecallPage
from core.recall.indexing import RecallIndexer
from core.recall.query import RecallQuery
from core.recall.ranking import PARTS, Part, RankingSettings
from core.recall.service import RecallService
from core.recall.standin import StandInEmbedder
from core.repository.digests import StoredStamp
from tests.conftest import FakeClock

NS = "alice"
STAND_IN = StandInEmbedder()
WORDS = ("user", "eats", "meat", "fish", "lives", "Lyon", "tea", "coffee", "works", "Apollo", "sister", "Ana")
TAGS = ("food", "place", "person", "work")


def built(rows: list[dict[str, Any]], reads: list[int], ranking: RankingSettings | None = None) -> RecallService:
    """A store holding `rows` (written in order, on a clock of its own), the ones at `reads` read, the first marked
    invalid, and the recall over it."""
    clock = FakeClock()
    repository = InMemoryMemoryRepository()
    memories = MemoryService(repository, clock, indexer=RecallIndexer(STAND_IN))
    for row in rows:
        memories.create(NS, NewMemory.parse(row))
    if rows:
        for index in reads:
            memories.get(NS, index % len(rows) + 1)
        memories.update(NS, 1, MemoryChanges.parse({"status": "invalid"}))
    return RecallService(repository, STAND_IN, ranking, clock=clock)


ROWS = st.lists(
    st.fixed_dictionaries(
        {
            "content": st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),
            "tags": st.lists(st.sampled_from(TAGS), max_size=2),
            "memory_type": st.sampled_from(MEMORY_TYPES),
        }
    ),
    max_size=12,
)
QUESTIONS = st.fixed_dictionaries(
    {"query": st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)},
    optional={
        "status": st.sampled_from(("active", "invalid", "deleted")),
        "tag": st.sampled_from(TAGS),
        "limit": st.integers(1, 8),
        "offset": st.integers(0, 6),
        "as_of": st.sampled_from(("2026-04-06T14:12:00Z", "2026-10-03T00:00:00+02:00", "2031-01-01T00:00:00Z")),
    },
)


def answer(page: RecallPage) -> list[tuple[int, float, dict[Part, float]]]:
    return [(item.memory.id, item.score, dict(item.parts)) for item in page.items]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=ROWS, reads=st.lists(st.integers(0, 11), max_size=4), question=QUESTIONS)
def test_equal_inputs_give_equal_outputs(rows: list[dict[str, Any]], reads: list[int], question: dict[str, Any]):
    query = RecallQuery.parse({"as_of": "2026-05-01T00:00:00Z", **question})
    one, twin = built(rows, reads), built(rows, reads)

    first = one.recall(NS, query, stamp=False)
    again = one.recall(NS, query, stamp=False)
    twins = twin.recall(NS, query, stamp=False)

    assert first == again == twins
    assert answer(first) == answer(twins)
    assert [item.score for item in first.items] == sorted((item.score for item in first.items), reverse=True)


def test_a_limit_over_fifty_is_served_as_fifty() -> None:
    recall = built([{"content": f"the user eats dish {n}"} for n in range(RECALL_MAX_LIMIT + 2)], [])

    page = recall.recall(NS, RecallQuery.parse({"query": "what does the user eat", "limit": 500}))

    assert (page.limit, len(page.items), page.total, page.has_more) == (
        RECALL_MAX_LIMIT,
        RECALL_MAX_LIMIT,
        RECALL_MAX_LIMIT + 1,  # the first, marked invalid, is not recalled unless asked for
        True,
    )


def test_the_answer_shows_the_weights_that_ranked_it_and_each_score_is_their_sum_over_the_parts() -> None:
    ranking = RankingSettings(
        weights={"lexical": 0.5, "semantic": 0.2, "recency": 0.1, "use": 0.15, "type": 0.05},
        recency_half_life_days=7,
        type_priors={"identity": 1.0, "preference": 0.8, "fact": 0.5, "event": 0.2},
    )
    rows = [{"content": "the user eats fish", "memory_type": kind} for kind in MEMORY_TYPES]
    page = built(rows, [2], ranking).recall(NS, RecallQuery.parse({"query": "fish", "as_of": "2026-05-01T00:00:00Z"}))

    assert page.ranking.weights == ranking.weights
    for item in page.items:
        assert item.parts["type"] == ranking.type_priors[item.memory.memory_type]
        assert item.score == round(sum(ranking.weights[part] * item.parts[part] for part in PARTS), 6)
    first = page.items[0]
    days = (parse_timestamp(page.as_of) - parse_timestamp(first.memory.updated_at)).total_seconds() / 86400
    assert first.parts["recency"] == round(0.5 ** (days / 7), 6)


class CountingRecords(InMemoryMemoryRepository):
    """The in-memory store, noting every id whose record recall reads."""

    def __init__(self) -> None:
        super().__init__()
        self.records_read: list[int] = []

    def records(self, namespace: str, memory_ids: Sequence[int]) -> list[Memory]:
        self.records_read += memory_ids
        return super().records(namespace, memory_ids)


def test_a_page_past_the_last_match_reads_no_record() -> None:
    clock = FakeClock()
    store = CountingRecords()
    memories = MemoryService(store, clock, indexer=RecallIndexer(STAND_IN))
    for n in range(40):
        memories.create(NS, NewMemory.parse({"content": " ".join(WORDS[j] for j in range(12) if n >> j & 1) or "x"}))
    recall = RecallService(store, STAND_IN, clock=clock)

    for offset in (40, 41, 2**63 - 1):
        page = recall.recall(NS, RecallQuery.parse({"query": "what does the user eat", "offset": offset}))

        assert (page.items, page.total, page.offset, page.has_more) == ([], 40, offset, False)
    assert store.records_read == []


class DeletedMeanwhile(InMemoryMemoryRepository):
    """A store where memory 2 is deleted after recall read the digests and before it reads or stamps the stamps."""

    def __init__(self, memories: list[MemoryService]) -> None:
        super().__init__()
        self.memories = memories

    def _meanwhile(self, namespace: str, memory_ids: Sequence[int]) -> None:
        if 2 in memory_ids and getattr(self.get(namespace, 2), "status", None) == "active":
            self.memories[0].delete(namespace, 2)

    def stored_stamps(self, namespace: str, memory_ids: Sequence[int]) -> dict[int, StoredStamp]:
        self._meanwhile(namespace, memory_ids)
        return super().stored_stamps(namespace, memory_ids)

    def stamp_with_prior(self, namespace: str, memory_ids: Sequence[int], accessed_at: str) -> dict[int, StoredStamp]:
        self._meanwhile(namespace, memory_ids)
        return super().stamp_with_prior(namespace, memory_ids, accessed_at)


@pytest.mark.parametrize("stamp", [False, True], ids=["stamps read", "stamps learnt from stamping"])
def test_a_memory_deleted_between_the_digests_and_the_stamps_is_not_counted_in_the_total(stamp: bool) -> None:
    clock = FakeClock()
    services: list[MemoryService] = []
    store = DeletedMeanwhile(services)
    services.append(MemoryService(store, clock, indexer=RecallIndexer(STAND_IN)))
    for text in ("the user eats rice", "the user eats bread", "the user eats fish"):
        services[0].create(NS, NewMemory.parse({"content": text}))
    recall = RecallService(store, STAND_IN, clock=clock)

    page = recall.recall(NS, RecallQuery.parse({"query": "what does the user eat"}), stamp=stamp)

    assert sorted(item.memory.id for item in page.items) == [1, 3]
    assert (page.total, page.has_more) == (2, False)
    assert getattr(store.get(NS, 2), "last_accessed_at", "purged") is None  # a deleted memory is not stamped


def test_recall_leaves_invalid_memories_out_unless_asked_for_them_by_status() -> None:
    recall = built([{"content": "the user eats fish"}, {"content": "the user eats beans"}], [])  # 1 is invalid

    default = recall.recall(NS, RecallQuery.parse({"query": "what does the user eat"}))
    invalid = recall.recall(NS, RecallQuery.parse({"query": "what does the user eat", "status": "invalid"}))
    active = recall.recall(NS, RecallQuery.parse({"query": "what does the user eat", "status": "active"}))

    assert [item.memory.id for item in default.items] == [item.memory.id for item in active.items] == [2]
    assert (default.total, [item.memory.id for item in invalid.items]) == (1, [1])
