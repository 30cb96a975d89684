"""The read fence at both doors (issue #38): two processes over one store, one of which erases the namespace (a new
owner then takes the name and writes) or revokes the key, while the doors of the other still trust the key from their
cache of verified keys. Every read that key then makes, over HTTP and over MCP, is refused (401, a tool error), and
nothing of the namespace is returned or stamped. Every store keeps the fence alike, as
tests/integration/test_read_fence.py shows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from adapters.memory import InMemoryKeyRepository, InMemoryMemoryRepository
from core.access import ApiKey
from core.history import HistoryQuery
from core.keys import KeyService
from core.memories import MemoryService
from core.model import Memory, NewMemory
from core.recall.service import RecallService
from core.recall.standin import StandInEmbedder
from core.repository import READ_KEY_NOT_LIVE
from handlers.auth import key_authenticator
from handlers.http.app import create_app
from handlers.mcp import create_server
from handlers.mcp.endpoint import create_endpoint
from tests.conftest import INDEXER, FakeClock
from tests.handlers.mcp.test_auth import call, serving

pytestmark = pytest.mark.anyio

NS = "alice"
ENDINGS = ["erased", "revoked"]
PROBLEM_JSON = "application/problem+json"
INVALID_TOKEN = 'Bearer realm="agent-memory", error="invalid_token"'
NO_STAMP = {"prefer": "no-stamp"}
# Every HTTP route that answers with memories of the namespace: (method, path, extra headers, JSON body).
HTTP_READS: list[tuple[str, str, dict[str, str], dict[str, Any] | None]] = [
    ("GET", "/memories/1", {}, None),
    ("GET", "/memories/1", NO_STAMP, None),
    ("GET", "/memories/7", {}, None),
    ("GET", "/memories", {}, None),
    ("GET", "/memories", NO_STAMP, None),
    ("GET", "/memories?sort=last_accessed_at", NO_STAMP, None),
    ("GET", "/memories?q=keeps", {}, None),
    ("GET", "/memories/1/history", {}, None),
    ("GET", "/changes", {}, None),
    ("GET", "/recall?query=what+does+the+user+keep", {}, None),
    ("GET", "/recall?query=what+does+the+user+keep", NO_STAMP, None),
    ("GET", "/memories/1/related", {}, None),
    ("GET", "/memories/7/related", {}, None),
    ("PATCH", "/memories/1", {}, {}),  # changes nothing: it answers with the record it read
]
# Every MCP tool that answers with memories of the namespace.
MCP_READS: list[tuple[str, dict[str, Any]]] = [
    ("prime_memory_context", {}),
    ("search_memories", {}),
    ("search_memories", {"q": "keeps"}),
    ("get_memory", {"id": 1}),
    ("get_memory", {"id": 7}),
    ("recall_memories", {"query": "what does the user keep"}),
    ("related_memories", {"id": 1}),
    ("related_memories", {"id": 7}),
    ("update_memory", {"id": 1}),  # changes nothing: it answers with the record it read
]


@dataclass
class TwoProcesses:
    """One store; the doors' process (`here`), whose services are fenced as deployed, and another (`elsewhere`)."""

    store: InMemoryMemoryRepository
    memories: MemoryService
    recall: RecallService
    here: KeyService
    elsewhere: KeyService

    def end(self, key_id: str, ending: str) -> None:
        """Elsewhere, end the key: erase its namespace, after which a new owner of the name writes memory 1; or
        revoke it."""
        if ending == "erased":
            self.store.erase(NS)
            owner, _ = self.elsewhere.create(NS)
            goats = {"content": "The new owner keeps goats", "tags": ["animals"]}
            self.memories.create(NS, NewMemory.parse(goats), key_id=owner.key_id)
        else:
            self.elsewhere.revoke(key_id)

    def stored(self) -> Memory:
        return self.memories.get(NS, 1, stamp=False)


def http_door(processes: TwoProcesses) -> tuple[ApiKey, dict[str, str], FastAPI]:
    """The HTTP door of `processes` (here), a key it has verified, and that key's Authorization header."""
    app = create_app(processes.memories, key_authenticator(processes.here), version="test", recall=processes.recall)
    key, token = processes.here.create(NS)
    return key, {"authorization": f"Bearer {token}"}, app


@pytest.fixture
def processes(api_keys: InMemoryKeyRepository, clock: FakeClock) -> TwoProcesses:
    store = InMemoryMemoryRepository(api_keys)
    return TwoProcesses(
        store,
        MemoryService(store, clock, fenced=True, indexer=INDEXER),
        RecallService(store, StandInEmbedder(), clock=clock, fenced=True),
        KeyService(api_keys, clock),
        KeyService(api_keys, clock),
    )


@pytest.mark.parametrize("ending", ENDINGS)
def test_every_http_read_with_a_key_ended_elsewhere_while_this_server_trusts_it_is_401_and_stamps_nothing(
    processes: TwoProcesses, ending: str
) -> None:
    key, bearer, app = http_door(processes)
    with TestClient(app) as door:
        created = door.post("/memories", json={"content": "The user keeps bees", "tags": ["animals"]}, headers=bearer)
        assert created.status_code == 201  # verified here, and cached
        processes.end(key.key_id, ending)
        stored = processes.stored()
        answers = [
            door.request(method, path, headers={**bearer, **headers}, json=body)
            for method, path, headers, body in HTTP_READS
        ]

    for (method, path, headers, _), answer in zip(HTTP_READS, answers, strict=True):
        route = f"{method} {path} {headers}"
        assert answer.status_code == 401, route
        assert answer.headers["content-type"] == PROBLEM_JSON, route
        assert answer.headers["www-authenticate"] == INVALID_TOKEN, route
        assert answer.json()["detail"] == READ_KEY_NOT_LIVE, route
        assert stored.content not in answer.text, route
    assert processes.stored() == stored
    assert stored.last_accessed_at is None


@pytest.mark.parametrize("ending", ENDINGS)
async def test_every_mcp_read_with_a_key_ended_elsewhere_while_this_server_trusts_it_is_a_tool_error_and_stamps_nothing(
    processes: TwoProcesses, ending: str
) -> None:
    keyed = key_authenticator(processes.here)
    server = create_server(processes.memories, keyed, version="test", recall=processes.recall)
    key, token = processes.here.create(NS)
    async with serving(create_endpoint(server, authenticate=keyed)) as http:
        created = await call(http, token, "create_memory", {"content": "The user keeps bees", "tags": ["animals"]})
        assert not created.get("isError"), created  # verified here, and cached
        processes.end(key.key_id, ending)
        stored = processes.stored()
        results = [await call(http, token, tool, arguments) for tool, arguments in MCP_READS]

    for (tool, arguments), result in zip(MCP_READS, results, strict=True):
        assert result["isError"], (tool, arguments)
        assert result["content"][0]["text"].startswith(READ_KEY_NOT_LIVE), (tool, arguments)
        assert "structuredContent" not in result or not result["structuredContent"], (tool, arguments)
        assert stored.content not in str(result), (tool, arguments)
    assert processes.stored() == stored
    assert stored.last_accessed_at is None


@pytest.mark.parametrize("ending", ENDINGS)
def test_a_purge_with_a_key_ended_elsewhere_while_this_server_trusts_it_is_401_and_purges_nothing(
    processes: TwoProcesses, ending: str
) -> None:
    key, bearer, app = http_door(processes)
    with TestClient(app) as door:
        created = door.post("/memories", json={"content": "The user keeps bees"}, headers=bearer)
        assert created.status_code == 201  # verified here, and cached
        processes.end(key.key_id, ending)
        processes.memories.delete(NS, 1)  # the memory 1 there is now (the new owner's, or still the user's) is deleted
        answer = door.delete("/memories/1?purge=true", headers=bearer)

    assert answer.status_code == 401
    assert answer.json()["detail"] == READ_KEY_NOT_LIVE
    history = processes.memories.history(NS, 1, HistoryQuery())
    assert history.items[0].change == "deleted"  # still there, restorable
