"""The tools in-process through the SDK's own Client: schemas, annotations, behaviour and error text."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.client import Client
from mcp.server import MCPServer
from mcp.server.mcpserver.tools import Tool as ServedTool
from mcp.types import Tool

from adapters.memory import InMemoryMemoryRepository
from core.contract import RETRIEVAL_FIELDS, Page, RetrievalQuery
from core.errors import (
    AuthenticationError,
    DomainError,
    FieldError,
    InvalidInputError,
    KeyNotFoundError,
    MemoryNotFoundError,
    NamespaceFullError,
    PermissionDeniedError,
    StorageUnavailableError,
    TableMissingError,
    VersionExhaustedError,
    VersionMismatchError,
    WriteConflictError,
    WriteOutcomeUnknownError,
)
from core.memories import MemoryService
from core.model import STANDARD_TAGS, Memory, MemoryChanges, NewMemory
from handlers.auth import open_access
from handlers.mcp.results import TOOL_ERROR_HINTS
from handlers.mcp.server import INSTRUCTIONS, create_server
from handlers.mcp.tools import search_memories
from tests.conftest import domain_error_classes
from tests.handlers.conftest import call_tool, tool_text

pytestmark = pytest.mark.anyio

TOOLS = {
    "prime_memory_context",
    "search_memories",
    "recall_memories",
    "related_memories",
    "create_memory",
    "get_memory",
    "update_memory",
    "delete_memory",
    "supersede_memories",
}


async def list_tools(server: MCPServer) -> dict[str, Tool]:
    async with Client(server) as client:
        return {tool.name: tool for tool in (await client.list_tools()).tools}


def output_properties(tool: Tool) -> dict[str, Any]:
    assert tool.output_schema is not None
    properties: dict[str, Any] = tool.output_schema["properties"]
    return properties


def seed(service: MemoryService, *contents: str, **fields: Any) -> list[Memory]:
    return [service.create("default", NewMemory.parse({"content": content, **fields})) for content in contents]


async def test_the_server_offers_exactly_the_contract_tools_each_with_an_output_schema(server: MCPServer) -> None:
    tools = await list_tools(server)

    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.output_schema is not None, tool.name
        assert tool.output_schema["type"] == "object", tool.name
        assert tool.description, tool.name
        assert tool.title, tool.name


async def test_retrieval_tools_take_exactly_the_retrieval_fields(server: MCPServer) -> None:
    tools = await list_tools(server)

    for name in ("prime_memory_context", "search_memories"):
        assert list(tools[name].input_schema["properties"]) == list(RETRIEVAL_FIELDS)
        assert tools[name].output_schema == tools["search_memories"].output_schema
    assert set(output_properties(tools["search_memories"])) == set(Page.model_fields)


async def test_record_tools_publish_the_record_schema_and_their_real_constraints(server: MCPServer) -> None:
    tools = await list_tools(server)

    for name in ("create_memory", "get_memory", "update_memory"):
        assert set(output_properties(tools[name])) == set(Memory.model_fields)
    create = tools["create_memory"].input_schema
    assert create["required"] == ["content"]
    # The length bound counts content once trimmed, so the schema states it in words (a maxLength would refuse
    # what the service accepts); the OpenAPI document spells it as a pattern, which tool schemas leave out.
    assert create["properties"]["content"]["minLength"] == 1
    assert "1 to 8192 characters" in create["properties"]["content"]["description"]
    assert create["properties"]["tags"]["anyOf"][0]["maxItems"] == 20
    assert create["properties"]["memory_type"]["enum"] == ["preference", "fact", "identity", "event"]
    assert create["properties"]["status"]["enum"] == ["active", "invalid"]
    update = tools["update_memory"].input_schema
    assert update["required"] == ["id"]
    assert set(update["properties"]) == {"id", "content", "tags", "memory_type", "status", "expected_version"}
    search = tools["search_memories"].input_schema["properties"]
    assert search["limit"]["anyOf"][0] == {"type": "integer", "minimum": 1}
    assert search["sort"]["anyOf"][0]["enum"] == ["id", "created_at", "updated_at", "last_accessed_at"]


async def test_every_parameter_is_described_for_the_model(server: MCPServer) -> None:
    for tool in (await list_tools(server)).values():
        for name, schema in tool.input_schema["properties"].items():
            assert len(schema.get("description", "")) > 30, f"{tool.name}.{name}"


async def test_annotations_mark_reads_as_read_only_and_delete_and_update_as_destructive(server: MCPServer) -> None:
    tools = await list_tools(server)
    hints = {
        name: (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint)
        for name, tool in tools.items()
        if (a := tool.annotations) is not None
    }

    assert hints == {
        "prime_memory_context": (True, False, True, False),
        "search_memories": (True, False, True, False),
        "recall_memories": (True, False, True, False),
        "related_memories": (True, False, True, False),
        "get_memory": (True, False, True, False),
        "create_memory": (False, False, False, False),
        "update_memory": (False, True, True, False),
        "delete_memory": (False, True, True, False),
        "supersede_memories": (False, True, False, False),
    }
    for name in ("prime_memory_context", "search_memories", "get_memory"):
        assert "last_accessed_at" in (tools[name].description or ""), "reads must say that they stamp"


async def test_instructions_teach_an_agent_to_use_memory_well(server: MCPServer) -> None:
    async with Client(server) as client:
        instructions = client.instructions

    assert instructions == INSTRUCTIONS
    for phrase in (
        "prime_memory_context",
        "one atomic fact",
        "normalised",
        "memory_type",
        "invalid",
        "expected_version",
    ):
        assert phrase in INSTRUCTIONS
    for tag in STANDARD_TAGS:
        assert tag in INSTRUCTIONS


async def test_prime_defaults_are_active_newest_updated_first_twenty_and_documented(server: MCPServer) -> None:
    prime = (await list_tools(server))["prime_memory_context"]
    properties = prime.input_schema["properties"]
    defaults = {name: properties[name].get("default") for name in RETRIEVAL_FIELDS}

    assert defaults == {
        "status": "active",
        "memory_type": None,
        "tag": None,
        "q": None,
        "sort": "updated_at",
        "limit": 20,
        "offset": 0,
    }
    for documented in ("status=active", "sort=updated_at", "limit=20", "offset=0", "last_accessed_at"):
        assert documented in (prime.description or "")


async def test_prime_returns_the_twenty_most_recently_changed_active_memories(
    server: MCPServer, memory_service: MemoryService
) -> None:
    memories = seed(memory_service, *(f"The user knows fact number {n}" for n in range(1, 24)))
    seed(memory_service, "The user lives in Paris", status="invalid")
    oldest = memories[0]
    result = await call_tool(server, "update_memory", {"id": oldest.id, "content": "The user knows fact number one"})
    assert not result.is_error

    page = (await call_tool(server, "prime_memory_context", {})).structured_content

    assert page is not None
    ids = [item["id"] for item in page["items"]]
    assert ids == [oldest.id, *(m.id for m in reversed(memories[4:]))]
    assert (page["total"], page["limit"], page["offset"], page["has_more"]) == (23, 20, 0, True)
    assert {item["status"] for item in page["items"]} == {"active"}


async def test_priming_again_returns_the_same_pack_because_stamping_does_not_reorder_it(
    server: MCPServer, memory_service: MemoryService
) -> None:
    seed(memory_service, *(f"The user has preference {n}" for n in range(1, 30)), memory_type="preference")

    first = (await call_tool(server, "prime_memory_context", {})).structured_content
    second = (await call_tool(server, "prime_memory_context", {})).structured_content

    assert first is not None
    assert second is not None
    assert [i["id"] for i in first["items"]] == [i["id"] for i in second["items"]]
    assert first["items"][0]["last_accessed_at"] < second["items"][0]["last_accessed_at"]


async def test_prime_with_null_status_includes_invalid_memories(
    server: MCPServer, memory_service: MemoryService
) -> None:
    seed(memory_service, "The user is vegetarian")
    seed(memory_service, "The user eats fish", status="invalid")

    page = (await call_tool(server, "prime_memory_context", {"status": None})).structured_content

    assert page is not None
    assert page["total"] == 2


async def test_search_returns_the_envelope_as_structured_content(
    server: MCPServer, memory_service: MemoryService
) -> None:
    seed(memory_service, "The user drinks tea", "The user drinks coffee", "The user owns a bike", tags=["preference"])
    # The SDK client itself checks structured content against the listed output schema and raises on a mismatch.
    result = await call_tool(server, "search_memories", {"q": "drinks", "limit": 1})

    assert not result.is_error
    assert result.structured_content is not None
    assert Page.model_validate(result.structured_content).total == 2
    assert [i["content"] for i in result.structured_content["items"]] == ["The user drinks tea"]
    assert (result.structured_content["total"], result.structured_content["has_more"]) == (2, True)


async def test_json_looking_text_arguments_stay_text(server: MCPServer, memory_service: MemoryService) -> None:
    created = await call_tool(server, "create_memory", {"content": '["coffee", "tea"]', "tags": '["preference"]'})
    seed(memory_service, "The user says null when unsure")

    found = await call_tool(server, "search_memories", {"q": "null"})

    assert created.structured_content is not None
    assert created.structured_content["content"] == '["coffee", "tea"]'
    assert created.structured_content["tags"] == ["preference"]
    assert found.structured_content is not None
    assert found.structured_content["total"] == 1


async def test_create_get_update_delete_round_trip(server: MCPServer) -> None:
    async with Client(server) as client:
        created = await client.call_tool(
            "create_memory", {"content": "  The user's name is Ana  ", "tags": ["Profile", "profile"]}
        )
        assert created.structured_content is not None
        memory_id = created.structured_content["id"]
        read = await client.call_tool("get_memory", {"id": memory_id})
        updated = await client.call_tool(
            "update_memory", {"id": memory_id, "memory_type": "identity", "expected_version": 1}
        )
        deleted = await client.call_tool("delete_memory", {"id": memory_id})
        gone = await client.call_tool("get_memory", {"id": memory_id})

    assert created.structured_content["content"] == "The user's name is Ana"
    assert created.structured_content["tags"] == ["profile"]
    assert (created.structured_content["version"], created.structured_content["last_accessed_at"]) == (1, None)
    assert read.structured_content is not None
    assert read.structured_content["last_accessed_at"] is not None
    assert updated.structured_content is not None
    assert (updated.structured_content["memory_type"], updated.structured_content["version"]) == ("identity", 2)
    assert deleted.structured_content == {"id": memory_id, "status": "deleted"}
    assert gone.is_error
    assert tool_text(gone).endswith(f"memory {memory_id} does not exist; {hint_for_not_found()}")


def hint_for_not_found() -> str:
    hint = TOOL_ERROR_HINTS[MemoryNotFoundError]
    assert hint is not None
    return hint


async def test_an_update_that_changes_nothing_keeps_version_and_updated_at(
    server: MCPServer, memory_service: MemoryService
) -> None:
    (memory,) = seed(memory_service, "The user prefers trains")

    result = await call_tool(server, "update_memory", {"id": memory.id, "content": "The user prefers trains"})

    assert result.structured_content is not None
    assert (result.structured_content["version"], result.structured_content["updated_at"]) == (1, memory.updated_at)


async def test_a_stale_expected_version_is_a_tool_error_naming_the_current_version(
    server: MCPServer, memory_service: MemoryService
) -> None:
    (memory,) = seed(memory_service, "The user prefers trains")
    memory_service.update("default", memory.id, MemoryChanges.parse({"content": "x"}))

    result = await call_tool(server, "update_memory", {"id": memory.id, "content": "Planes", "expected_version": 1})

    assert result.is_error
    assert "is at version 2" in tool_text(result)
    assert memory_service.get("default", memory.id).content == "x"


@pytest.mark.parametrize("expected_version", [0, -1, True, "2", 1.5, 10**40, 10**10])
async def test_an_expected_version_that_is_not_a_version_is_invalid_input(
    server: MCPServer, memory_service: MemoryService, expected_version: object
) -> None:
    (memory,) = seed(memory_service, "The user prefers trains")

    result = await call_tool(server, "update_memory", {"id": memory.id, "expected_version": expected_version})

    assert result.is_error
    assert tool_text(result) == "expected_version: must be an integer from 1 to 9999999999"


@pytest.mark.parametrize("memory_id", [0, -3, "abc", True, 1.5, 10**12, "9" * 5000], ids=lambda value: repr(value)[:12])
async def test_an_id_that_cannot_be_an_id_is_not_found_as_over_http(server: MCPServer, memory_id: object) -> None:
    for tool in ("get_memory", "delete_memory", "update_memory"):
        result = await call_tool(server, tool, {"id": memory_id})

        assert result.is_error
        # The core quotes at most 40 characters of what it was given, on both doors.
        assert f"memory {str(memory_id)[:40]} does not exist" in tool_text(result)


async def test_a_numeric_string_id_is_read_as_that_id(server: MCPServer, memory_service: MemoryService) -> None:
    (memory,) = seed(memory_service, "The user prefers trains")

    result = await call_tool(server, "get_memory", {"id": str(memory.id)})

    assert result.structured_content is not None
    assert result.structured_content["id"] == memory.id


def test_every_domain_error_has_a_tool_error_entry() -> None:
    assert set(TOOL_ERROR_HINTS) == set(domain_error_classes())


class FailingService(MemoryService):
    """A service whose every use case raises one given error."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def create(self, *args: Any, **kwargs: Any) -> Any:
        raise self.error

    get = update = delete = search = create


EXAMPLES: dict[type[DomainError], DomainError] = {
    InvalidInputError: InvalidInputError([FieldError("content", "must be a string")]),
    MemoryNotFoundError: MemoryNotFoundError(7),
    VersionMismatchError: VersionMismatchError(7, 3),
    WriteConflictError: WriteConflictError("memory 7 kept changing under this update; retry it"),
    StorageUnavailableError: StorageUnavailableError("storage is briefly unavailable", retry_after_seconds=2),
    TableMissingError: TableMissingError("agent-memory", retry_after_seconds=2),
    WriteOutcomeUnknownError: WriteOutcomeUnknownError("no answer in time", retry_after_seconds=2),
    AuthenticationError: AuthenticationError("the API key has been revoked"),
    PermissionDeniedError: PermissionDeniedError("write"),
    KeyNotFoundError: KeyNotFoundError("0123456789ab"),
    NamespaceFullError: NamespaceFullError(),
    VersionExhaustedError: VersionExhaustedError(7),
}

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("prime_memory_context", {}),
    ("search_memories", {}),
    ("create_memory", {"content": "The user likes tea"}),
    ("get_memory", {"id": 7}),
    ("update_memory", {"id": 7, "content": "The user likes tea"}),
    ("delete_memory", {"id": 7}),
]


def test_every_domain_error_has_an_example_here() -> None:
    assert set(EXAMPLES) == set(domain_error_classes())


@pytest.mark.parametrize("error_class", domain_error_classes(), ids=lambda cls: cls.__name__)
@pytest.mark.parametrize(("tool", "arguments"), CALLS, ids=[name for name, _ in CALLS])
async def test_every_tool_reports_every_domain_error_to_the_model_in_the_cores_words(
    error_class: type[DomainError], tool: str, arguments: dict[str, Any]
) -> None:
    error = EXAMPLES[error_class]
    server = create_server(FailingService(error), open_access(), version="test")

    result = await call_tool(server, tool, arguments)

    assert result.is_error
    text = tool_text(result)
    assert text.startswith(str(error))
    assert "Error executing tool" not in text
    if error_class in (StorageUnavailableError, TableMissingError):
        assert text.endswith("retry in 2 s")


async def test_an_unexpected_failure_reaches_the_model_without_its_details(server: MCPServer) -> None:
    crashing = create_server(FailingService(RuntimeError("secret table name")), open_access(), version="test")

    result = await call_tool(crashing, "search_memories", {})

    assert result.is_error
    assert "secret" not in tool_text(result)


async def test_two_servers_in_one_process_each_serve_their_own_service(
    server: MCPServer, memory_service: MemoryService
) -> None:
    other_service = MemoryService(InMemoryMemoryRepository())
    other = create_server(other_service, open_access(), version="test")

    await call_tool(other, "create_memory", {"content": "The user prefers trains"})
    found = await call_tool(server, "search_memories", {})

    assert found.structured_content is not None
    assert found.structured_content["total"] == 0
    assert [memory.content for memory in other_service.search("default", RetrievalQuery.parse({})).items] == [
        "The user prefers trains"
    ]


async def test_a_tool_served_by_a_server_create_server_did_not_build_fails_loudly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bare = MCPServer("bare", tools=[ServedTool.from_function(search_memories)])

    result = await call_tool(bare, "search_memories", {})

    assert result.is_error
    assert "handlers.mcp.create_server" in caplog.text


@pytest.mark.parametrize("tool", ["create_memory", "update_memory"])
async def test_a_misspelt_argument_is_refused_rather_than_silently_dropped(
    server: MCPServer, memory_service: MemoryService, tool: str
) -> None:
    (memory,) = seed(memory_service, "The user prefers trains")

    result = await call_tool(server, tool, {"id": memory.id, "content": "The user prefers planes", "tag": "travel"})

    assert result.is_error
    assert tool_text(result).endswith("tag: is not a field of this request")
    assert memory_service.get("default", memory.id).version == 1


async def test_an_argument_named_like_the_sdk_context_is_just_another_unknown_field(server: MCPServer) -> None:
    result = await call_tool(server, "create_memory", {"content": "The user prefers trains", "ctx": {}})

    assert tool_text(result).endswith("ctx: is not a field of this request")


async def test_create_with_an_idempotency_key_is_safe_to_retry(server: MCPServer) -> None:
    async with Client(server) as client:
        arguments = {"content": "Prefers tea", "idempotency_key": "call-7"}
        first = await client.call_tool("create_memory", arguments)
        again = await client.call_tool("create_memory", arguments)
        other = await client.call_tool("create_memory", {**arguments, "content": "Prefers coffee"})
        listed = await client.call_tool("search_memories", {})

    assert first.structured_content is not None
    assert again.structured_content == first.structured_content
    assert other.is_error
    assert "idempotency_key: was already used within 24 hours" in tool_text(other)
    assert listed.structured_content is not None
    assert listed.structured_content["total"] == 1
