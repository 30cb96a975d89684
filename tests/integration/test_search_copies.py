"""Search copies (codec.py, searchcopies.py) on Amazon DynamoDB Local, with the in-memory store as the oracle: they
mirror their memories through every write and go with a purge; a namespace stored before they existed is searched
through its records, alike, before, during and after `migrate`, also while writers keep writing under it; and a `q`
search there reads fewer units than the same search through the records."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any

import pytest

from adapters.dynamodb import DynamoDBMemoryRepository, migrate
from adapters.dynamodb.codec import SEARCH_COPIES, SEARCH_PREFIX, STATS_SK, memory_partition
from adapters.dynamodb.searchcopies import searchable
from core.contract import RetrievalQuery
from core.memories import MemoryService
from core.model import MEMORY_TYPES, MemoryChanges, NewMemory
from tests.conftest import Engine
from tests.copies import assert_search_copies_mirror, scan
from tests.listings import NS, TAGS, Queries, migrate_under_load, migrated_again, same_page, stock

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


def as_before_search_copies(engine: Engine, table: str) -> None:
    """What the previous version left in `table`: no search copies, no marks saying a memory or a namespace has them."""
    client = engine.client
    assert client is not None
    for item in scan(engine, table):
        key = {"pk": item["pk"], "sk": item["sk"]}
        if item["sk"]["S"].startswith(SEARCH_PREFIX):
            client.delete_item(TableName=table, Key=key)
        elif SEARCH_COPIES in item:
            client.update_item(TableName=table, Key=key, UpdateExpression=f"REMOVE {SEARCH_COPIES}")


def on_copies(queries: Queries) -> list[dict[str, Any]]:
    """The Queries sent that read search copies."""
    return [
        q
        for q in queries.sent
        if q["ExpressionAttributeValues"].get(":first", {}).get("S", "").startswith(SEARCH_PREFIX)
    ]


def all_same(twins: tuple[MemoryService, MemoryService], queries: Queries, *, copies: bool) -> None:
    """Every search of SEARCHES returns the oracle's page and total; with `copies`, each one the copies can answer reads
    them and nothing else, and no other reads them (else none does)."""
    for query in SEARCHES:
        queries.sent.clear()
        same_page(twins, query)
        read = on_copies(queries)
        if copies and searchable(query) and query.tag is None:
            assert read, query
            assert len(read) == len(queries.sent), query
        else:
            assert not read, query


def test_search_copies_mirror_their_memories_through_every_write_and_go_with_a_purge(
    twins: tuple[MemoryService, MemoryService], ddb_local_engine: Engine, ddb_local_table: str
) -> None:
    stock(twins, 80)
    deleted = twins[0].search(NS, RetrievalQuery.parse({"status": "deleted", "limit": 100})).items
    assert len(deleted) >= 3
    for service in twins:
        for memory in deleted[:3]:
            service.purge(NS, memory.id)
        service.restore(NS, deleted[3].id)

    assert_search_copies_mirror(ddb_local_engine, ddb_local_table, NS)
    stats = scan(ddb_local_engine, ddb_local_table)
    assert any(i["sk"]["S"] == STATS_SK and SEARCH_COPIES in i for i in stats if i["pk"] == memory_partition(NS))


@pytest.mark.slow
def test_a_namespace_stored_before_search_copies_is_searched_alike_before_during_and_after_migrate(
    twins: tuple[MemoryService, MemoryService], ddb_local_engine: Engine, ddb_local_table: str
) -> None:
    stock(twins, 90)
    as_before_search_copies(ddb_local_engine, ddb_local_table)
    queries = Queries(ddb_local_engine)

    # Until migrated, a search reads the records, and finds what the core defines.
    all_same(twins, queries, copies=False)
    # Writes meanwhile give the memories they change their copies; the namespace still has older ones without.
    visible = [m.id for m in twins[0].search(NS, RetrievalQuery.parse({"limit": 100, "sort": "id"})).items]
    for service in twins:
        service.update(NS, visible[0], MemoryChanges.parse({"content": "Espresso, retold"}))
        service.update(NS, visible[1], MemoryChanges.parse({"memory_type": "event", "tags": ["food"]}))
        service.delete(NS, visible[2])
        service.create(NS, NewMemory.parse({"content": "a new espresso memory", "tags": ["travel"]}))
    all_same(twins, queries, copies=False)

    client = ddb_local_engine.client
    assert client is not None
    done = migrate(client, ddb_local_table)

    assert (done.searchable, done.unsearchable) == (90 - 3, 0)  # the four written meanwhile have theirs
    assert_search_copies_mirror(ddb_local_engine, ddb_local_table, NS)
    all_same(twins, queries, copies=True)
    assert migrate(client, ddb_local_table).searchable == 0  # a second run has nothing left to do


def one_change(rng: random.Random, n: int) -> Callable[[MemoryService], object]:
    """One of an edit, a retype and retag, a delete, a restore and a create, drawn from `rng`."""
    memory_id, kind = rng.randint(1, 150), rng.randrange(5)
    fields = {"memory_type": rng.choice(MEMORY_TYPES), "tags": rng.sample(TAGS, 2)}
    changes: list[Callable[[MemoryService], object]] = [
        lambda service: service.update(NS, memory_id, MemoryChanges.parse({"content": f"espresso {n}"})),
        lambda service: service.update(NS, memory_id, MemoryChanges.parse(fields)),
        lambda service: service.delete(NS, memory_id),
        lambda service: service.restore(NS, memory_id),
        lambda service: service.create(NS, NewMemory.parse({"content": f"Espresso, new {n}"})),
    ]
    return changes[kind]


@pytest.mark.slow
def test_migrate_while_writers_keep_writing_leaves_every_copy_mirroring_its_memory(
    twins: tuple[MemoryService, MemoryService], ddb_local_engine: Engine, ddb_local_table: str
) -> None:
    stock(twins, 150, seed=11)
    as_before_search_copies(ddb_local_engine, ddb_local_table)
    done, writes = migrate_under_load(twins, ddb_local_engine, ddb_local_table, one_change)

    assert writes > 10, writes  # the writer did write under the migrate
    # A memory that kept changing under its copy is left for the next run, as the run says; none is left wrong.
    assert migrated_again(ddb_local_engine, ddb_local_table, done, lambda run: run.unsearchable).unsearchable == 0
    assert_search_copies_mirror(ddb_local_engine, ddb_local_table, NS)
    queries = Queries(ddb_local_engine)
    all_same(twins, queries, copies=True)


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

    query = RetrievalQuery.parse({"q": "espresso"})
    copies, found = units(dynamodb, query)
    as_before_search_copies(ddb_local_engine, ddb_local_table)
    # A new process's repository: the first one remembers that the namespace had its copies.
    records, also_found = units(
        MemoryService(DynamoDBMemoryRepository(ddb_local_engine.client, ddb_local_table)), query
    )

    assert found == also_found > 0
    assert 0 < copies <= 0.5 * records, (copies, records)


def _total_consumed(params: dict[str, Any], **_: Any) -> None:
    params["ReturnConsumedCapacity"] = "TOTAL"
