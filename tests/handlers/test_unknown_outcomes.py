"""A write whose outcome storage left unknown, at both doors: a request that timed out after it was sent may have been
stored, so the 503 (and the MCP tool error) says so and says how to retry that write without doing it twice; a write
storage refused before acting on it (throttled) keeps the plain 503. Faults are injected in front of moto through
botocore's event hooks, as tests/adapters/dynamodb/test_faults.py does."""

from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Any

import anyio
import botocore.endpoint
import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ReadTimeoutError
from fastapi.testclient import TestClient

from adapters.dynamodb import DynamoDBMemoryRepository
from core.memories import MemoryService
from core.model import NewMemory
from handlers.auth import open_access
from handlers.http.app import create_app
from handlers.mcp.server import create_server
from tests.conftest import NAMESPACE, Engine, FakeClock
from tests.faults import error_answer
from tests.handlers.conftest import call_tool, tool_text

UNKNOWN = "urn:agent-memory:problem:write-outcome-unknown"
UNAVAILABLE = "urn:agent-memory:problem:storage-unavailable"


def timing_out(client: Any, operation: str = "TransactWriteItems") -> None:
    """Every attempt of `operation` gets no answer in time after it was sent."""

    def send(request: Any, **_: Any) -> None:
        raise ReadTimeoutError(endpoint_url=request.url)

    client.meta.events.register_first(f"before-send.dynamodb.{operation}", send)


def throttled(client: Any, operation: str = "TransactWriteItems") -> None:
    """Every attempt of `operation` is turned away before storage acts on it."""

    def send(request: Any, **_: Any) -> AWSResponse:
        return error_answer(request, "ThrottlingException")

    client.meta.events.register_first(f"before-send.dynamodb.{operation}", send)


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore's backoffs between attempts, not slept: these tests hold what is answered, not seconds."""
    monkeypatch.setattr(botocore.endpoint, "time", types.SimpleNamespace(sleep=lambda seconds: None))


@pytest.fixture
def service(moto_engine: Engine, moto_table: str, clock: FakeClock) -> MemoryService:
    return MemoryService(DynamoDBMemoryRepository(moto_engine.client, moto_table), clock)


@pytest.fixture(autouse=True)
def counted(service: MemoryService) -> None:
    """The namespace's id counter is started (by a first memory), so a create draws its id without a transaction and
    what times out is the memory's own write."""
    service.create(NAMESPACE, NewMemory.parse({"content": "The user keeps bees"}))


@pytest.fixture
def http(service: MemoryService) -> Iterator[TestClient]:
    with TestClient(create_app(service, open_access(), version="test")) as client:
        yield client


def test_a_create_that_timed_out_after_it_was_sent_is_a_503_saying_to_retry_with_the_same_idempotency_key(
    http: TestClient, moto_engine: Engine
) -> None:
    timing_out(moto_engine.client)

    response = http.post("/memories", json={"content": "The user keeps bees"}, headers={"Idempotency-Key": "bees-1"})

    assert response.status_code == 503
    assert response.headers["retry-after"] == "1"
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["type"] == UNKNOWN
    assert problem["detail"].startswith("storage failed after the write was sent (no answer in time), so it may have")
    assert "retry with the same Idempotency-Key and the same fields" in problem["detail"]


def test_a_create_without_an_idempotency_key_that_timed_out_says_a_retry_could_store_it_twice(
    http: TestClient, moto_engine: Engine
) -> None:
    timing_out(moto_engine.client)

    response = http.post("/memories", json={"content": "The user keeps bees"})

    assert (response.status_code, response.json()["type"]) == (503, UNKNOWN)
    assert "a retry could store it twice" in response.json()["detail"]
    assert "send an idempotency key with every create" in response.json()["detail"]


def test_a_throttled_create_keeps_the_plain_503(http: TestClient, moto_engine: Engine) -> None:
    throttled(moto_engine.client)

    response = http.post("/memories", json={"content": "The user keeps bees"}, headers={"Idempotency-Key": "bees-1"})

    assert response.status_code == 503
    assert response.headers["retry-after"] == "1"
    assert response.json()["type"] == UNAVAILABLE
    assert response.json()["detail"] == "storage is busy (ThrottlingException); retry shortly"


@pytest.mark.parametrize(
    ("method", "path", "options", "advice"),
    [
        (
            "PATCH",
            "/memories/1",
            {"json": {"content": "The user keeps wasps"}, "headers": {"If-Match": '"1"'}},
            "retry it with the same expected version",
        ),
        ("PATCH", "/memories/1", {"json": {"content": "The user keeps wasps"}}, "retrying it is safe"),
        ("DELETE", "/memories/1", {}, "if the first call deleted the memory, the retry answers that it does not exist"),
    ],
    ids=["patch-if-match", "patch", "delete"],
)
def test_a_change_that_timed_out_after_it_was_sent_says_how_that_change_is_retried_safely(
    http: TestClient, service: MemoryService, moto_engine: Engine, method: str, path: str, options: Any, advice: str
) -> None:
    timing_out(moto_engine.client)

    response = http.request(method, path, **options)

    assert (response.status_code, response.json()["type"]) == (503, UNKNOWN)
    assert advice in response.json()["detail"]


def test_a_restore_that_timed_out_after_it_was_sent_says_a_retry_then_answers_not_deleted(
    http: TestClient, service: MemoryService, moto_engine: Engine
) -> None:
    service.delete(NAMESPACE, 1)
    timing_out(moto_engine.client)

    response = http.post("/memories/1/restore")

    assert (response.status_code, response.json()["type"]) == (503, UNKNOWN)
    assert (
        "if the first call restored the memory, the retry answers that it is not deleted" in response.json()["detail"]
    )


def test_create_memory_that_timed_out_is_a_tool_error_saying_to_retry_with_the_same_idempotency_key(
    service: MemoryService, moto_engine: Engine
) -> None:
    server = create_server(service, open_access(), version="test")
    timing_out(moto_engine.client)

    result = anyio.run(call_tool, server, "create_memory", {"content": "The user keeps bees", "idempotency_key": "b1"})

    assert result.is_error
    text = tool_text(result)
    assert text.startswith("storage failed after the write was sent (no answer in time), so it may have happened; ")
    assert "retry with the same idempotency_key and the same fields" in text


def test_a_throttled_create_memory_keeps_the_plain_tool_error(service: MemoryService, moto_engine: Engine) -> None:
    server = create_server(service, open_access(), version="test")
    throttled(moto_engine.client)

    result = anyio.run(call_tool, server, "create_memory", {"content": "The user keeps bees", "idempotency_key": "b1"})

    assert result.is_error
    assert tool_text(result) == "storage is busy (ThrottlingException); retry shortly; retry in 1 s"
