"""A table deleted under a running service (as when an in-memory DynamoDB Local restarts): both doors answer a 503
`table-missing` problem+json (a tool error naming it inside an MCP tool call), never a 500, and log it once per
answer. A deployed service does not recreate the table; `serve` does (tests/integration/test_cli_stores.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from core.keys import KeyService
from core.memories import MemoryService
from handlers import problem
from handlers.auth import key_authenticator
from handlers.http.app import create_app
from handlers.mcp import create_server
from handlers.mcp.endpoint import create_endpoint, with_mcp_endpoint
from tests.conftest import Engine

MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
SEARCH = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search_memories", "arguments": {}}}


@pytest.fixture
def logged(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    lines: list[str] = []
    monkeypatch.setattr(problem.logger, "error", lambda message, *args, **kwargs: lines.append(message))
    return lines


@pytest.fixture
def client(moto_service: MemoryService, moto_keys: KeyService) -> Iterator[TestClient]:
    """Both doors as a deployed function runs them (no recreation), over moto, checking keys."""
    authenticate = key_authenticator(moto_keys)
    mcp = create_endpoint(create_server(moto_service, authenticate, version="test"), authenticate=authenticate)
    with TestClient(with_mcp_endpoint(create_app(moto_service, authenticate, version="test"), mcp)) as client:
        yield client


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def assert_table_missing(response: Any) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.headers["retry-after"] == "1"
    body = response.json()
    assert body["type"] == "urn:agent-memory:problem:table-missing"
    assert body["status"] == 503
    assert "storage table is missing" in body["detail"]


def test_a_request_whose_key_check_finds_the_table_missing_is_a_503_saying_so_on_both_doors_and_logged_once_each(
    client: TestClient, moto_keys: KeyService, moto_engine: Engine, moto_table: str, logged: list[str]
) -> None:
    _, token = moto_keys.create("alice")
    moto_engine.client.delete_table(TableName=moto_table)

    over_http = client.get("/memories", headers=bearer(token))
    over_mcp = client.post("/mcp", json=SEARCH, headers={**MCP_HEADERS, **bearer(token)})

    assert_table_missing(over_http)
    assert_table_missing(over_mcp)
    assert logged == [f"table {moto_table} does not exist: answered 503 until it is created again"] * 2


def test_a_call_finding_the_table_missing_after_the_key_check_is_a_503_or_a_tool_error_and_nothing_recreates_it(
    client: TestClient, moto_keys: KeyService, moto_engine: Engine, moto_table: str, logged: list[str]
) -> None:
    _, token = moto_keys.create("alice")
    assert client.get("/memories", headers=bearer(token)).status_code == 200  # the key is now verified and cached
    moto_engine.client.delete_table(TableName=moto_table)

    first = client.get("/memories", headers=bearer(token))
    again = client.post("/memories", json={"content": "The user keeps bees"}, headers=bearer(token))
    over_mcp = client.post("/mcp", json=SEARCH, headers={**MCP_HEADERS, **bearer(token)})

    assert_table_missing(first)
    assert_table_missing(again)
    assert over_mcp.status_code == 200
    result = over_mcp.json()["result"]
    assert result["isError"] is True
    assert "storage table is missing" in result["content"][0]["text"]
    assert result["content"][0]["text"].endswith("retry in 1 s")
    assert len(logged) == 3
    assert moto_table not in moto_engine.client.list_tables()["TableNames"]
