"""Recall over a large namespace with a vector search engine (core.recall.large): past the threshold its candidates are
the nearest memories the engine names, re-read from the store (their status as the store holds it) and ranked as every
recall is; below it, or without an engine, or without a vector for the question, recall reads the namespace as today.
The engine here is the S3 Vectors adapter over the in-memory S3 Vectors (adapters/memory/s3vectors.py)."""

from __future__ import annotations

from collections.abc import Sequence

import boto3
from botocore.stub import Stubber

from adapters.memory import InMemoryMemoryRepository
from adapters.memory.s3vectors import FakeS3Vectors
from adapters.s3vectors import IndexedVector, S3VectorIndex
from core.digest import Vector
from core.memories import MemoryService
from core.model import MemoryChanges, NewMemory
from core.recall.embedding import EmbedderUnavailableError, Kind
from core.recall.indexing import RecallIndexer
from core.recall.query import RecallQuery
from core.recall.service import RecallService
from core.recall.standin import STAND_IN_DIMENSIONS, StandInEmbedder
from core.repository.digests import CandidateFilter
from tests.conftest import FakeClock

NS = "team"
STAND_IN = StandInEmbedder()
CONTENTS = (
    "the user eats fish on fridays",
    "the user lives in Lyon",
    "tea in the morning, coffee after lunch",
    "works on project Apollo with Ana",
    "Ana is the user's sister",
    "the user drinks no coffee after six",
    "fish market in Lyon on sundays",
    "Apollo ships in March",
)


def _store() -> tuple[InMemoryMemoryRepository, MemoryService, FakeClock]:
    clock = FakeClock()
    repository = InMemoryMemoryRepository()
    memories = MemoryService(repository, clock, indexer=RecallIndexer(STAND_IN))
    for number, content in enumerate(CONTENTS):
        memories.create(NS, NewMemory.parse({"content": content, "tags": ["even" if number % 2 else "odd"]}))
    return repository, memories, clock


def _index(repository: InMemoryMemoryRepository) -> S3VectorIndex:
    """An S3 Vectors index holding the namespace's vectors as the stream consumer writes them."""
    engine = FakeS3Vectors()
    engine.create_index("memories", "digests", STAND_IN_DIMENSIONS)
    index = S3VectorIndex(engine, "memories", "digests", STAND_IN.model, sizes=lambda _: len(CONTENTS))
    rows = repository.digest_snapshot(NS).rows
    index.put([IndexedVector(NS, row) for row in rows if index.keeps(row)])
    return index


class _Named:
    """An engine naming fixed ids, whatever it is asked."""

    def __init__(self, ids: Sequence[int]) -> None:
        self.ids = list(ids)
        self.asked: list[list[str]] = []

    def holds(self, namespace: str) -> int:
        return 1_000_000

    def nearest(
        self, namespace: str, vector: Vector, filters: CandidateFilter, k: int, holding: Sequence[str] = ()
    ) -> list[int]:
        self.asked.append(list(holding))
        return self.ids


class _Unavailable(StandInEmbedder):
    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        raise EmbedderUnavailableError("down")


def test_a_large_namespace_is_ranked_from_the_nearest_candidates_exactly_as_when_read_whole() -> None:
    repository, _, clock = _store()
    index = _index(repository)
    for filters in ({}, {"tag": "even"}, {"status": "active", "memory_type": "fact"}):
        query = RecallQuery.model_validate({"query": "fish in Lyon", **filters})
        whole = RecallService(repository, STAND_IN, clock=clock, warm_bytes=0)
        nearest = RecallService(repository, STAND_IN, clock=clock, warm_bytes=0, vectors=index, large_namespace=5)
        expected = whole.recall(NS, query, stamp=False)
        found = nearest.recall(NS, query.model_copy(update={"as_of": expected.as_of}), stamp=False)
        assert found.model_dump() == expected.model_dump(), filters


def test_a_memory_deleted_since_the_index_was_written_is_not_recalled() -> None:
    repository, memories, clock = _store()
    index = _index(repository)  # not told of the deletion below: the store's status decides
    memories.update(NS, 1, MemoryChanges.parse({"status": "invalid"}))
    memories.delete(NS, 7)
    page = RecallService(repository, STAND_IN, clock=clock, vectors=index, large_namespace=5).recall(
        NS, RecallQuery(query="fish"), stamp=False
    )
    assert {item.memory.id for item in page.items} == {2, 3, 4, 5, 6, 8}


def test_only_the_named_candidates_are_ranked_and_counted_in_a_large_namespace() -> None:
    repository, _, clock = _store()
    page = RecallService(repository, STAND_IN, clock=clock, vectors=_Named([2, 4, 99])).recall(
        NS, RecallQuery(query="fish"), stamp=False
    )
    assert sorted(item.memory.id for item in page.items) == [2, 4]
    assert page.total == 2


def test_a_namespace_at_or_below_the_threshold_is_read_whole() -> None:
    repository, _, clock = _store()
    service = RecallService(repository, STAND_IN, clock=clock, vectors=_index(repository), large_namespace=8)
    assert service.recall(NS, RecallQuery(query="fish"), stamp=False).total == len(CONTENTS)


def test_a_large_namespace_is_read_whole_when_the_question_has_no_vector() -> None:
    repository, _, clock = _store()
    service = RecallService(repository, _Unavailable(), clock=clock, vectors=_Named([2]))
    page = service.recall(NS, RecallQuery(query="fish"), stamp=False)
    assert page.total == len(CONTENTS)
    assert not page.ranking.semantic


def test_a_large_namespace_is_read_whole_when_the_index_cannot_answer() -> None:
    repository, _, clock = _store()
    client = boto3.client("s3vectors", region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t")
    index = S3VectorIndex(client, "memories", "digests", STAND_IN.model, sizes=lambda _: len(CONTENTS))
    service = RecallService(repository, STAND_IN, clock=clock, vectors=index, large_namespace=5)
    with Stubber(client) as stubber:
        for _ in range(2):  # the nearest, and the nearest holding the question's words
            stubber.add_client_error("query_vectors", "ServiceUnavailableException", http_status_code=503)
        page = service.recall(NS, RecallQuery(query="fish"), stamp=False)
        stubber.assert_no_pending_responses()
    assert page.total == len(CONTENTS)
    assert page.ranking.semantic


def test_the_engine_is_asked_for_the_nearest_and_the_nearest_holding_the_question_s_words() -> None:
    repository, _, clock = _store()
    engine = _Named([2, 4])
    RecallService(repository, STAND_IN, clock=clock, vectors=engine).recall(
        NS, RecallQuery(query="Where does the user buy fish?"), stamp=False
    )
    assert sorted(engine.asked) == [[], ["buy"], ["fish"], ["user"]]  # its terms but the stop words, one a query


def test_a_memory_far_in_meaning_that_holds_the_question_s_word_is_among_a_large_namespace_s_candidates() -> None:
    clock = FakeClock()
    repository = InMemoryMemoryRepository()
    memories = MemoryService(repository, clock, indexer=RecallIndexer(STAND_IN))
    for number in range(110):  # nearer the question in meaning than the memory below: more than the engine names
        memories.create(NS, NewMemory.parse({"content": f"fish stall {number}"}))
    far = memories.create(NS, NewMemory.parse({"content": "Lyon: zebra yak quokka"})).id
    engine = FakeS3Vectors()
    engine.create_index("memories", "digests", STAND_IN_DIMENSIONS)
    index = S3VectorIndex(engine, "memories", "digests", STAND_IN.model, sizes=lambda _: 111)
    index.put([IndexedVector(NS, row) for row in repository.digest_snapshot(NS).rows])
    query = RecallQuery.model_validate({"query": "fish from Lyon", "limit": 2})
    whole = RecallService(repository, STAND_IN, clock=clock, warm_bytes=0).recall(NS, query, stamp=False)
    assert far in [item.memory.id for item in whole.items]  # ranked by its rare word

    page = RecallService(repository, STAND_IN, clock=clock, vectors=index, large_namespace=5).recall(
        NS, query.model_copy(update={"as_of": whole.as_of}), stamp=False
    )
    assert far not in index.nearest(NS, STAND_IN.embed(["fish from Lyon"], "query")[0], query, 100)
    assert [item.memory.id for item in page.items] == [item.memory.id for item in whole.items]
