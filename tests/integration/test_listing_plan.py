"""How the adapter reads a listing, on Amazon DynamoDB Local, with the in-memory store as the oracle for what it
returns: a search reads the namespace (or a tag's copies) in id segments at once (the last one open-ended), a tag
listing reads only the tag's copies, a filtered listing sizes its Queries from the stored totals, and a deep
offset skips rows by their keys only. Also: the copies and their counts mirror the memories through every write."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from adapters.dynamodb import (
    DynamoDBMemoryRepository,
    accessitems,
    listing,
    searchcopies,
    searches,
)
from adapters.dynamodb import queries as queries_module
from adapters.dynamodb.client import make_client
from adapters.dynamodb.codec import COUNTER_SK, INDEXES, memory_partition, tag_partition
from adapters.dynamodb.records import memory_sort_key
from adapters.memory import InMemoryMemoryRepository
from core import writes
from core.contract import RetrievalQuery
from core.limits import MAX_MEMORY_ID
from core.memories import MemoryService
from core.model import MemoryChanges, NewMemory
from tests.conftest import REGION, Engine, FakeClock
from tests.copies import assert_copies_mirror
from tests.listings import NS, TAGS, Queries, same_page, stock

SORTS = ["id", "created_at", "updated_at", "last_accessed_at"]
INDEXED_SORTS = SORTS[:-1]  # by last use, a listing reads the access items (accessitems.py): no offset to skip to


@dataclass(frozen=True)
class Stocked:
    twins: tuple[MemoryService, MemoryService]
    engine: Engine  # the DynamoDB twin's, for a Queries recorder


@pytest.fixture(scope="module")
def stocked(dynamodb_local_endpoint: str) -> Stocked:
    """Twins (as `twins`) holding stock(150), made once for the module's tests that only list and search them (about
    4 s each on DynamoDB Local); their searches stamp both twins alike, so the twins stay the same. Without warm copies:
    each search is planned as a process's first (a warm one reads what changed: tests/integration/test_warm_index.py).
    """
    engine = Engine("dynamodb-local", make_client(dynamodb_local_endpoint, REGION))
    assert engine.client is not None
    clock = FakeClock()
    twins = (
        MemoryService(DynamoDBMemoryRepository(engine.client, engine.new_table(), warm_search_bytes=0), clock),
        MemoryService(InMemoryMemoryRepository(), clock),
    )
    stock(twins, 150)
    return Stocked(twins, engine)


@pytest.fixture
def stocked_queries(stocked: Stocked) -> Iterator[Queries]:
    """A recorder of the stocked twins' Queries for one test."""
    queries = Queries(stocked.engine)
    yield queries
    queries.stop()


def test_a_search_reads_every_segment_at_once_and_returns_what_the_core_defines(
    ddb_local_engine: Engine, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without warm copies: each search is read as a process's first is.
    cold = DynamoDBMemoryRepository(ddb_local_engine.client, ddb_local_engine.new_table(), warm_search_bytes=0)
    twins = (MemoryService(cold, clock), MemoryService(InMemoryMemoryRepository(), clock))
    monkeypatch.setattr(searches, "SEGMENT_IDS", 7)
    monkeypatch.setattr(searchcopies, "SEARCH_SEGMENT_IDS", 7)
    monkeypatch.setattr(accessitems, "ACCESS_SEGMENT_IDS", 7)
    stock(twins, 60)
    queries = Queries(ddb_local_engine)
    texts = [
        {"q": "espresso"},
        {"q": "memory"},
        {"q": "memory", "tag": "travel"},
        {"q": "ESPRESSO", "status": "invalid"},
    ]
    by_use = [{"tag": "travel"}, {}, {"status": "invalid", "memory_type": "fact"}, {"status": "deleted"}]
    cases = [*itertools.product(SORTS, texts), *(("last_accessed_at", fields) for fields in by_use)]
    for sort, fields in cases:
        # A tag search reads the tag's copies, any other `q` search the memories' search copies. By last use (which
        # neither kind of copy carries), a listing reads the access items alone, a search the records, each segment
        # joined with its access items.
        by_copies = "tag" in fields and sort != "last_accessed_at"
        partition = tag_partition(NS, "travel") if by_copies else memory_partition(NS)
        if sort != "last_accessed_at":
            prefixes = ["Q#"] if "tag" not in fields else ["MEM#"]
        else:
            prefixes = ["A#"] if not {"q", "tag"} & fields.keys() else ["A#", "MEM#"]
        for offset, limit in [(0, 5), (3, 10), (40, 100), (1000, 1)]:
            queries.sent.clear()
            same_page(twins, RetrievalQuery.parse({**fields, "sort": sort, "offset": offset, "limit": limit}))
            ranges = sorted(
                (q["ExpressionAttributeValues"][":first"]["S"], q["ExpressionAttributeValues"][":last"]["S"])
                for q in queries.sent
            )
            # ceil(60 / 7) segments of 7 ids, each one Query per kind of item (each is far under 1 MB), the last
            # open-ended.
            for prefix in prefixes:
                read = [bounds for bounds in ranges if bounds[0].startswith(prefix)]
                assert len(read) == math.ceil(60 / 7), (sort, fields)
                assert read[0][0] == memory_sort_key(1)["S"].replace("MEM#", prefix)
                assert read[-1] == tuple(
                    key["S"].replace("MEM#", prefix) for key in (memory_sort_key(57), memory_sort_key(MAX_MEMORY_ID))
                )
            assert len(ranges) == len(prefixes) * math.ceil(60 / 7), (sort, fields)
            assert all(q["KeyConditionExpression"] == "pk = :pk AND sk BETWEEN :first AND :last" for q in queries.sent)
            assert all(q["ExpressionAttributeValues"][":pk"] == partition for q in queries.sent)


def test_a_search_in_a_namespace_whose_counter_went_near_a_billion_sends_a_bounded_number_of_queries(
    ddb_local_engine: Engine, clock: FakeClock
) -> None:
    table = ddb_local_engine.new_table()
    twins = (
        MemoryService(DynamoDBMemoryRepository(ddb_local_engine.client, table, warm_search_bytes=0), clock),
        MemoryService(InMemoryMemoryRepository(), clock),
    )
    stock(twins, 30)
    # What an import of a line with id 999,999,999 leaves: the counter there (ids may have gaps).
    ddb_local_engine.client.put_item(
        TableName=table, Item={"pk": memory_partition(NS), "sk": {"S": COUNTER_SK}, "next_id": {"N": "999999999"}}
    )
    queries = Queries(ddb_local_engine)

    same_page(twins, RetrievalQuery.parse({"q": "memory", "limit": 100}))

    # One Query per 512 ids would be about two million of them.
    assert len(queries.sent) == queries_module.MAX_SEGMENTS


@pytest.mark.parametrize("sort", INDEXED_SORTS)
def test_a_tag_listing_reads_only_the_tags_copies(stocked: Stocked, stocked_queries: Queries, sort: str) -> None:
    twins, queries = stocked.twins, stocked_queries
    for tag, fields, (offset, limit) in itertools.product(
        TAGS,
        [{}, {"status": "invalid"}, {"memory_type": "event"}, {"status": "deleted"}],
        [(0, 5), (0, 20), (7, 5), (60, 100)],
    ):
        queries.sent.clear()
        total = same_page(
            twins, RetrievalQuery.parse({**fields, "tag": tag, "sort": sort, "offset": offset, "limit": limit})
        )
        assert all(q["ExpressionAttributeValues"][":pk"] == tag_partition(NS, tag) for q in queries.sent)
        assert all("contains(tags" not in q["FilterExpression"] for q in queries.sent)
        # Sized from the tag's own counts: a first page in at most 3 Queries, and none past the last match.
        if offset < total:
            assert 1 <= len(queries.sent) <= 3, (tag, fields, offset, [q["Limit"] for q in queries.sent])


def test_tag_copies_and_their_counts_mirror_the_memories_through_every_write(
    twins: tuple[MemoryService, MemoryService], ddb_local_engine: Engine, ddb_local_table: str
) -> None:
    stock(twins, 120)

    assert_copies_mirror(ddb_local_engine, ddb_local_table, NS)


def test_a_tag_search_in_any_order_but_last_use_reads_only_the_tags_copies_through_every_write(
    twins: tuple[MemoryService, MemoryService],
    ddb_local_engine: Engine,
    ddb_local_table: str,
    ddb_local_repository: DynamoDBMemoryRepository,
) -> None:
    stock(twins, 90)
    queries = Queries(ddb_local_engine)
    searches = [RetrievalQuery.parse({"tag": tag, "sort": sort, "limit": 50}) for tag in TAGS for sort in SORTS]
    searches.append(RetrievalQuery.parse({"tag": "food", "q": "memory", "offset": 3}))

    def all_same() -> None:
        for query in searches:
            queries.sent.clear()
            same_page(twins, query)
            assert query.tag is not None
            on_copies = [
                q for q in queries.sent if q["ExpressionAttributeValues"][":pk"] == tag_partition(NS, query.tag)
            ]
            if query.sort != "last_accessed_at":
                assert len(on_copies) == len(queries.sent), query

    all_same()
    # Writes move the copies of the memories they change (a retagged one, a deleted one, a retyped one).
    stored = [ddb_local_repository.get(NS, i) for i in range(1, 91)]
    retagged, retyped, deleted = [m.id for m in stored if m is not None and m.status != "deleted"][:3]
    for service in twins:
        service.update(NS, retagged, MemoryChanges.parse({"tags": ["travel", "work"]}))
        service.update(NS, retyped, MemoryChanges.parse({"memory_type": "event", "content": "retyped"}))
        service.delete(NS, deleted)
        service.create(NS, NewMemory.parse({"content": "new", "tags": ["food"]}))

    assert_copies_mirror(ddb_local_engine, ddb_local_table, NS)
    all_same()


def test_a_search_finds_a_memory_whose_id_is_beyond_the_counter_read(
    twins: tuple[MemoryService, MemoryService], ddb_local_repository: DynamoDBMemoryRepository
) -> None:
    dynamodb, _ = twins
    stock((dynamodb,), 5)
    late = dynamodb.create(NS, NewMemory.parse({"content": "espresso, late"}))
    writes.add(ddb_local_repository, NS, late.model_copy(update={"id": 5000}))  # as if the counter read were stale

    found = dynamodb.search(NS, RetrievalQuery.parse({"q": "late"}))

    assert [m.id for m in found.items] == [late.id, 5000]


@pytest.mark.parametrize("fields", [{"status": "invalid"}, {"memory_type": "event"}, {"status": "active"}, {}])
def test_a_filtered_listing_sizes_its_queries_from_the_stored_totals(
    stocked: Stocked, stocked_queries: Queries, fields: dict[str, str]
) -> None:
    twins, queries = stocked.twins, stocked_queries
    for sort, limit in itertools.product(SORTS, [5, 20]):
        queries.sent.clear()
        same_page(twins, RetrievalQuery.parse({**fields, "sort": sort, "limit": limit}))
        # The first Query goes with the totals read; every later one is sized from the matching share.
        assert len(queries.sent) <= 3, (sort, limit, [q["Limit"] for q in queries.sent])


@pytest.mark.parametrize("sort", INDEXED_SORTS)
@pytest.mark.parametrize("sigmas", [3.0, -5.0], ids=["counts-short", "counts-past"])
def test_a_deep_offset_counts_then_skips_rows_by_their_keys_only(
    stocked: Stocked, stocked_queries: Queries, monkeypatch: pytest.MonkeyPatch, sort: str, sigmas: float
) -> None:
    monkeypatch.setattr(listing, "SKIP_KEYS_FROM", 10)
    monkeypatch.setattr(listing, "COUNT_SHORT_OF_ROWS", 5)
    # -5: each count aims past the offset, so the rows it counted are read again with their keys.
    monkeypatch.setattr(listing, "COUNT_SIGMAS", sigmas)
    twins, queries = stocked.twins, stocked_queries
    for fields, offset in itertools.product([{}, {"status": "invalid"}, {"memory_type": "fact"}], [10, 23, 60, 500]):
        queries.sent.clear()
        query = RetrievalQuery.parse({**fields, "sort": sort, "offset": offset, "limit": 7})
        total = same_page(twins, query)
        counting = [q for q in queries.sent if q.get("Select") == "COUNT"]
        skipping = [q for q in queries.sent if q not in counting and q["ProjectionExpression"].count(",") <= 2]
        if offset < total:  # past the total, no row is read at all
            assert counting, (fields, offset)  # every offset here is more than 5 matches deep
            assert skipping, (fields, offset)
        assert all("ProjectionExpression" not in q for q in counting)
        index_key = None if sort == "id" else INDEXES[sort][1]
        for q in skipping:
            assert q["ProjectionExpression"] == ", ".join(filter(None, ("pk", "sk", index_key)))
        page_reads = [q for q in queries.sent if q not in skipping and q not in counting]
        assert all("content" in q["ProjectionExpression"] for q in page_reads)


def test_a_shallow_offset_reads_the_skipped_rows_with_the_page_in_one_query(
    twins: tuple[MemoryService, MemoryService], ddb_local_engine: Engine
) -> None:
    stock(twins, 40)
    queries = Queries(ddb_local_engine)

    same_page(twins, RetrievalQuery.parse({"offset": 5, "limit": 10}))

    assert len(queries.sent) == 1
    assert "content" in queries.sent[0]["ProjectionExpression"]
