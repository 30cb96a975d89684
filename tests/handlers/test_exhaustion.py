"""The bounds of ids and versions at the HTTP door: a namespace with no id left answers 507 and stores nothing, a
memory at its highest version answers 409 `version-exhausted` (never a retryable collision). The MCP door's tool
errors for both are in tests/handlers/mcp/test_tools.py; every store keeps the bounds
(tests/integration/test_write_fence.py)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from adapters.memory import InMemoryMemoryRepository
from core import writes
from core.limits import MAX_MEMORY_ID, MAX_VERSION
from tests.handlers.http.test_http_auth import assert_problem
from tests.integration.test_repository_contract import memory


def test_a_create_in_a_namespace_that_drew_every_id_is_507_and_stores_nothing(
    http: TestClient, memories: InMemoryMemoryRepository
) -> None:
    memories.reset({}, {"default": MAX_MEMORY_ID + 1})

    response = http.post("/memories", json={"content": "The user keeps bees"})

    problem = assert_problem(response, 507, "namespace-full")
    assert str(MAX_MEMORY_ID) in problem["detail"]
    assert "nothing was stored" in problem["detail"]
    assert "retry-after" not in response.headers
    assert http.get("/memories").json()["total"] == 0


def test_a_change_to_a_memory_at_the_highest_version_is_409_version_exhausted_without_retry_after(
    http: TestClient, memories: InMemoryMemoryRepository
) -> None:
    writes.add(memories, "default", memory(1, content="The user keeps bees", version=MAX_VERSION))

    response = http.patch("/memories/1", json={"content": "The user keeps wasps"})
    unchanged = http.patch("/memories/1", json={"content": "The user keeps bees"})

    problem = assert_problem(response, 409, "version-exhausted")
    assert problem["detail"].startswith(f"memory 1 is at version {MAX_VERSION}")
    assert "retry-after" not in response.headers
    assert unchanged.status_code == 200
    assert http.get("/memories/1").json()["content"] == "The user keeps bees"
