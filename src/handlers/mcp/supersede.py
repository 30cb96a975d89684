"""Superseding at the MCP door: the tool supersede_memories, for a memory that replaces others after the fact
(CONTRACT.md, Keeping memories true). Published beside the other tools by handlers.mcp.tools; at creation,
create_memory's `supersedes` does the same in the create's own write."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult

from core.access import sees_records
from core.memories import SupersedeRequest
from handlers.mcp.arguments import ABSENT, IdArg, SupersededIdsArg, refuse_undeclared, required_id
from handlers.mcp.dependencies import caller
from handlers.mcp.results import SupersededMemories, domain_errors_as_tool_errors, structured


@domain_errors_as_tool_errors
async def supersede_memories(
    id: IdArg = ABSENT, ids: SupersededIdsArg = ABSENT, ctx: Context | None = None
) -> Annotated[CallToolResult, SupersededMemories]:
    """Mark memories as replaced by memory id, which must be active: use it when you find, after writing, that older
    memories say what memory id now says differently (the fact changed), or repeat it.

    In one write, each memory in ids becomes invalid (its version +1), its history naming memory id, and recall
    stops returning it by default; nothing else changes, and nothing is deleted. A missing, deleted or repeated id,
    or id itself, is an error naming the entry, and nothing is written. When you are creating the new memory anyway,
    pass supersedes to create_memory instead. Returns {items}: the superseded memories as they are now (only their
    id and version for a key that may not read memories).
    """
    refuse_undeclared(ctx, supersede_memories)
    principal, door = caller(ctx, "write")
    memory_id = required_id(id)
    body = SupersedeRequest.parse({"ids": ids} if ids is not None else {})
    superseded = await door.run_blocking(
        door.memories.supersede, principal.namespace, memory_id, body.ids, principal.key_id
    )
    if not sees_records(principal):  # a write-only key learns what it changed, never what the records say
        return structured({"items": [{"id": m.id, "version": m.version} for m in superseded.items]})
    return structured(superseded.model_dump())
