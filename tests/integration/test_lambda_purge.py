"""The purge function's handler, wired by the composition root as on Lambda, invoked with a scheduled event
(events/purge_scheduled.json) against a table in Amazon DynamoDB Local."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from core.errors import MemoryNotFoundError
from core.memories import MemoryService
from core.model import NewMemory
from core.repository.dynamodb import DynamoDBMemoryRepository
from handlers import bootstrap
from tests.conftest import REGION, Engine, FakeClock

EVENT = Path(__file__).resolve().parents[2] / "events" / "purge_scheduled.json"
CONTEXT = SimpleNamespace(
    function_name="agent-memory-test-purge",
    memory_limit_in_mb=512,
    invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:agent-memory-test-purge",
    aws_request_id="c6af9ac6-7b61-11e6-9a41-93e812345678",
)


@pytest.fixture
def table(ddb_local_engine: Engine, dynamodb_local_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name = ddb_local_engine.new_table()
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("TABLE_NAME", name)
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", dynamodb_local_endpoint)
    monkeypatch.setenv("DELETED_RETENTION_DAYS", "7")
    bootstrap.default_services.cache_clear()
    yield name
    bootstrap.default_services.cache_clear()


def test_a_scheduled_run_purges_what_was_deleted_before_the_window_and_nothing_else(
    ddb_local_engine: Engine, table: str
) -> None:
    from handlers.aws import purge as lambda_purge

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

    answer: dict[str, Any] = lambda_purge.handler(json.loads(EVENT.read_text()), CONTEXT)

    assert answer == {"purged": 1}
    with pytest.raises(MemoryNotFoundError):
        recent.restore("alice", gone.id)
    assert recent.restore("alice", kept.id).content == "kept"
    assert lambda_purge.handler(json.loads(EVENT.read_text()), CONTEXT) == {"purged": 0}
