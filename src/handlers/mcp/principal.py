"""How the MCP endpoint's guard hands the principal it verified to the tools: in the ASGI scope of the request, which
the SDK passes to each tool call as its request."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from mcp.server.mcpserver import Context

from core.access import Principal

# Where the endpoint's guard leaves the principal it verified, in the ASGI scope the SDK hands tools as the request.
PRINCIPAL_SCOPE_KEY: Final = "agent_memory.principal"


def _request_of(ctx: Context | None) -> object | None:
    """The HTTP request a tool call arrived in; None for an in-process client (or a call outside any request)."""
    if ctx is None:
        return None
    try:
        return ctx.request_context.request
    except ValueError:  # the SDK's way of saying "no request context"
        return None


def verified_principal(ctx: Context | None) -> Principal | None:
    """The principal the endpoint's guard verified for this request; None when no guard saw it."""
    scope = getattr(_request_of(ctx), "scope", None)
    principal = scope.get(PRINCIPAL_SCOPE_KEY) if isinstance(scope, Mapping) else None
    return principal if isinstance(principal, Principal) else None
