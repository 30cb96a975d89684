"""Namespaces are sealed on both doors, over the in-memory store (the repository contract suite seals every store):
with real keys for two namespaces, every operation of one against every id of the other is a 404 (a tool error on
MCP) worded exactly as for an id that never existed, and no listing, search or prime of one shows, counts or stamps a
record of the other. Ids are counted per namespace."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest
from fastapi.testclient import TestClient

from adapters.memory import InMemoryMemoryRepository
from core.contract import SORT_KEYS
from core.keys import KeyService
from core.memories import MemoryService
from core.model import Memory
from handlers.auth import key_authenticator
from handlers.http.app import create_app
from handlers.mcp import create_server
from handlers.mcp.endpoint import create_endpoint

ALICE_IDS = [1, 2, 3, 4]
PROBED_IDS = [*ALICE_IDS, 5]  # 5: an id neither namespace has, the reference for "never existed"
SEARCHES: list[dict[str, Any]] = [
    {},
    {"q": "vault"},
    {"q": "alice"},
    {"tag": "alice-only"},
    {"status": "active"},
    {"status": "invalid"},
    {"status": "deleted"},
    {"memory_type": "identity"},
    *({"sort": sort} for sort in SORT_KEYS),
    {"limit": 100, "offset": 0},
]
NO_SUCH = {"type": "urn:agent-memory:problem:not-found", "title": "No such memory", "status": 404}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Namespaces:
    http: TestClient
    repository: InMemoryMemoryRepository
    alice: dict[str, str]
    bob: dict[str, str]
    alice_key: str
    bob_key: str

    def alice_records(self) -> list[Memory | None]:
        """Alice's memories as stored, read without stamping them."""
        return [self.repository.get("alice", memory_id) for memory_id in ALICE_IDS]


@pytest.fixture
def seeded(
    memories: InMemoryMemoryRepository, memory_service: MemoryService, key_service: KeyService
) -> Iterator[Namespaces]:
    """Alice holds four memories (active, active and read, invalid, deleted); Bob holds none."""
    _, alice = key_service.create("alice")
    _, bob = key_service.create("bob")
    app = create_app(memory_service, key_authenticator(key_service), version="test")
    with TestClient(app) as http:
        as_alice = {"authorization": f"Bearer {alice}"}
        rows: list[dict[str, Any]] = [
            {"content": "Alice's vault code is 4711", "tags": ["alice-only", "profile"], "memory_type": "identity"},
            {"content": "Alice prefers window seats", "tags": ["alice-only", "travel"]},
            {"content": "Alice lives in Lyon", "tags": ["alice-only"], "status": "invalid"},
            {"content": "Alice's old phone is 555-0100", "tags": ["alice-only"]},
        ]
        for row in rows:
            assert http.post("/memories", json=row, headers=as_alice).status_code == 201
        assert http.get("/memories/2", headers=as_alice).status_code == 200
        assert http.delete("/memories/4", headers=as_alice).status_code == 204
        yield Namespaces(http, memories, as_alice, {"authorization": f"Bearer {bob}"}, alice, bob)


def search(seeded: Namespaces, headers: dict[str, str], **params: Any) -> dict[str, Any]:
    response = seeded.http.get("/memories", params=params, headers=headers)
    assert response.status_code == 200, response.text
    page: dict[str, Any] = response.json()
    return page


# --- HTTP ---


@pytest.mark.parametrize("memory_id", PROBED_IDS)
def test_every_http_operation_of_bob_on_an_id_of_alice_is_404_as_for_an_id_that_never_existed(
    seeded: Namespaces, memory_id: int
) -> None:
    before = seeded.alice_records()
    attempts = [
        ("GET", None, {}),
        ("PATCH", {"content": "Bob was here"}, {}),
        ("PATCH", {"status": "invalid"}, {"if-match": '"1"'}),
        ("PATCH", {}, {}),
        ("DELETE", None, {}),
    ]

    for method, body, extra in attempts:
        response = seeded.http.request(method, f"/memories/{memory_id}", json=body, headers={**seeded.bob, **extra})

        assert response.status_code == 404, (method, response.text)
        assert response.json() == {**NO_SUCH, "detail": f"memory {memory_id} does not exist"}
        assert "etag" not in response.headers
    assert seeded.alice_records() == before


@pytest.mark.parametrize("params", SEARCHES, ids=repr)
def test_no_http_listing_or_search_of_bob_shows_or_counts_or_stamps_a_memory_of_alice(
    seeded: Namespaces, params: dict[str, Any]
) -> None:
    before = seeded.alice_records()

    page = search(seeded, seeded.bob, **params)

    assert (page["items"], page["total"], page["has_more"]) == ([], 0, False)
    assert seeded.alice_records() == before


def test_ids_are_counted_per_namespace_and_each_key_sees_only_its_own_records(seeded: Namespaces) -> None:
    alice_totals = {repr(params): search(seeded, seeded.alice, **params)["total"] for params in SEARCHES}

    created = [
        seeded.http.post("/memories", json={"content": f"Bob note {n}", "tags": ["alice-only"]}, headers=seeded.bob)
        for n in (1, 2)
    ]

    assert [response.json()["id"] for response in created] == [1, 2]
    assert seeded.http.get("/memories/1", headers=seeded.bob).json()["content"] == "Bob note 1"
    assert seeded.http.get("/memories/1", headers=seeded.alice).json()["content"] == "Alice's vault code is 4711"
    assert search(seeded, seeded.bob, tag="alice-only")["total"] == 2
    assert {item["content"] for item in search(seeded, seeded.bob, limit=100)["items"]} == {"Bob note 1", "Bob note 2"}
    assert {repr(params): search(seeded, seeded.alice, **params)["total"] for params in SEARCHES} == alice_totals


def test_bob_changing_and_deleting_his_own_id_1_leaves_alices_id_1_untouched(seeded: Namespaces) -> None:
    seeded.http.post("/memories", json={"content": "Bob note"}, headers=seeded.bob)
    before = seeded.alice_records()

    patched = seeded.http.patch("/memories/1", json={"content": "Bob's changed note"}, headers=seeded.bob)
    deleted = seeded.http.delete("/memories/1", headers=seeded.bob)

    assert (patched.status_code, deleted.status_code) == (200, 204)
    assert seeded.alice_records() == before


# --- MCP ---


@pytest.fixture
async def mcp(
    seeded: Namespaces, memory_service: MemoryService, key_service: KeyService
) -> AsyncIterator[httpx2.AsyncClient]:
    authenticate = key_authenticator(key_service)
    endpoint = create_endpoint(create_server(memory_service, authenticate, version="test"), authenticate=authenticate)
    transport = httpx2.ASGITransport(app=endpoint)
    async with endpoint.session_manager.run(), httpx2.AsyncClient(transport=transport, base_url="http://t") as http:
        yield http


async def call(http: httpx2.AsyncClient, key: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2025-11-25",
        "authorization": f"Bearer {key}",
    }
    response = await http.post("/mcp", json=body, headers=headers)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["result"]
    return result


@pytest.mark.anyio
@pytest.mark.parametrize("memory_id", PROBED_IDS)
async def test_every_mcp_tool_of_bob_on_an_id_of_alice_is_the_error_of_an_id_that_never_existed(
    seeded: Namespaces, mcp: httpx2.AsyncClient, memory_id: int
) -> None:
    before = seeded.alice_records()
    attempts: list[tuple[str, dict[str, Any]]] = [
        ("get_memory", {"id": memory_id}),
        ("update_memory", {"id": memory_id, "content": "Bob was here"}),
        ("update_memory", {"id": memory_id, "status": "invalid", "expected_version": 1}),
        ("update_memory", {"id": memory_id}),
        ("delete_memory", {"id": memory_id}),
    ]

    for tool, arguments in attempts:
        result = await call(mcp, seeded.bob_key, tool, arguments)

        assert result["isError"] is True, (tool, result)
        assert result["content"][0]["text"] == (
            f"memory {memory_id} does not exist; find the right id with search_memories"
        )
    assert seeded.alice_records() == before


@pytest.mark.anyio
@pytest.mark.parametrize("tool", ["search_memories", "prime_memory_context"])
async def test_no_mcp_search_or_prime_of_bob_shows_or_counts_or_stamps_a_memory_of_alice(
    seeded: Namespaces, mcp: httpx2.AsyncClient, tool: str
) -> None:
    before = seeded.alice_records()

    for params in SEARCHES:
        result = await call(mcp, seeded.bob_key, tool, params)

        assert result["isError"] is False, (params, result)
        page = result["structuredContent"]
        assert (page["items"], page["total"], page["has_more"]) == ([], 0, False), params
    assert seeded.alice_records() == before


@pytest.mark.anyio
async def test_over_mcp_too_ids_are_per_namespace_and_each_key_sees_only_its_own(
    seeded: Namespaces, mcp: httpx2.AsyncClient
) -> None:
    alice_total = (await call(mcp, seeded.alice_key, "search_memories", {}))["structuredContent"]["total"]

    created = await call(mcp, seeded.bob_key, "create_memory", {"content": "Bob note", "tags": ["alice-only"]})
    bob_primed = await call(mcp, seeded.bob_key, "prime_memory_context", {})
    alice_read = await call(mcp, seeded.alice_key, "get_memory", {"id": 1})

    assert created["structuredContent"]["id"] == 1
    assert [item["content"] for item in bob_primed["structuredContent"]["items"]] == ["Bob note"]
    assert alice_read["structuredContent"]["content"] == "Alice's vault code is 4711"
    after = (await call(mcp, seeded.alice_key, "search_memories", {}))["structuredContent"]["total"]
    assert after == alice_total == 3
