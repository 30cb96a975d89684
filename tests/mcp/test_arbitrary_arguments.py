"""No argument a client can send crashes a tool: every call succeeds or is an anticipated tool error."""

from __future__ import annotations

from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.server import MCPServer

from tests.mcp.conftest import call_tool, tool_text

PARAMETERS: dict[str, list[str]] = {
    "prime_memory_context": ["status", "memory_type", "tag", "q", "sort", "limit", "offset"],
    "search_memories": ["status", "memory_type", "tag", "q", "sort", "limit", "offset"],
    "create_memory": ["content", "tags", "memory_type", "status"],
    "get_memory": ["id"],
    "update_memory": ["id", "content", "tags", "memory_type", "status", "expected_version"],
    "delete_memory": ["id"],
}

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=300)
    | st.sampled_from(["active", "invalid", "deleted", "fact", "id", "updated_at", "1", "0", "-1", "null", "[]"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    tool = draw(st.sampled_from(sorted(PARAMETERS)))
    names = st.sampled_from([*PARAMETERS[tool], "extra", "ctx"])
    return tool, draw(st.dictionaries(names, json_values, max_size=5))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=tool_calls())
def test_no_arguments_make_a_tool_crash(server: MCPServer, call: tuple[str, dict[str, Any]]) -> None:
    tool, arguments = call

    result = anyio.run(call_tool, server, tool, arguments)

    # A crash reaches the model as exactly this, with its details withheld; anything else was anticipated.
    assert tool_text(result) != f"Error executing tool {tool}", arguments
