"""What a tool reaches through the SDK's per-request context: the door's collaborators, which create_server hands the
SDK as the server's lifespan context (one per server, no module state), and the caller it acts as."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from mcp.server import MCPServer
from mcp.server.mcpserver import Context

from core.access import Principal, Scope, require
from handlers.door import Door
from handlers.mcp.principal import verified_principal

Lifespan = Callable[[MCPServer["Door"]], AbstractAsyncContextManager["Door"]]


def lifespan_of(collaborators: Door) -> Lifespan:
    """The server's lifespan: it hands `collaborators` to every request the server serves, whichever transport (the
    HTTP endpoint's session manager, an in-process client) runs it."""

    @asynccontextmanager
    async def lifespan(_: MCPServer[Door]) -> AsyncIterator[Door]:
        yield collaborators

    return lifespan


def collaborators_of(ctx: Context | None) -> Door:
    """The collaborators of the server serving this tool call."""
    wired: object = ctx.request_context.lifespan_context if ctx is not None else None  # ValueError outside a request
    if not isinstance(wired, Door):
        raise TypeError("the agent-memory tools run only on the server handlers.mcp.create_server builds")
    return wired


def caller(ctx: Context | None, scope: Scope) -> tuple[Principal, Door]:
    """Who this tool call acts as, once allowed `scope`, and the collaborators it acts through.

    One principal path: the principal the endpoint's guard verified (handlers.mcp.endpoint, the only reader of
    credentials on the network). A call the guard did not see (an in-process client, or the SDK's app served
    without the guard) presents no credentials: it acts as whatever `authenticate` grants a caller without a key,
    which for API keys is nothing (a 401 tool error) and for open access the open namespace.
    """
    collaborators = collaborators_of(ctx)
    principal = verified_principal(ctx) or collaborators.authenticate(None)
    require(principal, scope)
    return principal, collaborators
