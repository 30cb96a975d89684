"""Search copies (codec.py, searchcopies.py) on Amazon DynamoDB Local, with the in-memory store as the oracle: they
mirror their memories through every write and go with a purge, a `q` search reads them (and finds what the core
defines) instead of the records, and reads fewer units than the same search through the records."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from adapters.dynamodb.codec import SEARCH_PREFIX
from adapters.dynamodb.memories import DynamoDBMemoryRepository
from adapters.dynamodb.searchcopies import searchable
from adapters.memory import InMemoryMemoryRepository
from core.contract import RetrievalQuery
from core.memories import MemoryService
from core.model import MemoryChanges, NewMemory
from tests.conftest import Engine, FakeClock
from tests.copies import assert_search_copies_mirror
from tests.listings import NS, TAGS, Queries, same_page, stock

SEARCHES = [
    RetrievalQuery.parse({**fields, "sort": sort, "offset": offset, "limit": limit})
    for fields, sort, (offset, limit) in itertools.product(
        [
            {"q": "espresso"},
            {"q": "MEMORY 1"},
            {"q": "trav"},
            {"q": "espresso", "status": "invalid"},
            {"q": "memory", "memory_type": "event"},
            {"q": "espresso", "status": "deleted"},
            {"q": "memory", "tag": "food"},
        ],
        ["id", "created_at", "updated_at", "last_accessed_at"],
        [(0, 10), (5, 20)],
    )
]


@pytest.fixture
def twins(ddb_local_engine: Engine, ddb_local_table: str, clock: FakeClock) -> tuple[MemoryService, MemoryService]:
    """The same memories on DynamoDB Local and in memory, the DynamoDB store without warm copies: every search here
    is read as a process's first (a warm one reads what changed: tests/integration/test_warm_index.py)."""
    cold = DynamoDBMemoryRepository(ddb_local_engine.client, ddb_local_table, warm_search_bytes=0)
    return MemoryService(cold, clock), MemoryService(InMemoryMemoryRepository(), clock)


def on_copies(queries: Queries) -> list[dict[str, Any]]:
    """The Queries sent that read search copies."""
    return [
        q
        for q in queries.sent
        if q["ExpressionAttributeValues"].get(":first", {}).get("S", "").startswith(SEARCH_PREFIX)
    ]


def all_same(twins: tuple[MemoryService, MemoryService], queries: Queries) -> None:
    """Every search of SEARCHES returns the oracle's page and total; each one the copies can answer reads them and
    nothing else, and no other reads them."""
    for query in SEARCHES:
        queries.sent.clear()
        same_page(twins, query)
        read = on_copies(queries)
        if searchable(query) and query.tag is None:
            assert read, query
            assert len(read) == len(queries.sent), query
        else:
            assert not read, query


def test_search_copies_mirror_their_memories_through_every_write_and_go_with_a_purge_and_answer_q_searches(
    twins: tuple[MemoryService, MemoryService], ddb_local_engine: Engine, ddb_local_table: str
) -> None:
    stock(twins, 80)
    deleted = twins[0].search(NS, RetrievalQuery.parse({"status": "deleted", "limit": 100})).items
    assert len(deleted) >= 3
    for service in twins:
        for memory in deleted[:3]:
            service.purge(NS, memory.id)
        service.restore(NS, deleted[3].id)
        service.update(NS, deleted[3].id, MemoryChanges.parse({"content": "Espresso, retold", "tags": ["food"]}))

    assert_search_copies_mirror(ddb_local_engine, ddb_local_table, NS)
    all_same(twins, Queries(ddb_local_engine))


def test_a_search_of_the_copies_reads_under_half_the_units_of_the_same_search_of_the_records(
    twins: tuple[MemoryService, MemoryService],
    ddb_local_engine: Engine,
    ddb_local_table: str,
) -> None:
    """Counted as DynamoDB counts them: the Queries' consumed read units, with the records holding mixed-case prose."""
    dynamodb, _ = twins
    rng = random.Random(5)
    words = [
        "The",
        "user",
        "prefers",
        "Espresso",
        "in",
        "the",
        "Morning",
        "and",
        "reads",
        "about",
        "Jazz",
        "Piano",
        "and",
        "Travel",
        "to",
        "Lisbon",
        "memory",
    ]
    for _ in range(300):
        content = " ".join(rng.choice(words) for _ in range(rng.randint(10, 60)))
        dynamodb.create(NS, NewMemory.parse({"content": content, "tags": rng.sample(TAGS, rng.randint(0, 2))}))
    consumed: list[float] = []

    def count(parsed: dict[str, Any], **_: Any) -> None:
        consumed.append(parsed.get("ConsumedCapacity", {}).get("CapacityUnits", 0.0))

    assert ddb_local_engine.client is not None
    events = ddb_local_engine.client.meta.events

    def units(service: MemoryService, query: RetrievalQuery) -> tuple[float, int]:
        consumed.clear()
        events.register("before-parameter-build.dynamodb.Query", _total_consumed)
        events.register("after-call.dynamodb.Query", count)
        try:
            total = service.search(NS, query).total
        finally:
            events.unregister("before-parameter-build.dynamodb.Query", _total_consumed)
            events.unregister("after-call.dynamodb.Query", count)
        return sum(consumed), total

    copies, found = units(dynamodb, RetrievalQuery.parse({"q": "espresso"}))
    # What the same search would read through the records: every memory item of the namespace (a filter spares no
    # unit), eventually consistent as a search reads.
    records, request = (
        0.0,
        {
            "TableName": ddb_local_table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :memory)",
            "ExpressionAttributeValues": {":pk": {"S": f"NS#{NS}"}, ":memory": {"S": "MEM#"}},
            "ReturnConsumedCapacity": "TOTAL",
        },
    )
    while True:
        response = ddb_local_engine.client.query(**request)
        records += response["ConsumedCapacity"]["CapacityUnits"]
        if "LastEvaluatedKey" not in response:
            break
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    assert found > 0
    assert 0 < copies <= 0.5 * records, (copies, records)


def _total_consumed(params: dict[str, Any], **_: Any) -> None:
    params["ReturnConsumedCapacity"] = "TOTAL"
