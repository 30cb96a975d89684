"""What a recall reads of the matches that can reach its page (core.recall.reach), on the in-memory store: ranked
without meaning (the question not embedded, or every stored vector another model's), it reads every match's stamp and
no record (the page is answered from the digests); with no weight on use, ties below the page read nothing; a match
gone between its digest and its stamp gives its place to the next; and whatever the weights and the model, every page
is its slice of the ranking read whole, and a stamped page (its stamps learnt from stamping it) is the page a recall
stamping nothing returns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.memory import InMemoryMemoryRepository
from core.digest import Vector
from core.memories import MemoryService
from core.model import Memory, NewMemory
from core.recall.embedding import Embedder, EmbedderUnavailableError, Kind
from core.recall.indexing import RecallIndexer
from core.recall.query import RecallQuery
from core.recall.ranking import DEFAULT_WEIGHTS, PARTS, RankingSettings
from core.recall.service import RecallService
from core.recall.standin import StandInEmbedder
from core.repository.digests import StoredStamp
from tests.conftest import FakeClock

NS = "alice"
STAND_IN = StandInEmbedder()


class Renamed(StandInEmbedder):
    """The model a deployment moved to: none of the stored vectors is its own yet."""

    model = "stand-in:renamed"


class Unreachable(StandInEmbedder):
    """The stored vectors' model, unable to embed the question."""

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        raise EmbedderUnavailableError("the model is unreachable")


class Counting(InMemoryMemoryRepository):
    """The in-memory store, noting every id whose record, or whose stamp, recall reads; `gone_on_read` is deleted
    when its stamp is first asked for (by `deleter`), as if deleted between the digests and the stamps."""

    def __init__(self) -> None:
        super().__init__()
        self.records_read: list[int] = []
        self.stamps_read: list[int] = []
        self.gone_on_read: int | None = None
        self.deleter: MemoryService | None = None

    def records(self, namespace: str, memory_ids: Sequence[int]) -> list[Memory]:
        self.records_read += memory_ids
        return super().records(namespace, memory_ids)

    def stored_stamps(self, namespace: str, memory_ids: Sequence[int]) -> dict[int, StoredStamp]:
        self.stamps_read += memory_ids
        gone, self.gone_on_read = self.gone_on_read, None
        if gone is not None and gone in memory_ids and self.deleter is not None:
            self.deleter.delete(namespace, gone)
        return super().stored_stamps(namespace, memory_ids)


def stocked(clock: FakeClock, count: int = 40) -> tuple[Counting, MemoryService]:
    """`count` memories sharing no word with the questions asked, nor with one another (so that none restates
    another: core.recall.newer), every fifth used, days apart."""
    store = Counting()
    memories = MemoryService(store, clock, indexer=RecallIndexer(STAND_IN))
    for n in range(count):
        memories.create(NS, NewMemory.parse({"content": f"plant{n} seed{n} rake{n}"}))
    for memory_id in range(3, count + 1, 5):
        clock.advance(days=2)
        memories.get(NS, memory_id)
    store.records_read.clear()
    return store, memories


@pytest.mark.parametrize("embedder", [Renamed(), Unreachable()], ids=["another model's vectors", "no question vector"])
@pytest.mark.parametrize("offset", [0, 5, 20, 37])
def test_ranked_without_meaning_a_recall_reads_every_stamp_and_no_record(
    clock: FakeClock, embedder: Embedder, offset: int
) -> None:
    store, _ = stocked(clock)
    recall = RecallService(store, embedder, clock=clock)

    page = recall.recall(NS, RecallQuery.parse({"query": "which sports", "limit": 5, "offset": offset}), stamp=False)

    assert page.ranking.semantic is not isinstance(embedder, Unreachable)
    assert store.records_read == []
    assert len(page.items) == min(5, 40 - offset)
    assert sorted(store.stamps_read) == list(range(1, 41))


def test_with_no_weight_on_use_ties_below_the_page_read_no_stamp(clock: FakeClock) -> None:
    store, _ = stocked(clock)
    settings = RankingSettings(weights={**DEFAULT_WEIGHTS, "use": 0.0})
    recall = RecallService(store, Renamed(), settings, clock=clock)

    page = recall.recall(NS, RecallQuery.parse({"query": "which sports", "limit": 10}), stamp=False)

    assert [item.memory.id for item in page.items] == list(range(40, 30, -1))  # ties: by id, descending
    assert store.records_read == []
    assert sorted(store.stamps_read) == list(range(31, 41))  # the page's own stamps, to show: none below it


def test_a_match_gone_between_its_digest_and_its_stamp_gives_its_place_to_the_next(clock: FakeClock) -> None:
    store, memories = stocked(clock)
    # No warm index: each recall reads the digests, then the stamps; the memory is deleted between the two.
    recall = RecallService(store, Renamed(), clock=clock, warm_bytes=0)
    question = RecallQuery.parse({"query": "which sports", "limit": 5})
    before = [item.memory.id for item in recall.recall(NS, question, stamp=False).items]
    total = recall.recall(NS, question, stamp=False).total
    store.gone_on_read, store.deleter = before[2], memories

    after = recall.recall(NS, question, stamp=False)

    ids = [item.memory.id for item in after.items]
    assert ids[:4] == [memory_id for memory_id in before if memory_id != before[2]]
    assert len(ids) == 5
    assert ids[4] not in before
    assert after.total == total - 1


WORDS = ("user", "eats", "fish", "lives", "Lyon", "tea", "works", "Apollo")
WEIGHTS = st.fixed_dictionaries({part: st.sampled_from((0.0, 0.001, 0.15, 0.5)) for part in PARTS})


# A namespace of up to 14 short memories, some used, and a question, weights, page size and model to recall with.
PAGES = given(
    contents=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join), max_size=14),
    reads=st.lists(st.integers(0, 13), max_size=8),
    weights=WEIGHTS,
    question=st.sampled_from(("which sports", "what does the user eat", "Lyon")),
    limit=st.integers(1, 4),
    model=st.sampled_from((STAND_IN, Renamed(), Unreachable())),
)


def recalling(
    contents: list[str], reads: list[int], weights: dict[Any, float], model: Embedder
) -> tuple[Counting, RecallService, FakeClock]:
    """The memories written and read as `contents` and `reads` say, and a recall of them with `weights` by `model`."""
    clock = FakeClock()
    store = Counting()
    memories = MemoryService(store, clock, indexer=RecallIndexer(STAND_IN))
    for content in contents:
        memories.create(NS, NewMemory.parse({"content": content}))
    for index in reads if contents else []:
        clock.advance(hours=7)
        memories.get(NS, index % len(contents) + 1)
    return store, RecallService(store, model, RankingSettings(weights=weights), clock=clock), clock


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@PAGES
def test_every_page_is_its_slice_of_the_ranking_read_whole(
    contents: list[str], reads: list[int], weights: dict[Any, float], question: str, limit: int, model: Embedder
) -> None:
    _, recall, _ = recalling(contents, reads, weights, model)
    asked = {"query": question, "as_of": "2026-06-01T00:00:00Z"}

    # At most 14 matches, under the limit of 50: every match is on the page, and the ranking is the whole one.
    whole = recall.recall(NS, RecallQuery.parse({**asked, "limit": 50}), stamp=False)
    pages = [
        recall.recall(NS, RecallQuery.parse({**asked, "limit": limit, "offset": offset}), stamp=False)
        for offset in range(0, len(contents) + 1, limit)
    ]

    ranked = [(item.memory.id, item.score, item.parts) for item in whole.items]
    assert [(item.memory.id, item.score, item.parts) for page in pages for item in page.items] == ranked
    assert {page.total for page in pages} == {whole.total}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    contents=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join), min_size=21, max_size=45),
    weights=WEIGHTS,
    question=st.sampled_from(("which sports", "what does the user eat", "Lyon")),
    limit=st.integers(1, 4),
)
def test_a_first_page_of_many_matches_is_the_start_of_the_ranking_read_whole(
    contents: list[str], weights: dict[Any, float], question: str, limit: int
) -> None:
    """More matches than the `newer` pool and the page: only those an estimate cannot rule out are scored exactly
    (core.recall.reach.near), and the page is what ranking every one of them gives."""
    _, recall, _ = recalling(contents, [], weights, STAND_IN)
    asked = {"query": question, "as_of": "2026-06-01T00:00:00Z"}

    whole = recall.recall(NS, RecallQuery.parse({**asked, "limit": 50}), stamp=False)
    page = recall.recall(NS, RecallQuery.parse({**asked, "limit": limit}), stamp=False)

    assert [(item.memory.id, item.score, item.parts) for item in page.items] == [
        (item.memory.id, item.score, item.parts) for item in whole.items[:limit]
    ]
    assert page.total == whole.total == len(contents)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@PAGES
def test_a_stamped_page_is_the_page_a_recall_stamping_nothing_returns_and_says_the_stamps_held_before(
    contents: list[str], reads: list[int], weights: dict[Any, float], question: str, limit: int, model: Embedder
) -> None:
    store, recall, clock = recalling(contents, reads, weights, model)
    asked = {"query": question, "as_of": "2026-06-01T00:00:00Z"}

    for offset in [0, 0, *range(limit, len(contents) + 1, limit)]:  # the first page twice: its stamps changed
        clock.advance(hours=1)
        query = RecallQuery.parse({**asked, "limit": limit, "offset": offset})
        unstamped = recall.recall(NS, query, stamp=False)
        every = range(1, len(contents) + 1)
        before = {memory.id: memory.last_accessed_at for memory in store.records(NS, every)}
        stamped = recall.recall(NS, query)

        def shown(page: Any) -> list[tuple[int, float, Any]]:
            return [(item.memory.id, item.score, item.parts) for item in page.items]

        assert shown(stamped) == shown(unstamped)
        assert stamped.total == unstamped.total
        stamps = [item.memory.last_accessed_at for item in stamped.items]
        assert len(set(stamps)) <= 1  # the recall's moment
        assert [memory.last_accessed_at for memory in store.records(NS, [i for i, _, _ in shown(stamped)])] == stamps
        after = {memory.id: memory.last_accessed_at for memory in store.records(NS, every)}
        assert {i for i in before if after[i] != before[i]} <= {i for i, _, _ in shown(stamped)}  # the page alone
