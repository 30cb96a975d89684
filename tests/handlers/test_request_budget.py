"""Both doors open one budget (core.budget) around every request: the calls a request makes, in the entrypoint's
thread or in serve's worker threads, see it, and a request leaves none behind for the next."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from fastapi.testclient import TestClient
from mcp.server import MCPServer

from core.budget import REQUEST_STORAGE_SECONDS, seconds_left
from core.memories import MemoryService
from handlers.auth import open_access
from handlers.concurrency import RunBlocking, in_worker_thread, inline
from handlers.http.app import create_app
from handlers.mcp import create_server
from handlers.mcp.endpoint import create_endpoint

POLICIES = {"inline (Lambda)": inline, "worker threads (serve)": in_worker_thread}


@pytest.fixture
def left_at_create(memory_service: MemoryService, monkeypatch: pytest.MonkeyPatch) -> list[float | None]:
    """What each create saw left of its request's budget."""
    seen: list[float | None] = []
    create = memory_service.create

    def recording(*args: Any, **kwargs: Any) -> Any:
        seen.append(seconds_left())
        return create(*args, **kwargs)

    monkeypatch.setattr(memory_service, "create", recording)
    return seen


def within_one_request(seen: list[float | None]) -> bool:
    return all(left is not None and REQUEST_STORAGE_SECONDS - 5 < left <= REQUEST_STORAGE_SECONDS for left in seen)


@pytest.mark.parametrize("policy", POLICIES)
def test_every_http_request_runs_inside_its_budget(
    memory_service: MemoryService, left_at_create: list[float | None], policy: str
) -> None:
    app = create_app(memory_service, open_access(), version="test", run_blocking=POLICIES[policy])
    with TestClient(app) as client:
        for n in range(2):
            assert client.post("/memories", json={"content": f"note {n}"}).status_code == 201

    assert len(left_at_create) == 2
    assert within_one_request(left_at_create), left_at_create
    assert seconds_left() is None


@pytest.mark.anyio
@pytest.mark.parametrize("policy", POLICIES)
async def test_every_mcp_request_runs_inside_its_budget(
    memory_service: MemoryService, left_at_create: list[float | None], policy: str
) -> None:
    run_blocking: RunBlocking = POLICIES[policy]
    server: MCPServer = create_server(memory_service, open_access(), version="test", run_blocking=run_blocking)
    endpoint = create_endpoint(server, authenticate=open_access(), run_blocking=run_blocking)
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "create_memory", "arguments": {"content": "note"}},
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2025-11-25",
    }
    transport = httpx2.ASGITransport(app=endpoint)
    async with endpoint.session_manager.run(), httpx2.AsyncClient(transport=transport, base_url="https://x") as http:
        for _ in range(2):
            response = await http.post("/mcp", json=call, headers=headers)
            assert response.status_code == 200, response.text
            assert response.json()["result"]["isError"] is False

    assert len(left_at_create) == 2
    assert within_one_request(left_at_create), left_at_create
    assert seconds_left() is None
