"""Recall at the MCP door: the tool recall_memories, the memories that best answer a question in natural language,
ranked (CONTRACT.md, Recall). Published beside the other tools by handlers.mcp.tools."""

from __future__ import annotations

from functools import partial

from mcp.server.mcpserver import Context

from core.limits import DEFAULT_LIMIT
from core.recall.answer import RecallPage
from core.recall.query import RecallQuery
from handlers.mcp.arguments import (
    ABSENT,
    AsOfArg,
    RecallLimitArg,
    RecallMemoryTypeArg,
    RecallOffsetArg,
    RecallQueryArg,
    RecallStatusArg,
    RecallTagArg,
    refuse_undeclared,
    sent_arguments,
)
from handlers.mcp.dependencies import caller
from handlers.mcp.results import domain_errors_as_tool_errors
from handlers.metrics import rows_served


@domain_errors_as_tool_errors
async def recall_memories(
    query: RecallQueryArg = ABSENT,
    status: RecallStatusArg = ABSENT,
    memory_type: RecallMemoryTypeArg = ABSENT,
    tag: RecallTagArg = ABSENT,
    limit: RecallLimitArg = DEFAULT_LIMIT,
    offset: RecallOffsetArg = 0,
    as_of: AsOfArg = ABSENT,
    ctx: Context | None = None,
) -> RecallPage:
    """Find the memories that best answer a question, ranked by how well they answer it.

    Use this when you want to know something and do not know the words it was stored in: query is natural
    language, a question or a few words ("what does the user eat?", "where does the user work"), and a memory
    saying "The user is vegetarian" can answer it without sharing a word. Use search_memories instead to list
    memories by exact filters, by a distinctive word, or in a fixed order (e.g. newest first).

    Returns {items, total, limit, offset, has_more, as_of, ranking}; each item is {memory, score, parts}. score is
    the weighted sum of parts, each in [0, 1]: lexical (shared words), semantic (shared meaning), recency (how
    recently the memory changed), use (how recently it was read), type (a prior per memory_type), newer (above 0
    when the memory restates an older match, a version of the same fact, and was lifted to rank above it: prefer it,
    and consider superseding the older one); ranking.weights gives the weights and ranking.model the embedding
    model. Scores compare only within one answer of one model: never use a score as a threshold across calls.
    Order: score, then id, both descending. When ranking.semantic is false the question could not be embedded and
    meaning was left out of this answer.

    Filters as search_memories, but status defaults to active: invalid memories (wrong, outdated or superseded)
    only with status=invalid, deleted ones only with status=deleted. Page with offset while has_more is true (limit
    up to 50). Pass the as_of of an earlier answer to rank at that moment again. Reading marks the returned memories as
    accessed (last_accessed_at) and changes nothing else, so it is read-only from your side; but their use part is
    then higher than the earlier answer showed.
    """
    refuse_undeclared(ctx, recall_memories)
    principal, door = caller(ctx, "read")
    arguments = sent_arguments(
        query=query, status=status, memory_type=memory_type, tag=tag, limit=limit, offset=offset, as_of=as_of
    )
    page = await door.run_blocking(
        partial(door.recall.recall, key_id=principal.key_id), principal.namespace, RecallQuery.parse(arguments)
    )
    rows_served(len(page.items), stamped=True)  # the tool always stamps
    return page
