"""Access items (codec.py, accessitems.py) on Amazon DynamoDB Local, with the in-memory store as the oracle: they hold
each memory's stamp, status and type through every write and read and go with a purge, and the records hold no stamp;
a namespace stored before they existed (its stamps on its records) lists, searches and stamps alike before, during and
after `migrate`, also while readers and writers keep going under it; afterwards a stamp writes the access item alone
and a listing by last use reads the access items, not the records."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any

import pytest

from adapters.dynamodb import DynamoDBMemoryRepository, migrate
from adapters.dynamodb.accessitems import access_key
from adapters.dynamodb.client import make_client
from adapters.dynamodb.codec import ACCESS_ITEMS, ACCESS_PREFIX, ACCESSED_KEY, STATS_SK, memory_partition
from adapters.memory import InMemoryMemoryRepository
from core.contract import RetrievalQuery
from core.errors import StorageUnavailableError
from core.memories import MemoryService
from core.model import MemoryChanges, NewMemory
from tests.conftest import REGION, Engine, FakeClock
from tests.copies import scan
from tests.layouts import BeforeAccessItems
from tests.listings import NS, Queries, migrate_under_load, migrated_again, same_page, stock

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
    """Every memory has its access item (and says so), holding its status, type and stamp as the oracle has them; no
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
            assert ACCESS_ITEMS in record, memory.id
            assert ACCESSED_KEY not in record, memory.id
            assert (access["status"]["S"], access["memory_type"]["S"]) == (memory.status, memory.memory_type)
            assert access[ACCESSED_KEY]["S"].startswith(memory.last_accessed_at or "0000-00-00")


def as_before_access_items(engine: Engine, table: str) -> None:
    """What the previous version left in `table`: each stamp on its record, no access items, no marks."""
    client = engine.client
    assert client is not None
    items = scan(engine, table)
    stamps = {i["sk"]["S"][len(ACCESS_PREFIX) :]: i[ACCESSED_KEY] for i in items if i["sk"]["S"].startswith("A#")}
    for item in items:
        key = {"pk": item["pk"], "sk": item["sk"]}
        sort_key = item["sk"]["S"]
        if sort_key.startswith(ACCESS_PREFIX):
            client.delete_item(TableName=table, Key=key)
        elif sort_key.startswith("MEM#"):
            client.update_item(
                TableName=table,
                Key=key,
                UpdateExpression=f"SET {ACCESSED_KEY} = :stamp REMOVE {ACCESS_ITEMS}",
                ExpressionAttributeValues={":stamp": stamps[sort_key[4:]]},
            )
        elif sort_key == STATS_SK and ACCESS_ITEMS in item:
            client.update_item(TableName=table, Key=key, UpdateExpression=f"REMOVE {ACCESS_ITEMS}")


def fresh(twins: tuple[MemoryService, MemoryService], engine: Engine, table: str, clock: FakeClock) -> Any:
    """The twins with a new repository on the DynamoDB side (a new container: it has seen no namespace's marks)."""
    assert engine.client is not None
    return MemoryService(DynamoDBMemoryRepository(engine.client, table), clock), twins[1]


def read_items(queries: Queries) -> set[str]:
    """The kinds of item the Queries sent read, by sort key prefix."""
    return {
        q["ExpressionAttributeValues"][":first"]["S"].split("#")[0]
        for q in queries.sent
        if ":first" in q.get("ExpressionAttributeValues", {})
    }


def all_same(twins: tuple[MemoryService, MemoryService], queries: Queries, *, moved: bool) -> None:
    """Every listing of BY_USE returns the oracle's page and total, stamping it alike; once `moved`, a listing
    without `q` or `tag` reads the access items and nothing else."""
    for query in BY_USE:
        queries.sent.clear()
        same_page(twins, query)
        if moved and query.q is None and query.tag is None:
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
    all_same(twins, queries, moved=True)

    assert_access_items_mirror(twins, ddb_local_engine, ddb_local_table)
    stats = [i for i in scan(ddb_local_engine, ddb_local_table) if i["pk"] == memory_partition(NS)]
    assert any(i["sk"]["S"] == STATS_SK and ACCESS_ITEMS in i for i in stats)


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


@pytest.mark.slow
def test_a_namespace_stored_before_access_items_is_listed_and_stamped_alike_before_during_and_after_migrate(
    twins: tuple[MemoryService, MemoryService], ddb_local_engine: Engine, ddb_local_table: str, clock: FakeClock
) -> None:
    stock(twins, 90)
    as_before_access_items(ddb_local_engine, ddb_local_table)
    twins = fresh(twins, ddb_local_engine, ddb_local_table, clock)
    queries = Queries(ddb_local_engine)

    # Until migrated, a listing by last use reads the records, and finds (and stamps) what the core defines.
    all_same(twins, queries, moved=False)
    # Writes meanwhile: the new memory has an access item, the older ones keep their stamps on their records.
    listed = twins[0].search(NS, RetrievalQuery.parse({"limit": 100, "sort": "id"}), stamp=False)
    visible = [m.id for m in listed.items]
    for service in twins:
        service.update(NS, visible[0], MemoryChanges.parse({"content": "Espresso, retold"}))
        service.update(NS, visible[1], MemoryChanges.parse({"memory_type": "event", "status": "invalid"}))
        service.delete(NS, visible[2])
        service.create(NS, NewMemory.parse({"content": "a new espresso memory", "tags": ["food"]}))
        service.get(NS, visible[3])
    clock.advance(seconds=1)
    all_same(twins, queries, moved=False)

    client = ddb_local_engine.client
    assert client is not None
    done = migrate(client, ddb_local_table)

    assert (done.accessed, done.unaccessed) == (90, 0)  # the new one was born with its own
    twins = fresh(twins, ddb_local_engine, ddb_local_table, clock)
    all_same(twins, queries, moved=True)
    assert_access_items_mirror(twins, ddb_local_engine, ddb_local_table)
    assert migrate(client, ddb_local_table).accessed == 0  # a second run has nothing left to do


def one_change(rng: random.Random, _: int) -> Callable[[MemoryService], object]:
    """One of a read, a listing by last use and a search (each stamps), a patch, a delete and a restore."""
    memory_id = rng.randint(1, 120)
    changes: list[Callable[[MemoryService], object]] = [
        lambda service: service.get(NS, memory_id),
        lambda service: service.search(NS, RetrievalQuery.parse({"sort": "last_accessed_at"})),
        lambda service: service.search(NS, RetrievalQuery.parse({"q": "espresso", "limit": 5})),
        lambda service: service.update(NS, memory_id, MemoryChanges.parse({"status": "invalid"})),
        lambda service: service.delete(NS, memory_id),
        lambda service: service.restore(NS, memory_id),
    ]
    return rng.choice(changes)


@pytest.mark.slow
def test_migrate_while_readers_stamp_and_writers_write_moves_every_stamp_without_losing_one(
    twins: tuple[MemoryService, MemoryService], ddb_local_engine: Engine, ddb_local_table: str, clock: FakeClock
) -> None:
    stock(twins, 120, seed=11)
    as_before_access_items(ddb_local_engine, ddb_local_table)
    twins = fresh(twins, ddb_local_engine, ddb_local_table, clock)
    done, made = migrate_under_load(twins, ddb_local_engine, ddb_local_table, one_change, clock)

    assert made > 10, made  # the readers and writers did work under the migrate
    # A memory that kept changing (or being stamped) under the move is left for the next run, as the run says.
    assert migrated_again(ddb_local_engine, ddb_local_table, done, lambda run: run.unaccessed).unaccessed == 0
    assert_access_items_mirror(
        fresh(twins, ddb_local_engine, ddb_local_table, clock), ddb_local_engine, ddb_local_table
    )


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


def test_the_suites_engine_before_access_items_stores_as_that_version_did(ddb_local_engine: Engine) -> None:
    """tests.layouts, which the repository, lifecycle and concurrency suites run on as a third engine: a memory it
    adds holds its stamp on its record, with no access item and no mark, and it is read, stamped and listed so."""
    table = ddb_local_engine.new_table()
    assert ddb_local_engine.client is not None
    service = MemoryService(BeforeAccessItems(ddb_local_engine.client, table), FakeClock())
    created = service.create(NS, NewMemory.parse({"content": "The user keeps bees"}))
    queries = Queries(ddb_local_engine)

    read = service.get(NS, created.id)
    listed = service.search(NS, RetrievalQuery.parse({"sort": "last_accessed_at"}))

    items = {i["sk"]["S"]: i for i in scan(ddb_local_engine, table) if i["pk"] == memory_partition(NS)}
    assert not any(sort_key.startswith(ACCESS_PREFIX) for sort_key in items)
    assert ACCESS_ITEMS not in items["MEM#0000000001"]
    assert ACCESS_ITEMS not in items[STATS_SK]
    assert read.last_accessed_at is not None
    assert listed.items[0].last_accessed_at is not None
    assert listed.items[0].last_accessed_at > read.last_accessed_at
    assert items["MEM#0000000001"][ACCESSED_KEY]["S"].startswith(listed.items[0].last_accessed_at)
    assert read_items(queries) == {"A", "MEM"}  # the records, each segment joined with its access items


def test_a_read_whose_memory_migrate_moves_between_its_two_stamps_still_returns_its_stamp(
    ddb_local_engine: Engine, dynamodb_local_endpoint: str
) -> None:
    """A memory stored before access items: its access item refuses the stamp (there is none), then, before the
    record's stamp, migrate moves the stamp into a new access item; the read stamps that one instead."""
    table = ddb_local_engine.new_table()
    client = make_client(dynamodb_local_endpoint, REGION)  # the read's own, to hook
    service = MemoryService(BeforeAccessItems(client, table), FakeClock())
    created = service.create(NS, NewMemory.parse({"content": "The user keeps bees"}))
    moved: list[int] = []

    def migrate_first(params: dict[str, Any], **_: Any) -> None:
        if params["Key"]["sk"]["S"].startswith("MEM#") and not moved:
            assert ddb_local_engine.client is not None
            moved.append(migrate(ddb_local_engine.client, table).accessed)

    client.meta.events.register("before-parameter-build.dynamodb.UpdateItem", migrate_first)
    read = service.get(NS, created.id)

    assert moved == [1]
    assert read.last_accessed_at is not None
    assert read == service.get(NS, created.id, stamp=False)
    access = next(i for i in scan(ddb_local_engine, table) if i["sk"]["S"].startswith(ACCESS_PREFIX))
    assert access[ACCESSED_KEY]["S"].startswith(read.last_accessed_at)


def test_a_change_of_status_never_puts_back_an_access_item_that_is_gone(
    ddb_local_engine: Engine, ddb_local_table: str, ddb_local_service: MemoryService
) -> None:
    """A marked memory whose access item is lost (no write of this version loses one) refuses the change that would
    write its status there, rather than leave an access item without a stamp that no stamp could land on."""
    assert ddb_local_engine.client is not None
    created = ddb_local_service.create(NS, NewMemory.parse({"content": "The user keeps bees"}))
    ddb_local_engine.client.delete_item(TableName=ddb_local_table, Key=access_key(NS, created.id))
    before = scan(ddb_local_engine, ddb_local_table)

    with pytest.raises(StorageUnavailableError):
        ddb_local_service.update(NS, created.id, MemoryChanges.parse({"status": "invalid"}))

    assert scan(ddb_local_engine, ddb_local_table) == before  # nothing written, no access item made up
