"""The backfill of recall's vector index (adapters/vectorfill.py) over a table on moto: it puts every digest a namespace
held before the index was on, page by page, marks the namespace so recall asks the index for it, resumes from the
cursor it tells, puts the same keys when run again, writes no memory, and leaves no older state behind when a write
lands while it runs. Against the in-memory S3 Vectors (adapters/memory/s3vectors.py) and botocore's Stubber (the
real request shapes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from adapters.dynamodb import DynamoDBMemoryRepository
from adapters.dynamodb.indexed import IndexedNamespaces
from adapters.dynamodb.namespaces import Namespaces
from adapters.memory.s3vectors import FakeS3Vectors
from adapters.s3vectors import IndexedVector, S3VectorIndex, floats, index_label
from adapters.vectorfill import Cursor, CursorError, VectorBackfill
from core.memories import MemoryService
from core.model import MemoryChanges, NewMemory
from core.recall.indexing import RecallIndexer
from core.recall.query import RecallQuery
from core.recall.service import RecallService
from core.recall.standin import STAND_IN_DIMENSIONS, StandInEmbedder
from handlers import bootstrap
from handlers.bootstrap.vectors import recall_vectors
from tests.conftest import Engine, FakeClock

NS = "team"
BUCKET, INDEX = "agent-memory-test-123456789012-vectors", "digests"
STAND_IN = StandInEmbedder()
LABEL = index_label(BUCKET, INDEX, STAND_IN.model, STAND_IN_DIMENSIONS)
CONTENTS = [f"memory {number} about fish, tea and Lyon" for number in range(8)]


class _StopError(Exception):
    """A run cut short."""


def _filled(engine: Engine, table: str, clock: FakeClock) -> MemoryService:
    service = MemoryService(DynamoDBMemoryRepository(engine.client, table), clock, indexer=RecallIndexer(STAND_IN))
    for content in CONTENTS:
        service.create(NS, NewMemory.parse({"content": content}))
    return service


def _fake() -> tuple[FakeS3Vectors, S3VectorIndex]:
    engine = FakeS3Vectors()
    engine.create_index(BUCKET, INDEX, STAND_IN_DIMENSIONS)
    return engine, S3VectorIndex(engine, BUCKET, INDEX, STAND_IN.model, sizes=lambda _: 0)


def _every_key() -> set[str]:
    return {f"{NS}#{memory_id}" for memory_id in range(1, len(CONTENTS) + 1)}


def _items(engine: Engine, table: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = engine.client.scan(TableName=table, ConsistentRead=True)["Items"]
    return sorted(items, key=lambda item: (item["pk"]["S"], item["sk"]["S"]))


def test_a_backfill_puts_every_digest_page_by_page_and_marks_the_namespace_for_recall(
    moto_engine: Engine, moto_table: str, clock: FakeClock
) -> None:
    _filled(moto_engine, moto_table, clock)
    engine, index = _fake()
    told: list[Cursor] = []
    table = IndexedNamespaces(moto_engine.client, moto_table)
    filled = VectorBackfill(table, index, LABEL, told.append, page=3).run()
    assert [cursor.after for cursor in told] == [3, 6, 8]
    assert engine.keys(BUCKET, INDEX) == _every_key()
    assert (filled.marked, filled.put, filled.unmarked) == (1, 8, [])
    assert table.indexed_in(NS) == LABEL


def test_recall_asks_the_index_only_once_the_backfill_has_marked_the_namespace(
    moto_engine: Engine, moto_table: str, clock: FakeClock
) -> None:
    _filled(moto_engine, moto_table, clock)
    settings = bootstrap.Settings(table_name=moto_table, embedding_model=STAND_IN.model)
    env = {"VECTOR_BUCKET": BUCKET, "VECTOR_INDEX": INDEX}
    vectors = recall_vectors(env, moto_engine.client, settings)
    assert vectors is not None
    assert vectors.holds(NS) == 0
    _, index = _fake()
    VectorBackfill(IndexedNamespaces(moto_engine.client, moto_table), index, LABEL).run([NS])
    assert vectors.holds(NS) == len(CONTENTS)


def test_a_recall_from_the_backfilled_index_ranks_as_a_recall_reading_the_namespace(
    moto_engine: Engine, moto_table: str, clock: FakeClock
) -> None:
    _filled(moto_engine, moto_table, clock)
    _, index = _fake()
    VectorBackfill(IndexedNamespaces(moto_engine.client, moto_table), index, LABEL).run([NS])
    repository = DynamoDBMemoryRepository(moto_engine.client, moto_table)
    query = RecallQuery(query="fish in Lyon")
    whole = RecallService(repository, STAND_IN, clock=clock, warm_bytes=0).recall(NS, query, stamp=False)
    nearest = RecallService(repository, STAND_IN, clock=clock, warm_bytes=0, vectors=index, large_namespace=1)
    found = nearest.recall(NS, query.model_copy(update={"as_of": whole.as_of}), stamp=False)
    assert found.model_dump() == whole.model_dump()


def test_a_backfill_writes_nothing_of_the_table_but_the_mark_on_the_namespaces_counter(
    moto_engine: Engine, moto_table: str, clock: FakeClock
) -> None:
    _filled(moto_engine, moto_table, clock)
    before = _items(moto_engine, moto_table)
    _, index = _fake()
    VectorBackfill(IndexedNamespaces(moto_engine.client, moto_table), index, LABEL).run()
    after = _items(moto_engine, moto_table)
    changed = [item for item in after if item not in before]
    assert [(item["sk"]["S"], item["indexed_in"]["S"]) for item in changed] == [("COUNTER", LABEL)]
    assert len(after) == len(before)


def test_a_run_again_puts_the_same_keys_and_a_marked_namespace_is_skipped_unless_asked(
    moto_engine: Engine, moto_table: str, clock: FakeClock
) -> None:
    _filled(moto_engine, moto_table, clock)
    engine, index = _fake()
    table = IndexedNamespaces(moto_engine.client, moto_table)
    VectorBackfill(table, index, LABEL).run()
    first = engine.query_vectors(
        vectorBucketName=BUCKET, indexName=INDEX, topK=100, queryVector={"float32": [1.0] * STAND_IN_DIMENSIONS}
    )
    skipped = VectorBackfill(table, index, LABEL).run()
    assert (skipped.skipped, skipped.put) == (1, 0)
    again = VectorBackfill(table, index, LABEL).run(again=True)
    assert (again.marked, again.put) == (1, len(CONTENTS))
    assert engine.keys(BUCKET, INDEX) == _every_key()
    assert (
        engine.query_vectors(
            vectorBucketName=BUCKET, indexName=INDEX, topK=100, queryVector={"float32": [1.0] * STAND_IN_DIMENSIONS}
        )
        == first
    )


def test_a_run_cut_short_resumes_from_its_last_cursor_and_only_then_marks_the_namespace(
    moto_engine: Engine, moto_table: str, clock: FakeClock
) -> None:
    _filled(moto_engine, moto_table, clock)
    engine, index = _fake()
    table = IndexedNamespaces(moto_engine.client, moto_table)
    told: list[Cursor] = []

    def stop_after_the_first_page(cursor: Cursor) -> None:
        told.append(cursor)
        raise _StopError

    with pytest.raises(_StopError):
        VectorBackfill(table, index, LABEL, stop_after_the_first_page, page=3).run()
    assert engine.keys(BUCKET, INDEX) == {f"{NS}#1", f"{NS}#2", f"{NS}#3"}
    assert table.indexed_in(NS) is None
    resumed = Cursor.parse(told[-1].text())
    assert resumed == told[-1]
    pages: list[Cursor] = []
    filled = VectorBackfill(table, index, LABEL, pages.append, page=3).run(resume=resumed)
    assert [cursor.after for cursor in pages] == [6, 8]
    assert engine.keys(BUCKET, INDEX) == _every_key()
    assert (filled.marked, table.indexed_in(NS)) == (1, LABEL)


def test_a_write_landing_while_a_page_is_put_is_not_undone_by_that_pages_older_state(
    moto_engine: Engine, moto_table: str, clock: FakeClock
) -> None:
    service = _filled(moto_engine, moto_table, clock)
    engine, _ = _fake()
    repository = DynamoDBMemoryRepository(moto_engine.client, moto_table)
    consumer = S3VectorIndex(engine, BUCKET, INDEX, STAND_IN.model, sizes=lambda _: 0)

    class LateIndex(S3VectorIndex):
        """The backfill's first put lands after a write and after the stream consumer applied that write."""

        def put(self, vectors: Sequence[IndexedVector]) -> None:
            if not engine.keys(BUCKET, INDEX):
                service.update(NS, 2, MemoryChanges.parse({"content": "now about coffee", "status": "invalid"}))
                (row,) = repository.digest_rows(NS, [2])
                consumer.put([IndexedVector(NS, row)])
            super().put(vectors)

    late = LateIndex(engine, BUCKET, INDEX, STAND_IN.model, sizes=lambda _: 0)
    filled = VectorBackfill(IndexedNamespaces(moto_engine.client, moto_table), late, LABEL, page=3).run()
    assert filled.marked == 1
    only_invalid = engine.query_vectors(
        vectorBucketName=BUCKET,
        indexName=INDEX,
        topK=100,
        queryVector={"float32": floats(STAND_IN.embed(["now about coffee"], "query")[0])},
        filter={"status": {"$eq": "invalid"}},
    )
    assert only_invalid["vectors"] == [{"key": f"{NS}#2"}]


def test_a_namespace_erased_while_the_backfill_runs_is_left_unmarked(
    moto_engine: Engine, moto_table: str, clock: FakeClock
) -> None:
    _filled(moto_engine, moto_table, clock)
    _, index = _fake()
    table = IndexedNamespaces(moto_engine.client, moto_table)

    def erase(_: Cursor) -> None:
        Namespaces(moto_engine.client, moto_table).erase(NS, lambda _: None)

    filled = VectorBackfill(table, index, LABEL, erase, page=3).run([NS])
    assert (filled.marked, filled.unmarked) == (0, [NS])
    assert table.indexed_in(NS) is None


def test_a_page_is_one_put_of_the_documented_shape_and_a_digest_without_a_vector_is_deleted(
    moto_engine: Engine, moto_table: str, clock: FakeClock
) -> None:
    repository = DynamoDBMemoryRepository(moto_engine.client, moto_table)
    MemoryService(repository, clock, indexer=RecallIndexer(STAND_IN)).create(
        NS, NewMemory.parse({"content": "fish on fridays", "tags": ["food"], "memory_type": "preference"})
    )
    MemoryService(repository, clock).create(NS, NewMemory.parse({"content": "waits for its vector"}))
    (embedded,) = repository.digest_rows(NS, [1])
    assert embedded.vector is not None
    client = boto3.client("s3vectors", region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t")
    target = {"vectorBucketName": BUCKET, "indexName": INDEX}
    put = {
        "key": f"{NS}#1",
        "data": {"float32": floats(embedded.vector)},
        "metadata": {
            "namespace": NS,
            "status": "active",
            "memory_type": "preference",
            "tags": ["food"],
            "terms": ["fish", "on", "friday", "food"],
        },
    }
    with Stubber(client) as stubber:
        stubber.add_response("put_vectors", {}, {**target, "vectors": [put]})
        stubber.add_response("delete_vectors", {}, {**target, "keys": [f"{NS}#2"]})
        index = S3VectorIndex(client, BUCKET, INDEX, STAND_IN.model, sizes=lambda _: 0)
        VectorBackfill(IndexedNamespaces(moto_engine.client, moto_table), index, LABEL).run([NS])
        stubber.assert_no_pending_responses()


def test_a_cursor_not_printed_by_a_backfill_is_refused() -> None:
    for text in ("team", "team#x#e#1", "team#1#e", "#1#e#1", "team#1#e#1#2"):
        with pytest.raises(CursorError):
            Cursor.parse(text)
