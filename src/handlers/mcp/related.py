"""Related memories at the MCP door (CONTRACT.md, Keeping memories true): the tool related_memories, and what
create_memory and update_memory add to their answer, a second text block naming the memories the write may replace or
repeat (the structured content stays the record). Published beside the other tools by handlers.mcp.tools."""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from functools import partial
from typing import Final

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent

from core.access import Principal, sees_records
from core.digest import Digest
from core.errors import DomainError
from core.limits import RELATED_DEFAULT_LIMIT
from core.model import Memory
from core.recall.related import RelatedItem, RelatedMemories, RelatedQuery
from handlers.door import Door
from handlers.mcp.arguments import ABSENT, IdArg, RelatedLimitArg, refuse_undeclared, required_id, sent_arguments
from handlers.mcp.dependencies import caller
from handlers.mcp.results import domain_errors_as_tool_errors, structured
from handlers.metrics import rows_served

# A related memory is named with this much of its content (whitespace collapsed): enough to tell a version of a fact
# from another fact, short enough that three of them cost the agent little to read.
EXCERPT_CHARS: Final = 160

logger = logging.getLogger(__name__)


@domain_errors_as_tool_errors
async def related_memories(
    id: IdArg = ABSENT, limit: RelatedLimitArg = RELATED_DEFAULT_LIMIT, ctx: Context | None = None
) -> RelatedMemories:
    """List the active memories closest in meaning to memory id, to find what it may replace or repeat.

    Returns {items, model, floor, waiting}; each item is {memory, similarity}, most similar first, only those more
    similar than floor (the embedding model's threshold for "likely about the same fact"). A related memory is not
    necessarily wrong: read it. When it is an older version of what memory id says (the fact changed), or says the
    same thing, call supersede_memories(id=id, ids=[its id]); two memories that belong together are merged by a
    create_memory of the merged text with supersedes naming both. waiting=true means memory id has no embedding yet
    (try again shortly); items is then empty. limit: 1 to 10 (default 3). Reading changes nothing, not even
    last_accessed_at.
    """
    refuse_undeclared(ctx, related_memories)
    principal, door = caller(ctx, "read")
    memory_id = required_id(id)
    query = RelatedQuery.parse(sent_arguments(limit=limit))
    related = await door.run_blocking(
        partial(door.recall.related.related, key_id=principal.key_id), principal.namespace, memory_id, query
    )
    rows_served(len(related.items), stamped=False)  # related memories stamp nothing
    return related


async def written(
    door: Door, principal: Principal, memory: Memory, digests: Sequence[Digest], left_out: Collection[int] = ()
) -> CallToolResult:
    """A write's answer: the record (structured, and as JSON text) and, when the digest the write computed finds
    related memories, a second text block naming them. `left_out`: ids the write itself made invalid (superseded).
    Whatever keeps the related memories from being found (no vector, no read scope, storage failing after the write)
    leaves the answer the record alone: the write happened."""
    result = structured(memory.model_dump(mode="json"))
    items = await _related(door, principal, memory, digests, left_out)
    if items:
        result.content.append(TextContent(type="text", text=related_note(memory.id, items, door.recall.related.floor)))
    return result


async def _related(
    door: Door, principal: Principal, memory: Memory, digests: Sequence[Digest], left_out: Collection[int]
) -> list[RelatedItem]:
    # A key without `read` never receives a record it did not just send: it learns nothing of the others.
    if not digests or digests[-1].vector is None or door.recall_service is None or not sees_records(principal):
        return []
    digest = digests[-1]
    try:
        return await door.run_blocking(
            partial(door.recall_service.related.near, key_id=principal.key_id),
            principal.namespace,
            digest.vector,
            digest.model,
            {memory.id, *left_out},
        )
    except DomainError as exc:
        logger.warning("memory %s written; its related memories were not read: %s", memory.id, exc)
        return []


def related_note(memory_id: int, items: Sequence[RelatedItem], floor: float) -> str:
    """The second text block of a write's answer: each related memory's id, similarity and an excerpt, and what to do
    about one that is an older version or a repeat."""
    lines = [f"Related memories (active, closest in meaning to memory {memory_id}; similarity above {floor:g}):"]
    for item in items:
        lines.append(f"- memory {item.memory.id} (similarity {item.similarity:.3f}): {_excerpt(item.memory)}")
    first = items[0].memory.id
    lines.append(
        f"If one states this fact as it used to be, or says the same thing, supersede it: supersede_memories("
        f"id={memory_id}, ids=[{first}]). If it also says something still true, merge the two: create_memory with "
        f"the merged text and supersedes=[{first}, {memory_id}]. If memory {memory_id} only repeats one, drop it "
        f"instead: delete_memory(id={memory_id}). Leave the ones that state another fact."
    )
    return "\n".join(lines)


def _excerpt(memory: Memory) -> str:
    text = " ".join(memory.content.split())
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1].rstrip() + "\u2026"
