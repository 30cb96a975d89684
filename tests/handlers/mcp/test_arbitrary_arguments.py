"""No argument a client can send escapes the core's validation: for every tool the server lists and every argument
its input schema declares, any JSON value, or none, gives a result or a tool error in the core's own words (the HTTP
door's detail) naming the argument, never the SDK's generic "Error executing tool" and pydantic's wording."""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.server import MCPServer

from tests.handlers.conftest import call_tool, tool_text
from tests.handlers.mcp.test_tools import TOOLS

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
    """A tool and any subset of its arguments (required ones too, mostly given), each with any JSON value."""
    tool = draw(st.sampled_from(sorted(schemas)))
    schema = schemas[tool]
    required = set(schema.get("required", []))
    arguments: dict[str, Any] = {}
    for name in schema["properties"]:
        if draw(st.integers(0, 9)) > 0 if name in required else draw(st.booleans()):
            arguments[name] = draw(json_values)
    return tool, arguments


def test_the_property_covers_every_tool_and_argument(schemas: dict[str, dict[str, Any]]) -> None:
    assert len(schemas) == len(TOOLS)
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
        assert "pydantic" not in text, (tool, arguments, text)
        named = {**schemas[tool]["properties"], **arguments}
        assert names_an_argument(text, named) or NOT_AN_ARGUMENT.fullmatch(text), (tool, arguments, text)


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


# What each tool requires, as its schema publishes it: a client (or a model) reads the requirement there.
REQUIRED = {
    "prime_memory_context": [],
    "search_memories": [],
    "recall_memories": ["query"],
    "related_memories": ["id"],
    "create_memory": ["content"],
    "get_memory": ["id"],
    "update_memory": ["id"],
    "delete_memory": ["id"],
    "supersede_memories": ["id", "ids"],
}


def test_the_schemas_publish_each_required_argument_as_required_without_a_default(
    schemas: dict[str, dict[str, Any]],
) -> None:
    assert {tool: schema.get("required", []) for tool, schema in schemas.items()} == REQUIRED
    for tool, schema in schemas.items():
        for name in schema.get("required", []):
            assert "default" not in schema["properties"][name], (tool, name)
            assert {"type": "null"} not in schema["properties"][name].get("anyOf", []), (tool, name)


@pytest.mark.parametrize(
    ("tool", "arguments", "text"),
    [
        ("create_memory", {}, "content: is required"),
        ("create_memory", {"content": None}, "content: is required"),
        ("create_memory", {"tags": ["travel"], "memory_type": "event"}, "content: is required"),
        ("create_memory", {"colour": "red"}, "content: is required; colour: is not a field of this request"),
        ("get_memory", {}, "id: is required"),
        ("get_memory", {"id": None}, "id: is required"),
        ("update_memory", {}, "id: is required"),
        ("update_memory", {"id": None, "content": "The user likes tea"}, "id: is required"),
        ("delete_memory", {}, "id: is required"),
        ("delete_memory", {"id": None}, "id: is required"),
        ("recall_memories", {}, "query: is required"),
        ("recall_memories", {"query": None, "limit": 5}, "query: is required"),
        ("related_memories", {}, "id: is required"),
        ("related_memories", {"id": None, "limit": 5}, "id: is required"),
    ],
)
def test_a_missing_or_null_required_argument_reads_as_the_http_422_detail(
    server: MCPServer, tool: str, arguments: dict[str, Any], text: str
) -> None:
    result = anyio.run(call_tool, server, tool, arguments)

    assert result.is_error
    assert tool_text(result) == text


NOT_INTEGERS = [1.5, -0.5, [], [3], {}, {"n": 3}, "ten", "", True]


@pytest.mark.parametrize("value", NOT_INTEGERS, ids=repr)
@pytest.mark.parametrize("argument", ["limit", "offset"])
@pytest.mark.parametrize("tool", ["search_memories", "prime_memory_context"])
def test_a_page_argument_that_is_not_an_integer_says_it_must_be_an_integer(
    server: MCPServer, tool: str, argument: str, value: object
) -> None:
    result = anyio.run(call_tool, server, tool, {argument: value})

    assert result.is_error
    assert tool_text(result) == f"{argument}: must be an integer"


def test_a_whole_number_written_with_a_fraction_is_that_integer(server: MCPServer) -> None:
    result = anyio.run(call_tool, server, "search_memories", {"limit": 3.0, "offset": 0.0})

    assert result.structured_content is not None
    assert (result.structured_content["limit"], result.structured_content["offset"]) == (3, 0)
