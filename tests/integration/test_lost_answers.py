"""A create that DynamoDB applied but whose answer was lost (a read timeout after the write landed), on Amazon
DynamoDB Local through the HTTP door: the 503 says the memory may have been stored, and it was; retried with the same
Idempotency-Key, as the 503 says, it is stored once."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ReadTimeoutError
from fastapi.testclient import TestClient

from core.contract import RetrievalQuery
from core.memories import MemoryService
from tests.conftest import NAMESPACE, Engine


def answer_lost_once(client: Any, operation: str = "TransactWriteItems") -> None:
    """The next call of `operation` is applied by the store, then its answer never arrives."""
    lost = [False]

    def lose(**_: Any) -> None:
        if not lost[0]:
            lost[0] = True
            raise ReadTimeoutError(endpoint_url="http://dynamodb.invalid")

    client.meta.events.register(f"after-call.dynamodb.{operation}", lose)


def test_a_create_whose_answer_was_lost_was_stored_and_its_retry_with_the_same_key_stores_it_once(
    http_on_ddb_local: TestClient, ddb_local_engine: Engine, ddb_local_service: MemoryService
) -> None:
    http_on_ddb_local.post("/memories", json={"content": "The user keeps bees"})  # the namespace's id counter
    answer_lost_once(ddb_local_engine.client)
    create: dict[str, Any] = {"json": {"content": "The user keeps wasps"}, "headers": {"Idempotency-Key": "wasps-1"}}

    lost = http_on_ddb_local.post("/memories", **create)
    retried = http_on_ddb_local.post("/memories", **create)

    assert lost.status_code == 503
    assert lost.json()["type"] == "urn:agent-memory:problem:write-outcome-unknown"
    assert "retry with the same Idempotency-Key" in lost.json()["detail"]
    assert retried.status_code == 201
    stored = ddb_local_service.search(NAMESPACE, RetrievalQuery.parse({"q": "wasps"}), stamp=False)
    assert [memory.id for memory in stored.items] == [retried.json()["id"]]
