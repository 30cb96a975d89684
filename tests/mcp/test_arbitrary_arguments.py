"""No argument a client can send escapes the core's validation: for every tool the server lists and every argument
its input schema declares, any JSON value gives a result or a tool error in the core's own words (the HTTP door's
detail) naming the argument, never the SDK's generic "Error executing tool"."""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.server import MCPServer

from tests.mcp.conftest import call_tool, tool_text

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([2**31, 2**63 - 1, 2**63, 10**10, 10**40, -(10**40), 10**4000])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=300)
    | st.sampled_from(["active", "invalid", "deleted", "fact", "id", "updated_at", "1", "0", "-1", "null", "[]"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)
# Outcomes that are not about one argument, in the words the HTTP door uses for its 404 and 412.
NOT_AN_ARGUMENT = re.compile(
    r"memory \S.* does not exist; find the right id with search_memories"
    r"|memory \d+ is at version \d+; read it again and retry with that version"
)


def tool_schemas(server: MCPServer) -> dict[str, dict[str, Any]]:
    """Every tool's input schema, as the server lists them (not a hand-kept list)."""
    tools = anyio.run(server.list_tools)
    return {tool.name: tool.input_schema for tool in tools}


def names_an_argument(text: str, arguments: dict[str, Any]) -> bool:
    return any(re.match(rf"{re.escape(name)}(\[\d+\])*: \S", text) for name in arguments)


@pytest.fixture
def schemas(server: MCPServer) -> dict[str, dict[str, Any]]:
    return tool_schemas(server)


@st.composite
def tool_calls(draw: st.DrawFn, schemas: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    tool = draw(st.sampled_from(sorted(schemas)))
    schema = schemas[tool]
    required = set(schema.get("required", []))
    arguments: dict[str, Any] = {}
    for name in schema["properties"]:
        if name in required or draw(st.booleans()):
            arguments[name] = draw(json_values)
    return tool, arguments


def test_the_property_covers_every_tool_and_argument(schemas: dict[str, dict[str, Any]]) -> None:
    assert len(schemas) == 6
    assert all(schema["properties"] for schema in schemas.values())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_argument_value_gives_a_result_or_a_tool_error_naming_the_argument(
    server: MCPServer, schemas: dict[str, dict[str, Any]], data: st.DataObject
) -> None:
    tool, arguments = data.draw(tool_calls(schemas))

    result = anyio.run(call_tool, server, tool, arguments)

    if result.is_error:
        text = tool_text(result)
        assert not text.startswith("Error executing tool"), (tool, arguments, text)
        assert names_an_argument(text, arguments) or NOT_AN_ARGUMENT.fullmatch(text), (tool, arguments, text)


@pytest.mark.parametrize(
    ("tool", "arguments", "text"),
    [
        (
            "create_memory",
            {"content": "x", "idempotency_key": 5},
            "idempotency_key: must be 1 to 255 visible ASCII characters (no spaces)",
        ),
        (
            "update_memory",
            {"id": 1, "expected_version": 10**40},
            "expected_version: must be an integer from 1 to 9999999999",
        ),
        ("search_memories", {"offset": 2**63}, "offset: must be at most 9223372036854775807 (2^63-1)"),
        ("create_memory", {"content": ["x"]}, "content: must be a string"),
    ],
)
def test_a_refused_argument_reads_exactly_as_the_core_words_it(
    server: MCPServer, tool: str, arguments: dict[str, Any], text: str
) -> None:
    result = anyio.run(call_tool, server, tool, arguments)

    assert result.is_error
    assert tool_text(result) == text
