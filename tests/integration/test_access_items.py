"""Access items (codec.py, accessitems.py) on Amazon DynamoDB Local, with the in-memory store as the oracle: they hold
each memory's stamp, status and type through every write and read and go with a purge, and the records hold no stamp;
a stamp writes the access item alone and a listing by last use reads the access items, not the records."""

from __future__ import annotations

import itertools

import pytest

from adapters.dynamodb import DynamoDBMemoryRepository
from adapters.dynamodb.accessitems import access_key
from adapters.dynamodb.codec import ACCESS_PREFIX, ACCESSED_KEY, memory_partition
from adapters.memory import InMemoryMemoryRepository
from core.contract import RetrievalQuery
from core.errors import StorageUnavailableError
from core.memories import MemoryService
from core.model import MemoryChanges, NewMemory
from tests.conftest import Engine, FakeClock
from tests.copies import scan
from tests.listings import NS, Queries, same_page, stock

BY_USE = [
    RetrievalQuery.parse({**fields, "sort": "last_accessed_at", "offset": offset, "limit": limit})
    for fields, (offset, limit) in itertools.product(
        [
            {},
            {"status": "invalid"},
            {"status": "deleted"},
            {"memory_type": "event"},
            {"tag": "food"},
            {"q": "espresso"},
            {"q": "memory", "tag": "travel", "status": "active"},
        ],
        [(0, 10), (7, 20), (500, 5)],
    )
]


def assert_access_items_mirror(twins: tuple[MemoryService, MemoryService], engine: Engine, table: str) -> None:
    """Every memory has its access item, holding its status, type and stamp as the oracle has them; no
    record holds a stamp, no access item outlives its memory; and every stored memory reads as the oracle's."""
    items = scan(engine, table)
    home = memory_partition(NS)
    records = {int(i["sk"]["S"][4:]): i for i in items if i["pk"] == home and i["sk"]["S"].startswith("MEM#")}
    accesses = {
        int(i["sk"]["S"][len(ACCESS_PREFIX) :]): i
        for i in items
        if i["pk"] == home and i["sk"]["S"].startswith(ACCESS_PREFIX)
    }
    assert accesses.keys() == records.keys()
    for status in ("active", "invalid", "deleted"):
        query = RetrievalQuery.parse({"status": status, "limit": 100})
        stored, oracle = (service.search(NS, query, stamp=False).items for service in twins)
        assert [(m.id, m.memory_type, m.version) for m in stored] == [(m.id, m.memory_type, m.version) for m in oracle]
        # The twins read the clock in turn: their stamps differ by its ticks, never in whether there is one.
        assert [m.last_accessed_at is None for m in stored] == [m.last_accessed_at is None for m in oracle], status
        for memory in stored:
            record, access = records[memory.id], accesses[memory.id]
            assert ACCESSED_KEY not in record, memory.id
            assert (access["status"]["S"], access["memory_type"]["S"]) == (memory.status, memory.memory_type)
            assert access[ACCESSED_KEY]["S"].startswith(memory.last_accessed_at or "0000-00-00")


def read_items(queries: Queries) -> set[str]:
    """The kinds of item the Queries sent read, by sort key prefix."""
    return {
        q["ExpressionAttributeValues"][":first"]["S"].split("#")[0]
        for q in queries.sent
        if ":first" in q.get("ExpressionAttributeValues", {})
    }


def all_same(twins: tuple[MemoryService, MemoryService], queries: Queries) -> None:
    """Every listing of BY_USE returns the oracle's page and total, stamping it alike; a listing without `q` or `tag`
    reads the access items and nothing else."""
    for query in BY_USE:
        queries.sent.clear()
        same_page(twins, query)
        if query.q is None and query.tag is None:
            assert read_items(queries) == {"A"}, query
        else:
            assert "MEM" in read_items(queries), query


def test_access_items_mirror_their_memories_through_every_write_and_read_and_go_with_a_purge(
    twins: tuple[MemoryService, MemoryService], ddb_local_engine: Engine, ddb_local_table: str
) -> None:
    stock(twins, 80)
    deleted = twins[0].search(NS, RetrievalQuery.parse({"status": "deleted", "limit": 100}), stamp=False).items
    for service in twins:
        for memory in deleted[:3]:
            service.purge(NS, memory.id)
        service.restore(NS, deleted[3].id)
        service.update(NS, deleted[3].id, MemoryChanges.parse({"memory_type": "event", "status": "invalid"}))
    queries = Queries(ddb_local_engine)
    all_same(twins, queries)

    assert_access_items_mirror(twins, ddb_local_engine, ddb_local_table)


def test_a_read_that_stamps_returns_the_stamp_and_writes_only_the_access_item(
    twins: tuple[MemoryService, MemoryService], ddb_local_engine: Engine, ddb_local_table: str, clock: FakeClock
) -> None:
    created = [service.create(NS, NewMemory.parse({"content": "The user keeps bees"})) for service in twins]
    record = next(i for i in scan(ddb_local_engine, ddb_local_table) if i["sk"]["S"].startswith("MEM#"))
    clock.advance(seconds=5)

    read = twins[0].get(NS, created[0].id)

    assert read.last_accessed_at is not None
    assert read.last_accessed_at > created[0].created_at
    assert read == twins[0].get(NS, created[0].id, stamp=False)
    after = next(i for i in scan(ddb_local_engine, ddb_local_table) if i["sk"]["S"].startswith("MEM#"))
    assert after == record  # the record is not written at all


def test_a_listing_by_last_use_of_an_empty_or_fresh_namespace_is_the_oracles(ddb_local_engine: Engine) -> None:
    assert ddb_local_engine.client is not None
    clock = FakeClock()
    twins = (
        MemoryService(DynamoDBMemoryRepository(ddb_local_engine.client, ddb_local_engine.new_table()), clock),
        MemoryService(InMemoryMemoryRepository(), clock),
    )
    for query in BY_USE:
        same_page(twins, query)
    stock(twins, 12)
    for query in BY_USE:
        same_page(twins, query)


def test_a_change_of_status_never_puts_back_an_access_item_that_is_gone(
    ddb_local_engine: Engine, ddb_local_table: str, ddb_local_service: MemoryService
) -> None:
    """A memory whose access item is lost (no write of this version loses one) refuses the change that would
    write its status there, rather than leave an access item without a stamp that no stamp could land on."""
    assert ddb_local_engine.client is not None
    created = ddb_local_service.create(NS, NewMemory.parse({"content": "The user keeps bees"}))
    ddb_local_engine.client.delete_item(TableName=ddb_local_table, Key=access_key(NS, created.id))
    before = scan(ddb_local_engine, ddb_local_table)

    with pytest.raises(StorageUnavailableError):
        ddb_local_service.update(NS, created.id, MemoryChanges.parse({"status": "invalid"}))

    assert scan(ddb_local_engine, ddb_local_table) == before  # nothing written, no access item made up
