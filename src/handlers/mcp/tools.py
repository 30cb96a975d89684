"""The MCP tools: the contract's seven operations for a model to call, as module-level functions, with their titles,
annotations, argument schemas and descriptions. Each reaches the door's collaborators and its caller through the
SDK's per-request context (handlers.mcp.dependencies) and translates domain errors once (handlers.mcp.results)."""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Annotated, Final

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, ToolAnnotations

from core.access import sees_records
from core.contract import Page, RetrievalQuery, SortKey
from core.digest import Digest
from core.limits import DEFAULT_LIMIT, PRIME_LIMIT
from core.model import IdempotentCreate, Memory, MemoryChanges, NewMemory, Status, parse_expected_version
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
    SupersedesArg,
    TagArg,
    TagsChangeArg,
    published,
    refuse_undeclared,
    required_id,
    sent_arguments,
    undeclared_arguments,
)
from handlers.mcp.dependencies import caller
from handlers.mcp.recall import recall_memories
from handlers.mcp.related import related_memories, written
from handlers.mcp.results import (
    DeletedMemory,
    UpdatedMemory,
    domain_errors_as_tool_errors,
    structured,
)
from handlers.mcp.supersede import supersede_memories
from handlers.metrics import rows_served

__all__ = ["published_tools"]


PRIME_STATUS: Final[Status] = "active"
PRIME_SORT: Final[SortKey] = "updated_at"


async def _search(ctx: Context | None, arguments: dict[str, object]) -> Page:
    principal, door = caller(ctx, "read")
    page = await door.run_blocking(
        partial(door.memories.search, key_id=principal.key_id), principal.namespace, RetrievalQuery.parse(arguments)
    )
    rows_served(len(page.items), stamped=True)  # the tools always stamp
    return page


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
    refuse_undeclared(ctx, prime_memory_context)
    return await _search(
        ctx,
        sent_arguments(status=status, memory_type=memory_type, tag=tag, q=q, sort=sort, limit=limit, offset=offset),
    )


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
    refuse_undeclared(ctx, search_memories)
    return await _search(
        ctx,
        sent_arguments(status=status, memory_type=memory_type, tag=tag, q=q, sort=sort, limit=limit, offset=offset),
    )


@domain_errors_as_tool_errors
async def create_memory(
    content: NewContentArg = ABSENT,
    tags: NewTagsArg = ABSENT,
    memory_type: NewMemoryTypeArg = "fact",
    status: NewStatusArg = "active",
    supersedes: SupersedesArg = ABSENT,
    idempotency_key: IdempotencyKeyArg = ABSENT,
    ctx: Context | None = None,
) -> Annotated[CallToolResult, Memory]:
    """Store one new memory and return it with its id and version 1.

    One atomic fact per memory: split "The user is vegetarian and lives in Lyon" into two. Search first; if a
    memory already says this, do not store it again. When a fact changed (a new job, a move, a new diet), create the
    new memory with supersedes=[the old memory's id]: the old one becomes invalid in the same write, its history
    naming the new one, and recall stops returning it. To merge memories, create the merged one superseding them
    all. Each call creates a new memory, even with the same content, unless it repeats an earlier call's
    idempotency_key.

    The answer may add a second text block naming up to 3 active memories closest in meaning to the new one (id,
    similarity, excerpt). Read them: one that states this fact as it used to be (a changed job, city, diet) is
    outdated, so supersede it with supersede_memories(id=<new id>, ids=[its id]) (or next time pass supersedes here);
    when it also says something still true, merge instead: create_memory with the merged text and supersedes=[its id,
    <new id>]; when the new memory only repeats one, drop the repeat with delete_memory(id=<new id>); leave the ones
    that state another fact.

    Always send an idempotency_key (a new UUID for each new memory). When a call fails saying storage failed after
    the write was sent, the memory may have been stored: call again with the same idempotency_key and the same
    arguments, which returns it if it was stored and stores it once if not. Without a key, such a retry can store
    it twice.
    """
    principal, door = caller(ctx, "write")
    sent = sent_arguments(content=content, tags=tags, memory_type=memory_type, status=status, supersedes=supersedes)
    new = NewMemory.parse({**sent, **undeclared_arguments(ctx, create_memory)})
    idempotent = None if idempotency_key is None else IdempotentCreate.of(idempotency_key, new, "idempotency_key")
    digests: list[Digest] = []  # the write's own digest, whose vector finds its related memories without a model call
    memory = await door.run_blocking(
        partial(door.memories.create, indexed=digests.append), principal.namespace, new, idempotent, principal.key_id
    )
    return await written(door, principal, memory, digests, new.supersedes or ())


@domain_errors_as_tool_errors
async def get_memory(id: IdArg = ABSENT, ctx: Context | None = None) -> Memory:
    """Read one memory by id, with its current version (pass that to update_memory as expected_version).

    A deleted or unknown id is an error. Reading stamps last_accessed_at and changes nothing else, so it is
    read-only from your side.
    """
    refuse_undeclared(ctx, get_memory)
    principal, door = caller(ctx, "read")
    memory = await door.run_blocking(
        partial(door.memories.get, key_id=principal.key_id), principal.namespace, required_id(id)
    )
    rows_served(1, stamped=True)
    return memory


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
    deleting it. Every earlier version stays in the memory's history. When a fact changed (a new job, a move),
    prefer create_memory with supersedes over rewriting the old memory: both stay, each saying when it was true.
    After a change of content the answer may add a second text block naming related memories, as create_memory's.
    """
    principal, door = caller(ctx, "write")
    memory_id = required_id(id)
    sent = sent_arguments(content=content, tags=tags, memory_type=memory_type, status=status)
    changes = MemoryChanges.parse({**sent, **undeclared_arguments(ctx, update_memory)})
    digests: list[Digest] = []  # one when its text changed: the vector its related memories are found with
    memory = await door.run_blocking(
        partial(door.memories.update, indexed=digests.append),
        principal.namespace,
        memory_id,
        changes,
        parse_expected_version(expected_version, "expected_version"),
        principal.key_id,
    )
    if not sees_records(principal):
        return structured({"id": memory.id, "version": memory.version})
    # Only new content can make it a version or a repeat of another memory: new tags alone cannot.
    return await written(door, principal, memory, digests if "content" in changes.model_fields_set else ())


@domain_errors_as_tool_errors
async def delete_memory(id: IdArg = ABSENT, ctx: Context | None = None) -> DeletedMemory:
    """Delete a memory the user asked you to forget: it disappears from reads and searches.

    For a memory that is merely wrong or outdated, use update_memory with status invalid instead, which keeps
    the record. Deleting an unknown or already deleted id is an error and changes nothing.
    """
    refuse_undeclared(ctx, delete_memory)
    principal, door = caller(ctx, "write")
    memory_id = required_id(id)
    await door.run_blocking(door.memories.delete, principal.namespace, memory_id, principal.key_id)
    return DeletedMemory(id=memory_id)


def _hints(*, read_only: bool, destructive: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=read_only, destructive_hint=destructive, idempotent_hint=idempotent, open_world_hint=False
    )


_READ: Final = _hints(read_only=True, destructive=False, idempotent=True)
_ADD: Final = _hints(read_only=False, destructive=False, idempotent=False)
_CHANGE: Final = _hints(read_only=False, destructive=True, idempotent=True)
_SUPERSEDE: Final = _hints(read_only=False, destructive=True, idempotent=False)


@dataclass(frozen=True)
class _Published:
    """A tool as it is published: its function (name, description, arguments and result from it), title and
    annotations (the endpoint reads `read_only_hint` as the scope a call needs)."""

    function: Callable[..., Awaitable[object]]
    title: str
    annotations: ToolAnnotations


# The tools in the order tools/list gives them.
_TOOLS: Final = (
    _Published(prime_memory_context, "Prime memory context", _READ),
    _Published(search_memories, "Search memories", _READ),
    _Published(recall_memories, "Recall memories", _READ),
    _Published(related_memories, "Related memories", _READ),
    _Published(create_memory, "Create a memory", _ADD),
    _Published(get_memory, "Read a memory", _READ),
    _Published(update_memory, "Update a memory", _CHANGE),
    _Published(delete_memory, "Delete a memory", _CHANGE),
    _Published(supersede_memories, "Supersede memories", _SUPERSEDE),
)


def published_tools() -> list[Tool]:
    """The tools, as the SDK publishes and calls them."""
    return [
        published(Tool.from_function(tool.function, title=tool.title, annotations=tool.annotations)) for tool in _TOOLS
    ]
