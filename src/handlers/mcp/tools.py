"""The MCP tools: the contract's six operations for a model to call, their argument schemas and
descriptions, and one translation of domain errors into tool errors."""

from collections.abc import Callable
from typing import Annotated, Final, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, ToolAnnotations

from core.access import Principal, Scope, require, sees_records
from core.contract import Page, RetrievalQuery, SortKey
from core.limits import DEFAULT_LIMIT
from core.memories import MemoryService
from core.model import (
    STANDARD_TAGS,
    IdempotentCreate,
    Memory,
    MemoryChanges,
    NewMemory,
    Status,
    parse_expected_version,
)
from handlers.auth import Authenticator
from handlers.concurrency import RunBlocking, inline
from handlers.mcp.arguments import (
    ABSENT,
    ContentChangeArg,
    ExpectedVersionArg,
    IdArg,
    IdempotencyKeyArg,
    LimitArg,
    MemoryTypeArg,
    MemoryTypeChangeArg,
    NewContentArg,
    NewMemoryTypeArg,
    NewStatusArg,
    NewTagsArg,
    OffsetArg,
    QueryArg,
    SortArg,
    StatusArg,
    StatusChangeArg,
    TagArg,
    TagsChangeArg,
    published,
    required_id,
    sent_arguments,
    undeclared_arguments,
)
from handlers.mcp.principal import verified_principal
from handlers.mcp.results import (
    TOOL_ERROR_HINTS,
    DeletedMemory,
    UpdatedMemory,
    domain_errors_as_tool_errors,
    structured,
)
from handlers.metrics import rows_served

__all__ = ["INSTRUCTIONS", "TOOL_ERROR_HINTS", "create_server"]


PRIME_STATUS: Final[Status] = "active"
PRIME_SORT: Final[SortKey] = "updated_at"
PRIME_LIMIT: Final = 20

INSTRUCTIONS: Final = f"""\
agent-memory keeps what you learn about the user across sessions. Use it like this:
- At the start of every session call prime_memory_context (no arguments needed) and read what it returns before \
you answer.
- Store one atomic fact per memory with create_memory, in normalised, self-contained language: third person, \
present tense, absolute dates ("The user prefers metric units", "The user's daughter Ana was born on 2019-03-02"), \
never "likes metric" or "her kid's birthday is next week".
- Choose memory_type: identity (who the user is: name, role, relationships, home), preference (likes, dislikes, \
how the user wants things done), event (something that happened or will happen at a known time), fact (anything \
else that is true).
- Reuse the standard tags where they fit: {", ".join(STANDARD_TAGS)}. Add a freeform tag (lower-case, e.g. \
project:apollo) only for what they do not cover.
- Before creating, search_memories for a memory that already says it, and update that one instead of adding a \
duplicate.
- When a memory turns out wrong or outdated, call update_memory with status "invalid" (and create the corrected \
memory) rather than delete_memory; delete only what the user asks you to forget.
- Pass expected_version (the version you last read) to update_memory so you never overwrite a change you have not \
seen; when it is refused, read the memory again and decide afresh.
- Search is lexical, not semantic: q matches substrings of content and tags, so search for a distinctive word, and \
page with offset while has_more is true.
"""

ToolFunction = TypeVar("ToolFunction", bound=Callable[..., object])

_READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


# The SDK registers prompt and resource handlers on every MCPServer, and advertises a capability for each one
# registered. This server has neither: unregistered, they are not advertised, and calling one is -32601.
_UNSERVED_METHODS: Final = (
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
)


def _serve_tools_only(server: MCPServer) -> None:
    handlers = server._lowlevel_server._request_handlers  # the SDK has no public way to drop them
    for method in _UNSERVED_METHODS:
        handlers.pop(method, None)


def create_server(
    provide_service: Callable[[], MemoryService],
    authenticate: Authenticator,
    version: str,
    run_blocking: RunBlocking = inline,
) -> MCPServer:
    """The MCP server with the contract's tools over the service `provide_service` gives.

    One principal path: each tool acts as the principal the endpoint's guard verified (handlers.mcp.endpoint, the only
    reader of credentials on the network). A call the guard did not see (an in-process client, or the SDK's app
    served without the guard) presents no credentials: it acts as whatever `authenticate` grants a caller without
    a key, which for API keys is nothing (a 401 tool error) and for open access the open namespace. Every storage
    call goes through `run_blocking`, the entrypoint's concurrency policy (handlers.concurrency).
    """
    tools: list[Tool] = []

    def tool(title: str, annotations: ToolAnnotations) -> Callable[[ToolFunction], ToolFunction]:
        def register(function: ToolFunction) -> ToolFunction:
            tools.append(published(Tool.from_function(function, title=title, annotations=annotations)))
            return function

        return register

    def caller(ctx: Context | None, scope: Scope) -> Principal:
        principal = verified_principal(ctx) or authenticate(None)
        require(principal, scope)
        return principal

    async def search(ctx: Context | None, arguments: dict[str, object]) -> Page:
        namespace = caller(ctx, "read").namespace
        page = await run_blocking(provide_service().search, namespace, RetrievalQuery.parse(arguments))
        rows_served(len(page.items))
        return page

    @tool(title="Prime memory context", annotations=_READ)
    @domain_errors_as_tool_errors
    async def prime_memory_context(
        status: StatusArg = PRIME_STATUS,
        memory_type: MemoryTypeArg = ABSENT,
        tag: TagArg = ABSENT,
        q: QueryArg = ABSENT,
        sort: SortArg = PRIME_SORT,
        limit: LimitArg = PRIME_LIMIT,
        offset: OffsetArg = 0,
        ctx: Context | None = None,
    ) -> Page:
        """Call this first in every session: what you already know about the user, as a small, ordered pack.

        Without arguments it returns the 20 most recently changed active memories. Defaults: status=active,
        sort=updated_at (newest first), limit=20, offset=0, no memory_type, tag or q filter. Why: active memories
        are the ones believed true; the most recently changed are the likeliest to matter now; 20 keeps the pack
        bounded; and the order is total, so the same data always gives the same pack. It sorts by updated_at, not
        last_accessed_at, because every read (this one included) stamps last_accessed_at, so that order would
        replay whatever the previous prime returned; only a real change moves updated_at.

        Narrow it with memory_type, tag or q (e.g. tag=project:apollo when the session is about that project),
        pass status=null to include invalid memories, or page on with offset while has_more is true. Every field
        means what it means in search_memories. Returns the envelope {items, total, limit, offset, has_more}.
        Reading marks the returned memories as accessed (last_accessed_at) and changes nothing else, so it is
        read-only from your side.
        """
        return await search(
            ctx,
            sent_arguments(status=status, memory_type=memory_type, tag=tag, q=q, sort=sort, limit=limit, offset=offset),
        )

    @tool(title="Search memories", annotations=_READ)
    @domain_errors_as_tool_errors
    async def search_memories(
        status: StatusArg = ABSENT,
        memory_type: MemoryTypeArg = ABSENT,
        tag: TagArg = ABSENT,
        q: QueryArg = ABSENT,
        sort: SortArg = "id",
        limit: LimitArg = DEFAULT_LIMIT,
        offset: OffsetArg = 0,
        ctx: Context | None = None,
    ) -> Page:
        """Find memories by exact filters and a text substring, in a fixed order, one page at a time.

        Filters combine with AND; an empty q or tag is the same as leaving it out; deleted memories are left out
        unless status=deleted. Returns the envelope {items, total, limit, offset, has_more}: total counts every
        match before paging, and the order is total, so pages never overlap or skip while the data stays the same.
        Search before creating a memory, to update an existing one instead of duplicating it. Reading marks the
        returned memories as accessed (last_accessed_at) and changes nothing else, so it is read-only from your
        side.
        """
        return await search(
            ctx,
            sent_arguments(status=status, memory_type=memory_type, tag=tag, q=q, sort=sort, limit=limit, offset=offset),
        )

    @tool(
        title="Create a memory",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
        ),
    )
    @domain_errors_as_tool_errors
    async def create_memory(
        content: NewContentArg = ABSENT,
        tags: NewTagsArg = ABSENT,
        memory_type: NewMemoryTypeArg = "fact",
        status: NewStatusArg = "active",
        idempotency_key: IdempotencyKeyArg = ABSENT,
        ctx: Context | None = None,
    ) -> Memory:
        """Store one new memory and return it with its id and version 1.

        One atomic fact per memory: split "The user is vegetarian and lives in Lyon" into two. Search first; if a
        memory already says this, update it instead. Each call creates a new memory, even with the same content,
        unless it repeats an earlier call's idempotency_key.
        """
        principal = caller(ctx, "write")
        sent = sent_arguments(content=content, tags=tags, memory_type=memory_type, status=status)
        new = NewMemory.parse({**sent, **undeclared_arguments(ctx, create_memory)})
        idempotent = None if idempotency_key is None else IdempotentCreate.of(idempotency_key, new, "idempotency_key")
        return await run_blocking(provide_service().create, principal.namespace, new, idempotent, principal.key_id)

    @tool(title="Read a memory", annotations=_READ)
    @domain_errors_as_tool_errors
    async def get_memory(id: IdArg = ABSENT, ctx: Context | None = None) -> Memory:
        """Read one memory by id, with its current version (pass that to update_memory as expected_version).

        A deleted or unknown id is an error. Reading stamps last_accessed_at and changes nothing else, so it is
        read-only from your side.
        """
        namespace = caller(ctx, "read").namespace
        memory = await run_blocking(provide_service().get, namespace, required_id(id))
        rows_served(1)
        return memory

    @tool(
        title="Update a memory",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
        ),
    )
    @domain_errors_as_tool_errors
    async def update_memory(
        id: IdArg = ABSENT,
        content: ContentChangeArg = ABSENT,
        tags: TagsChangeArg = ABSENT,
        memory_type: MemoryTypeChangeArg = ABSENT,
        status: StatusChangeArg = ABSENT,
        expected_version: ExpectedVersionArg = ABSENT,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, UpdatedMemory]:
        """Change some of a memory's content, tags, memory_type and status; fields left out stay as they are.

        Returns the memory as stored (with a key lacking the read scope, only its id and version). Its version goes
        up by one only when something actually changed; an update that changes nothing returns the memory
        untouched, so repeating a call is harmless. To retire a wrong memory, set status to invalid rather than
        deleting it. Every earlier version stays in the memory's history.
        """
        principal = caller(ctx, "write")
        memory_id = required_id(id)
        sent = sent_arguments(content=content, tags=tags, memory_type=memory_type, status=status)
        changes = MemoryChanges.parse({**sent, **undeclared_arguments(ctx, update_memory)})
        memory = await run_blocking(
            provide_service().update,
            principal.namespace,
            memory_id,
            changes,
            parse_expected_version(expected_version, "expected_version"),
            principal.key_id,
        )
        if not sees_records(principal):
            return structured({"id": memory.id, "version": memory.version})
        return structured(memory.model_dump(mode="json"))

    @tool(
        title="Delete a memory",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
        ),
    )
    @domain_errors_as_tool_errors
    async def delete_memory(id: IdArg = ABSENT, ctx: Context | None = None) -> DeletedMemory:
        """Delete a memory the user asked you to forget: it disappears from reads and searches.

        For a memory that is merely wrong or outdated, use update_memory with status invalid instead, which keeps
        the record. Deleting an unknown or already deleted id is an error and changes nothing.
        """
        principal = caller(ctx, "write")
        memory_id = required_id(id)
        await run_blocking(provide_service().delete, principal.namespace, memory_id, principal.key_id)
        return DeletedMemory(id=memory_id)

    # No subscriptions/listen: its stream never ends, and nothing here changes behind a client's back.
    server: MCPServer = MCPServer(
        "agent-memory",
        instructions=INSTRUCTIONS,
        version=version,
        subscriptions=False,
        log_level="WARNING",
        tools=tools,
    )
    _serve_tools_only(server)
    return server
