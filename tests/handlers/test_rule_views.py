"""Each input rule is written once, on the core's types; the OpenAPI document and the MCP tools' inputSchemas are
derived from them. These tests prove the three views agree: the two published schemas say the same for every field
both doors take, and the core accepts exactly the values the schema allows."""

from __future__ import annotations

from typing import Any

import jsonschema_rs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.server import MCPServer

from core.contract import RetrievalQuery
from core.errors import InvalidInputError
from core.limits import (
    CONTENT_MAX_CHARS,
    MAX_LIMIT,
    MAX_MEMORY_ID,
    MAX_OFFSET,
    Q_MAX_CHARS,
    RECALL_MAX_LIMIT,
    RECALL_QUERY_MAX_CHARS,
    SUPERSEDE_MAX,
    TAG_MAX_CHARS,
    TAGS_MAX,
)
from core.memories import SupersedeRequest
from core.model import MemoryChanges, NewMemory
from core.recall.query import RecallQuery
from core.recall.related import RelatedQuery
from handlers.auth import open_access
from handlers.http.app import create_app
from handlers.mcp import create_server

# The operations both doors serve, as (OpenAPI path, method, where its fields are) and the MCP tool.
OPERATIONS = [
    (("/memories", "get", "query"), "search_memories", RetrievalQuery),
    (("/memories", "post", "body"), "create_memory", NewMemory),
    (("/memories/{memory_id}", "patch", "body"), "update_memory", MemoryChanges),
    (("/recall", "get", "query"), "recall_memories", RecallQuery),
    (("/memories/{memory_id}/related", "get", "query"), "related_memories", RelatedQuery),
    (("/memories/{memory_id}/supersede", "post", "body"), "supersede_memories", SupersedeRequest),
]
# What only describes a schema or belongs to one door's calling convention (a tool's null means "left out").
_ANNOTATIONS = {"description", "title", "default"}
_NOT_IN_TOOL_SCHEMAS = {"pattern", "not"}


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    app = create_app(None, open_access(), version="test")  # type: ignore[arg-type]
    return app.openapi()


@pytest.fixture(scope="module")
def tool_schemas() -> dict[str, dict[str, Any]]:
    import anyio

    server: MCPServer = create_server(None, open_access(), version="test")  # type: ignore[arg-type]
    tools = anyio.run(server.list_tools)
    return {tool.name: tool.input_schema for tool in tools}


def _openapi_fields(openapi: dict[str, Any], path: str, method: str, where: str) -> dict[str, dict[str, Any]]:
    operation = openapi["paths"][path][method]
    if where == "query":
        return {
            p["name"]: {**p["schema"], "description": p["description"]}
            for p in operation["parameters"]
            if p["in"] == "query"
        }
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    return dict(body["properties"])


def _bare(schema: Any, leave_out: frozenset[str] | set[str] = frozenset()) -> Any:
    """The rule alone: no annotations, no `null` alternative, without the keywords in `leave_out`."""
    if isinstance(schema, dict):
        alternatives = [a for a in schema.get("anyOf", []) if a != {"type": "null"}]
        if "anyOf" in schema and len(alternatives) == 1:
            return _bare(alternatives[0], leave_out)
        return {k: _bare(v, leave_out) for k, v in schema.items() if k not in _ANNOTATIONS and k not in leave_out}
    if isinstance(schema, list):
        return [_bare(item, leave_out) for item in schema]
    return schema


@pytest.mark.parametrize(("route", "tool", "model"), OPERATIONS, ids=[tool for _, tool, _ in OPERATIONS])
def test_the_openapi_document_and_the_tool_schema_state_the_same_rule_for_every_field(
    openapi: dict[str, Any],
    tool_schemas: dict[str, dict[str, Any]],
    route: tuple[str, str, str],
    tool: str,
    model: type,
) -> None:
    document = _openapi_fields(openapi, *route)
    published = tool_schemas[tool]["properties"]
    assert set(model.model_fields) <= set(document)  # type: ignore[attr-defined]
    assert set(model.model_fields) <= set(published)  # type: ignore[attr-defined]
    for name in model.model_fields:  # type: ignore[attr-defined]
        assert _bare(published[name]) == _bare(document[name], _NOT_IN_TOOL_SCHEMAS), f"{tool}.{name}"
        # One description per field: the tool may frame it ("New content. ... Left out or null: unchanged.").
        assert document[name]["description"] in published[name]["description"], f"{tool}.{name}"


# Values of each field's JSON type, on both sides of every bound and through the alphabet edges of each rule.
_TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(" \t\n\x00\x07\x85\u00a0\u2028\u212a\U000e0041AZaz09-_.:#é"),
        st.characters(exclude_categories=["Cs"]),
    ),
    max_size=12,
)
_IDS = st.one_of(
    st.lists(st.integers(-1, 3), max_size=3),
    st.integers(SUPERSEDE_MAX, SUPERSEDE_MAX + 1).map(lambda n: list(range(1, n + 1))),
    st.sampled_from([[MAX_MEMORY_ID], [MAX_MEMORY_ID + 1], ["1"], [1.5], [2.0], 3, "1"]),
)
_VALUES: dict[str, st.SearchStrategy[object]] = {
    "supersedes": _IDS,
    "ids": _IDS,
    "status": st.sampled_from(["active", "invalid", "deleted", "Active", "", "gone"]),
    "memory_type": st.sampled_from(["preference", "fact", "identity", "event", "Fact", ""]),
    "tag": _TEXT,
    "q": st.one_of(_TEXT, st.integers(Q_MAX_CHARS - 1, Q_MAX_CHARS + 1).map(lambda n: "q" * n)),
    "query": st.one_of(
        _TEXT,
        st.integers(RECALL_QUERY_MAX_CHARS - 1, RECALL_QUERY_MAX_CHARS + 1).map(lambda n: "\u3000" + "q" * n + " "),
    ),
    "as_of": st.one_of(
        _TEXT,
        st.sampled_from(
            [
                "2026-12-04T10:00:00Z",
                "2026-12-04t10:00:00.5+01:30",
                "2016-12-31T23:59:60Z",
                "2026-12-04",
                "2026-02-30T10:00:00Z",
            ]
        ),
    ),
    "sort": st.sampled_from(["id", "created_at", "updated_at", "last_accessed_at", "ID", "name"]),
    "limit": st.one_of(st.integers(-2, MAX_LIMIT + 2), st.sampled_from([RECALL_MAX_LIMIT + 1, 2**31, MAX_OFFSET + 1])),
    "offset": st.one_of(st.integers(-2, 3), st.integers(MAX_OFFSET - 1, MAX_OFFSET + 1)),
    "content": st.one_of(
        _TEXT,
        st.integers(CONTENT_MAX_CHARS - 1, CONTENT_MAX_CHARS + 1).map(lambda n: " " + "c" * n + "\n"),
    ),
    "tags": st.one_of(
        st.lists(_TEXT, max_size=3),
        st.lists(
            st.sampled_from(["travel", "Work", " x ", "a" * TAG_MAX_CHARS, "b" * (TAG_MAX_CHARS + 1)]), max_size=3
        ),
        st.integers(TAGS_MAX, TAGS_MAX + 1).map(lambda n: [f"t{i}" for i in range(n)]),
    ),
}


def _refused_fields(model: Any, name: str, value: object) -> set[str]:
    """The fields the core names when refusing `{name: value}`; empty when it accepts it."""
    # A create needs content, a recall its query: a valid one beside the field under test.
    required = {NewMemory: {"content": "The user drinks tea"}, RecallQuery: {"query": "what does the user drink"}}
    body = {**required.get(model, {}), name: value}
    try:
        model.parse(body)
    except InvalidInputError as refused:
        return {error.field.split("[")[0] for error in refused.errors}
    return set()


@pytest.mark.parametrize(("route", "tool", "model"), OPERATIONS, ids=[tool for _, tool, _ in OPERATIONS])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_the_core_accepts_exactly_the_values_the_published_schema_allows(
    openapi: dict[str, Any], route: tuple[str, str, str], tool: str, model: Any, data: st.DataObject
) -> None:
    fields = _openapi_fields(openapi, *route)
    name = data.draw(st.sampled_from(sorted(model.model_fields)))
    value = data.draw(_VALUES[name])
    allowed = jsonschema_rs.validator_for(_bare(fields[name]), validate_formats=True).is_valid(value)
    assert _refused_fields(model, name, value) == (set() if allowed else {name}), (name, value)
