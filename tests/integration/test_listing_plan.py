"""How the adapter reads a listing, on Amazon DynamoDB Local, with the in-memory store as the oracle for what it
returns: a search reads the namespace in id segments at once (the last one open-ended), a filtered listing sizes
its Queries from the stored totals, and a deep offset skips rows by their keys only."""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

import pytest

from core.contract import RetrievalQuery
from core.limits import MAX_MEMORY_ID
from core.memories import MemoryService
from core.model import MEMORY_TYPES, MemoryChanges, NewMemory
from core.repository.dynamodb import DynamoDBMemoryRepository, listing
from core.repository.dynamodb.codec import INDEXES, memory_sort_key
from tests.conftest import Engine, FakeClock
from tests.inmemory import InMemoryMemoryRepository

NS = "alice"
SORTS = ["id", "created_at", "updated_at", "last_accessed_at"]


class Queries:
    """The parameters of every Query the engine's client sends."""

    def __init__(self, engine: Engine) -> None:
        self.sent: list[dict[str, Any]] = []
        assert engine.client is not None
        engine.client.meta.events.register("before-parameter-build.dynamodb.Query", self._record)

    def _record(self, params: dict[str, Any], **_: Any) -> None:
        self.sent.append(dict(params))


@pytest.fixture
def twins(ddb_local_engine: Engine, clock: FakeClock) -> tuple[MemoryService, MemoryService]:
    """The same memories stored twice, on DynamoDB Local and in memory, written through the same calls."""
    assert ddb_local_engine.client is not None
    table = ddb_local_engine.new_table()
    return (
        MemoryService(DynamoDBMemoryRepository(ddb_local_engine.client, table), clock),
        MemoryService(InMemoryMemoryRepository(), clock),
    )


def stock(services: tuple[MemoryService, ...], count: int, seed: int = 7) -> None:
    """`count` memories: a tag and a word on some, every type, some invalid, some deleted, some read."""
    rng = random.Random(seed)
    bodies = []
    for n in range(count):
        tags = ["travel"] if rng.random() < 0.3 else []
        content = f"memory {n}" + (" about Espresso" if rng.random() < 0.25 else "")
        status = "invalid" if rng.random() < 0.1 else "active"
        bodies.append({"content": content, "tags": tags, "memory_type": rng.choice(MEMORY_TYPES), "status": status})
    deleted = set(rng.sample(range(1, count + 1), count // 10))
    read = rng.sample(range(1, count + 1), count // 5)
    patched = rng.sample(range(1, count + 1), count // 5)
    for service in services:
        for body in bodies:
            service.create(NS, NewMemory.parse(body))
        for memory_id in patched:
            service.update(NS, memory_id, MemoryChanges.parse({"content": f"patched {memory_id}"}))
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


def test_a_search_reads_every_segment_at_once_and_returns_what_the_core_defines(
    twins: tuple[MemoryService, MemoryService], ddb_local_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(listing, "SEGMENT_IDS", 7)
    stock(twins, 60)
    queries = Queries(ddb_local_engine)
    for sort, fields in itertools.product(SORTS, [{"q": "espresso"}, {"tag": "travel"}, {"q": "memory"}]):
        for offset, limit in [(0, 5), (3, 10), (40, 100), (1000, 1)]:
            queries.sent.clear()
            same_page(twins, RetrievalQuery.parse({**fields, "sort": sort, "offset": offset, "limit": limit}))
            ranges = sorted(
                (q["ExpressionAttributeValues"][":first"]["S"], q["ExpressionAttributeValues"][":last"]["S"])
                for q in queries.sent
            )
            # ceil(60 / 7) segments of 7 ids, each one Query (each is far under 1 MB), the last open-ended.
            assert len(ranges) == math.ceil(60 / 7), (sort, fields)
            assert ranges[0][0] == memory_sort_key(1)["S"]
            assert ranges[-1] == (memory_sort_key(57)["S"], memory_sort_key(MAX_MEMORY_ID)["S"])
            assert all(q["KeyConditionExpression"] == "pk = :pk AND sk BETWEEN :first AND :last" for q in queries.sent)


def test_a_search_finds_a_memory_whose_id_is_beyond_the_counter_read(
    twins: tuple[MemoryService, MemoryService], ddb_local_engine: Engine
) -> None:
    dynamodb, _ = twins
    stock((dynamodb,), 5)
    repository: Any = dynamodb._repository
    late = dynamodb.create(NS, NewMemory.parse({"content": "espresso, late"}))
    repository.add(NS, late.model_copy(update={"id": 5000}))  # as if the counter read were stale

    found = dynamodb.search(NS, RetrievalQuery.parse({"q": "late"}))

    assert [m.id for m in found.items] == [late.id, 5000]


@pytest.mark.parametrize("fields", [{"status": "invalid"}, {"memory_type": "event"}, {"status": "active"}, {}])
def test_a_filtered_listing_sizes_its_queries_from_the_stored_totals(
    twins: tuple[MemoryService, MemoryService], ddb_local_engine: Engine, fields: dict[str, str]
) -> None:
    stock(twins, 150)
    queries = Queries(ddb_local_engine)
    for sort, limit in itertools.product(SORTS, [5, 20]):
        queries.sent.clear()
        same_page(twins, RetrievalQuery.parse({**fields, "sort": sort, "limit": limit}))
        # The first Query goes with the totals read; every later one is sized from the matching share.
        assert len(queries.sent) <= 3, (sort, limit, [q["Limit"] for q in queries.sent])


@pytest.mark.parametrize("sort", SORTS)
def test_a_deep_offset_skips_rows_by_their_keys_only(
    twins: tuple[MemoryService, MemoryService],
    ddb_local_engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    sort: str,
) -> None:
    monkeypatch.setattr(listing, "SKIP_KEYS_FROM", 10)
    stock(twins, 80)
    queries = Queries(ddb_local_engine)
    for fields, offset in itertools.product([{}, {"status": "invalid"}, {"memory_type": "fact"}], [10, 23, 60, 500]):
        queries.sent.clear()
        query = RetrievalQuery.parse({**fields, "sort": sort, "offset": offset, "limit": 7})
        total = same_page(twins, query)
        skipping = [q for q in queries.sent if q["ProjectionExpression"].count(",") <= 2]
        if offset < total:
            assert skipping, (fields, offset)
        index_key = None if sort == "id" else INDEXES[sort][1]
        for q in skipping:
            assert q["ProjectionExpression"] == ", ".join(filter(None, ("pk", "sk", index_key)))
        page_reads = [q for q in queries.sent if q not in skipping]
        assert all("content" in q["ProjectionExpression"] for q in page_reads)


def test_a_shallow_offset_reads_the_skipped_rows_with_the_page_in_one_query(
    twins: tuple[MemoryService, MemoryService], ddb_local_engine: Engine
) -> None:
    stock(twins, 40)
    queries = Queries(ddb_local_engine)

    same_page(twins, RetrievalQuery.parse({"offset": 5, "limit": 10}))

    assert len(queries.sent) == 1
    assert "content" in queries.sent[0]["ProjectionExpression"]
