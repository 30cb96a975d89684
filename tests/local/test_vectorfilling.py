"""`agent-memory vectors backfill` (local.vectorfilling) on moto's DynamoDB and moto's S3 Vectors, as an operator runs
it against a deployment (`--aws --table`): it puts every namespace's vectors, marks them, prints a cursor per page,
skips what it marked on a second run, and says plainly when the index refuses a write or a cursor is not one."""

from __future__ import annotations

from typing import Any

import boto3
import pytest

from adapters.dynamodb import DynamoDBMemoryRepository
from core.memories import MemoryService
from core.model import NewMemory
from core.recall.indexing import RecallIndexer
from core.recall.standin import STAND_IN_DIMENSIONS, StandInEmbedder
from local import cli
from tests.conftest import Engine, FakeClock

BUCKET, INDEX = "agent-memory-test-123456789012-vectors", "digests"


@pytest.fixture
def filled(moto_engine: Engine, moto_table: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Two namespaces of memories embedded by the stand-in, which the command is told is the deployment's model; the
    vector bucket and index, empty, as the template creates them."""
    monkeypatch.setenv("EMBEDDING_MODEL", StandInEmbedder.model)
    repository = DynamoDBMemoryRepository(moto_engine.client, moto_table)
    service = MemoryService(repository, clock, indexer=RecallIndexer(StandInEmbedder()))
    for namespace, count in (("alice", 3), ("team", 2)):
        for number in range(count):
            service.create(namespace, NewMemory.parse({"content": f"{namespace} memory {number}"}))
    vectors = boto3.client("s3vectors", region_name="us-east-1")
    vectors.create_vector_bucket(vectorBucketName=BUCKET)
    return vectors


def _backfill(table: str, *options: str) -> int:
    return cli.main(["vectors", "backfill", "--bucket", BUCKET, *options, "--aws", "--table", table])


def _keys(vectors: Any) -> set[str]:
    return {vector["key"] for vector in vectors.list_vectors(vectorBucketName=BUCKET, indexName=INDEX)["vectors"]}


def test_backfill_puts_every_namespace_prints_its_cursors_and_a_second_run_skips_what_it_marked(
    filled: Any, moto_table: str, capsys: pytest.CaptureFixture[str]
) -> None:
    filled.create_index(
        vectorBucketName=BUCKET,
        indexName=INDEX,
        dataType="float32",
        dimension=STAND_IN_DIMENSIONS,
        distanceMetric="cosine",
    )
    assert _backfill(moto_table) == 0
    out, err = capsys.readouterr()
    assert _keys(filled) == {"alice#1", "alice#2", "alice#3", "team#1", "team#2"}
    assert "Marked 2 namespaces as held by" in out
    assert sorted(line.split("#")[0] for line in err.splitlines()) == ["cursor alice", "cursor team"]
    assert _backfill(moto_table) == 0
    assert "Marked 0 namespaces" in capsys.readouterr().out
    assert _backfill(moto_table, "--namespace", "team", "--again") == 0
    assert "Marked 1 namespace as held by" in capsys.readouterr().out
    assert _backfill(moto_table, "--namespace", "nobody") == 1
    assert "left unmarked, recalled without the index until a run marks them" in capsys.readouterr().err


def test_a_write_the_index_refuses_fails_the_run_saying_so(
    filled: Any, moto_table: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _backfill(moto_table, "--index", "no-such-index") == 1
    err = capsys.readouterr().err
    assert "agent-memory: Amazon S3 Vectors refused the write (NotFoundException)" in err


def test_a_cursor_no_run_printed_is_a_usage_error(moto_table: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        _backfill(moto_table, "--after", "team#12")
    assert exited.value.code == 2
    assert "is not a cursor a backfill printed" in capsys.readouterr().err
