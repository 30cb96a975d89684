"""The purge function's handler, wired by the composition root as on Lambda, invoked with a scheduled event
(events/purge_scheduled.json) against a table in Amazon DynamoDB Local: it purges, then embeds what waits for a
vector (the model stood in for: no Bedrock here), without recall's extra."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from adapters.dynamodb import DynamoDBMemoryRepository
from core.contract import RetrievalQuery
from core.digest import Vector
from core.errors import MemoryNotFoundError
from core.memories import MemoryService
from core.model import NewMemory
from core.recall.embedding import EmbedderUnavailableError, Kind
from core.recall.indexing import RecallIndexer
from core.recall.standin import StandInEmbedder
from handlers import bootstrap
from handlers.aws import purge
from tests.conftest import REGION, Engine, FakeClock, serve_env

EVENT = Path(__file__).resolve().parents[2] / "events" / "purge_scheduled.json"
CONTEXT = SimpleNamespace(
    function_name="agent-memory-test-purge",
    memory_limit_in_mb=512,
    invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:agent-memory-test-purge",
    aws_request_id="c6af9ac6-7b61-11e6-9a41-93e812345678",
)


@pytest.fixture
def table(ddb_local_engine: Engine, dynamodb_local_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> str:
    name = ddb_local_engine.new_table()
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("TABLE_NAME", name)
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", dynamodb_local_endpoint)
    monkeypatch.setenv("DELETED_RETENTION_DAYS", "7")
    return name


def test_a_scheduled_run_purges_what_was_deleted_before_the_window_and_nothing_else(
    ddb_local_engine: Engine, table: str
) -> None:
    handler = purge.entrypoint(bootstrap.from_environment(ranking=False))
    now = datetime.now(UTC)
    ten_days_ago, three_days_ago = FakeClock(now), FakeClock(now)
    ten_days_ago.advance(days=-10)
    three_days_ago.advance(days=-3)
    old = MemoryService(DynamoDBMemoryRepository(ddb_local_engine.client, table), ten_days_ago)
    recent = MemoryService(DynamoDBMemoryRepository(ddb_local_engine.client, table), three_days_ago)
    gone = old.create("alice", NewMemory.parse({"content": "gone"}))
    kept = old.create("alice", NewMemory.parse({"content": "kept"}))
    old.delete("alice", gone.id)
    recent.delete("alice", kept.id)

    answer: dict[str, Any] = handler(json.loads(EVENT.read_text()), CONTEXT)

    # Embedded: 0, as these writers keep no digests (nothing waits for a vector).
    assert answer == {"purged": 1, "embedded": 0}
    with pytest.raises(MemoryNotFoundError):
        recent.restore("alice", gone.id)
    assert recent.restore("alice", kept.id).content == "kept"
    assert handler(json.loads(EVENT.read_text()), CONTEXT) == {"purged": 0, "embedded": 0}


class Unavailable(StandInEmbedder):
    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        raise EmbedderUnavailableError("Amazon Bedrock refused the embedding (ThrottlingException)")


def waiting_memories(engine: Engine, table: str, count: int) -> DynamoDBMemoryRepository:
    """`count` memories written while the model was unavailable: their digests wait for a vector."""
    repository = DynamoDBMemoryRepository(engine.client, table)
    writer = MemoryService(repository, FakeClock(), indexer=RecallIndexer(Unavailable()))
    for n in range(count):
        writer.create("alice", NewMemory.parse({"content": f"note {n}"}))
    return repository


def test_a_scheduled_run_embeds_the_digests_waiting_for_a_vector_with_the_deployed_model(
    ddb_local_engine: Engine, table: str
) -> None:
    repository = waiting_memories(ddb_local_engine, table, 3)
    handler = purge.entrypoint(bootstrap.from_environment(embedder=StandInEmbedder(), ranking=False))

    assert handler(json.loads(EVENT.read_text()), CONTEXT) == {"purged": 0, "embedded": 3}
    assert repository.unembedded(10) == []
    found = repository.recall_candidates("alice", RetrievalQuery())
    assert {candidate.model for candidate in found} == {StandInEmbedder.model}


def test_a_model_that_cannot_embed_fails_no_purge_run_and_leaves_the_digests_waiting(
    ddb_local_engine: Engine, table: str
) -> None:
    repository = waiting_memories(ddb_local_engine, table, 2)
    handler = purge.entrypoint(bootstrap.from_environment(embedder=Unavailable(), ranking=False))

    assert handler(json.loads(EVENT.read_text()), CONTEXT) == {"purged": 0, "embedded": 0}
    assert len(repository.unembedded(10)) == 2


def test_the_purge_function_runs_without_recalls_extra(table: str) -> None:
    # Its artifact ships neither the stemmer nor simsimd: a run must import neither (None in sys.modules refuses it).
    script = f"""
import json, sys
from types import SimpleNamespace
sys.modules["snowballstemmer"] = None
sys.modules["simsimd"] = None
from handlers.aws import purge
context = SimpleNamespace(**{json.dumps(vars(CONTEXT))})
print(json.dumps(purge.handler(json.loads({json.dumps(EVENT.read_text())}), context)))
"""
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTHONPATH": serve_env()["PYTHONPATH"]},
        capture_output=True,
        text=True,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"purged": 0, "embedded": 0}
