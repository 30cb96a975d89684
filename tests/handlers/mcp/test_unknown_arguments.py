"""Every tool the server lists refuses an argument it does not know, naming it in the HTTP 422's words for an unknown
body field, and does nothing else: no memory stored or changed, none stamped. The tools come from the server itself,
so a tool added later is covered without a change here."""

from __future__ import annotations

import anyio
import pytest
from mcp.server import MCPServer

from adapters.memory import InMemoryMemoryRepository
from core.contract import RetrievalQuery
from core.memories import MemoryService
from core.model import NOT_A_FIELD, NewMemory
from handlers.auth import open_access
from handlers.mcp.server import create_server
from tests.conftest import NAMESPACE
from tests.handlers.conftest import call_tool, tool_text

TOOLS = sorted(
    tool.name
    for tool in anyio.run(
        create_server(MemoryService(InMemoryMemoryRepository()), open_access(), version="t").list_tools
    )
)
# A valid value for each argument any tool requires, so that a call is refused for its unknown argument alone (a
# required argument not named here fails the test until it is).
VALID = {"id": 1, "content": "The user keeps wasps", "query": "what does the user keep?", "ids": [1]}


def test_the_words_are_the_http_doors_for_an_unknown_body_field() -> None:
    assert NOT_A_FIELD == "is not a field of this request"


@pytest.mark.parametrize("tool", TOOLS)
def test_every_tool_refuses_an_argument_it_does_not_know_naming_it_and_changes_and_stamps_nothing(
    server: MCPServer, memory_service: MemoryService, tool: str
) -> None:
    memory = memory_service.create(NAMESPACE, NewMemory.parse({"content": "The user keeps bees"}))
    schema = next(listed for listed in anyio.run(server.list_tools) if listed.name == tool).input_schema
    arguments = {name: VALID[name] for name in schema.get("required", [])} | {"colour": "red"}

    result = anyio.run(call_tool, server, tool, arguments)

    assert result.is_error
    assert tool_text(result) == f"colour: {NOT_A_FIELD}"
    assert memory_service.get(NAMESPACE, memory.id, stamp=False) == memory  # unchanged, unstamped
    assert memory_service.search(NAMESPACE, RetrievalQuery.parse({}), stamp=False).total == 1
