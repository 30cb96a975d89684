"""Scopes shape answers on the MCP door (CONTRACT.md): update_memory by a key without `read` reports only the id and
the version; a create still returns the caller's own record. Checked on the structured and the text content."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from mcp.server import MCPServer

from core.keys import KeyService
from core.memories import MemoryService
from core.model import Memory, NewMemory
from handlers.auth import Authenticator, key_authenticator
from handlers.mcp import create_server
from handlers.mcp.endpoint import create_endpoint
from tests.handlers.mcp.test_auth import call, serving

pytestmark = pytest.mark.anyio

STORED = "The user keeps bees"
UPDATES: dict[str, tuple[dict[str, Any], int]] = {
    # name: (arguments, the version afterwards)
    "change": ({"id": 1, "content": "The user keeps wasps", "tags": ["hobby"]}, 2),
    "no fields": ({"id": 1}, 1),
    "no-op": ({"id": 1, "content": STORED}, 1),
    "with expected_version": ({"id": 1, "status": "invalid", "expected_version": 1}, 2),
}
SCOPES = {"read": ["read"], "write": ["write"], "read+write": ["read", "write"]}


@pytest.fixture
def keyed(key_service: KeyService) -> Authenticator:
    return key_authenticator(key_service)


@pytest.fixture
def keyed_server(memory_service: MemoryService, keyed: Authenticator) -> MCPServer:
    memory_service.create("alice", NewMemory.parse({"content": STORED, "tags": ["secret-tag"]}))
    return create_server(memory_service, keyed, version="test")


@pytest.fixture
async def mcp(keyed_server: MCPServer, keyed: Authenticator) -> AsyncIterator[httpx2.AsyncClient]:
    async with serving(create_endpoint(keyed_server, authenticate=keyed)) as client:
        yield client


def token(key_service: KeyService, scopes: str) -> str:
    return key_service.create("alice", SCOPES[scopes])[1]


def reveals_nothing_stored(result: dict[str, Any]) -> bool:
    text = json.dumps(result)
    return "bees" not in text and "secret-tag" not in text


@pytest.mark.parametrize("update", UPDATES, ids=list(UPDATES))
async def test_update_by_a_write_only_key_reports_only_id_and_version(
    mcp: httpx2.AsyncClient, key_service: KeyService, update: str
) -> None:
    arguments, version = UPDATES[update]

    result = await call(mcp, token(key_service, "write"), "update_memory", arguments)

    assert result["isError"] is False, result
    assert result["structuredContent"] == {"id": 1, "version": version}
    assert [json.loads(block["text"]) for block in result["content"]] == [{"id": 1, "version": version}]
    assert reveals_nothing_stored(result)


@pytest.mark.parametrize("update", UPDATES, ids=list(UPDATES))
async def test_update_by_a_read_write_key_returns_the_record(
    mcp: httpx2.AsyncClient, key_service: KeyService, update: str
) -> None:
    arguments, version = UPDATES[update]

    result = await call(mcp, token(key_service, "read+write"), "update_memory", arguments)

    assert result["isError"] is False, result
    record = result["structuredContent"]
    assert set(record) == set(Memory.model_fields)
    assert (record["id"], record["version"]) == (1, version)
    assert record["content"] == arguments.get("content", STORED)
    assert [json.loads(block["text"]) for block in result["content"]] == [record]


@pytest.mark.parametrize("update", UPDATES, ids=list(UPDATES))
async def test_update_by_a_read_only_key_is_a_tool_error_showing_nothing(
    mcp: httpx2.AsyncClient, key_service: KeyService, update: str
) -> None:
    result = await call(mcp, token(key_service, "read"), "update_memory", UPDATES[update][0])

    assert result["isError"] is True
    assert "lacks the 'write' scope" in result["content"][0]["text"]
    assert "structuredContent" not in result or result["structuredContent"] is None
    assert reveals_nothing_stored(result)


@pytest.mark.parametrize("scopes", ["write", "read+write"])
async def test_create_returns_the_callers_own_record_and_delete_only_the_id(
    mcp: httpx2.AsyncClient, key_service: KeyService, scopes: str
) -> None:
    key = token(key_service, scopes)

    created = await call(mcp, key, "create_memory", {"content": "The user keeps wasps"})
    deleted = await call(mcp, key, "delete_memory", {"id": 1})

    assert created["structuredContent"]["content"] == "The user keeps wasps"
    assert (created["structuredContent"]["id"], created["structuredContent"]["version"]) == (2, 1)
    assert deleted["structuredContent"] == {"id": 1, "status": "deleted"}
    assert reveals_nothing_stored(created)
    assert reveals_nothing_stored(deleted)


@pytest.mark.parametrize(("tool", "arguments"), [("create_memory", {"content": "x"}), ("delete_memory", {"id": 1})])
async def test_create_and_delete_by_a_read_only_key_are_tool_errors_showing_nothing(
    mcp: httpx2.AsyncClient, key_service: KeyService, tool: str, arguments: dict[str, Any]
) -> None:
    result = await call(mcp, token(key_service, "read"), tool, arguments)

    assert result["isError"] is True
    assert reveals_nothing_stored(result)


async def test_update_memory_publishes_the_record_schema_requiring_only_id_and_version(keyed_server: MCPServer) -> None:
    tool = next(t for t in await keyed_server.list_tools() if t.name == "update_memory")

    assert tool.output_schema is not None
    assert set(tool.output_schema["properties"]) == set(Memory.model_fields)
    assert sorted(tool.output_schema["required"]) == ["id", "version"]


@pytest.mark.parametrize("scopes", ["write", "read+write"])
async def test_supersede_reports_the_records_only_to_a_key_that_may_read_them(
    mcp: httpx2.AsyncClient, key_service: KeyService, scopes: str
) -> None:
    key = token(key_service, scopes)
    await call(mcp, key, "create_memory", {"content": "The user keeps wasps"})

    result = await call(mcp, key, "supersede_memories", {"id": 2, "ids": [1]})

    assert result["isError"] is False, result
    (item,) = result["structuredContent"]["items"]
    assert (item["id"], item["version"]) == (1, 2)
    assert [json.loads(block["text"]) for block in result["content"]] == [result["structuredContent"]]
    if scopes == "write":
        assert item == {"id": 1, "version": 2}
        assert reveals_nothing_stored(result)
    else:
        assert (item["content"], item["status"]) == (STORED, "invalid")


async def test_supersede_memories_publishes_items_requiring_only_id_and_version(keyed_server: MCPServer) -> None:
    tool = next(t for t in await keyed_server.list_tools() if t.name == "supersede_memories")

    assert tool.output_schema is not None
    items = tool.output_schema["properties"]["items"]["items"]
    resolved = tool.output_schema["$defs"][items["$ref"].split("/")[-1]] if "$ref" in items else items
    assert set(resolved["properties"]) == set(Memory.model_fields)
    assert sorted(resolved["required"]) == ["id", "version"]
