"""The MCP server: the contract's tools (handlers.mcp.tools) over the door's collaborators, serving tools only, with
the instructions a model reads on connecting."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from mcp.server import MCPServer

from core.memories import MemoryService
from core.model import STANDARD_TAGS
from handlers.auth import Authenticator
from handlers.concurrency import RunBlocking, inline
from handlers.door import Door
from handlers.mcp.dependencies import lifespan_of
from handlers.mcp.tools import published_tools

if TYPE_CHECKING:
    from core.recall.service import RecallService

__all__ = ["INSTRUCTIONS", "create_server"]

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
- Before creating, look for a memory that already says it (recall_memories with the fact as its query finds it \
in other words), and update that one instead of adding a duplicate.
- When a fact changed (a new job, a move, a new diet), create the new memory with supersedes=[the old memory's id]: \
the old one becomes invalid in the same write. create_memory's answer names related memories it may replace or \
repeat: supersede an outdated one (supersede_memories), drop a repeat. When a memory was simply wrong, call \
update_memory with status "invalid"; delete only what the user asks you to forget.
- Pass expected_version (the version you last read) to update_memory so you never overwrite a change you have not \
seen; when it is refused, read the memory again and decide afresh.
- Send an idempotency_key (a new UUID for each new memory) with every create_memory. When a write fails saying \
storage failed after it was sent, it may have happened: retry it as the error says (a create with the same \
idempotency_key), never as a new call.
- To answer a question about the user ("what does the user eat?"), call recall_memories with the question in \
natural language: it ranks the memories by how well they answer it, meaning included. Its scores compare only \
within one answer; it leaves out invalid memories unless asked for status "invalid".
- search_memories is lexical, not semantic: q matches substrings of content and tags, so search for a distinctive \
word (or list by filters and order), and page with offset while has_more is true.
"""


def create_server(
    memories: MemoryService,
    authenticate: Authenticator,
    *,
    version: str,
    run_blocking: RunBlocking = inline,
    recall: RecallService | None = None,
) -> MCPServer[Door]:
    """The MCP server with the contract's tools over `memories` and `recall` (without it, recall_memories fails: a
    server wired for tests of other tools).

    Each tool acts as the principal the endpoint's guard verified, or as `authenticate(None)` for a call the guard
    did not see (handlers.mcp.dependencies.caller). Every storage call goes through `run_blocking`, the
    entrypoint's concurrency policy (handlers.concurrency).
    """
    # No subscriptions/listen: its stream never ends, and nothing here changes behind a client's back.
    server: MCPServer[Door] = MCPServer(
        "agent-memory",
        instructions=INSTRUCTIONS,
        version=version,
        subscriptions=False,
        log_level="WARNING",
        tools=published_tools(),
        lifespan=lifespan_of(Door(memories, authenticate, run_blocking, recall)),
    )
    _serve_tools_only(server)
    return server


# The SDK registers prompt and resource handlers on every MCPServer, and advertises a capability for each one
# registered. This server has neither: unregistered, they are not advertised, and calling one is -32601.
_UNSERVED_METHODS: Final = (
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
)


def _serve_tools_only(server: MCPServer[Door]) -> None:
    """Unregister the prompt and resource handlers, the one place that reaches into the SDK's private state.

    The SDK has no public way to do it: MCPServer's constructor always registers them, and neither it nor the
    low-level server it wraps (reached only as `_lowlevel_server`) can remove a request handler, only add or replace
    one, and the capabilities follow what is registered. Middleware could refuse the calls, but the capabilities
    would still advertise prompts and resources. core.reaches lists the SDK version it was checked against.
    """
    handlers = server._lowlevel_server._request_handlers
    for method in _UNSERVED_METHODS:
        handlers.pop(method, None)
