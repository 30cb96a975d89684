"""What the MCP tools return: results as the SDK builds them, and the one translation of domain errors into tool
errors."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, Literal, ParamSpec, Required, TypedDict, TypeVar

import pydantic_core
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

from core.errors import (
    AuthenticationError,
    DomainError,
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
from core.grant_terms import SIGN_IN_AGAIN
from core.model import Memory
from handlers.mcp.principal import verified_principal
from handlers.problem import log_operator_error

# The one table from domain errors to tool errors: what to add to the core's own words, if anything.
# The core's message always comes first and unchanged, so an invalid input reads exactly as the HTTP 422 detail.
TOOL_ERROR_HINTS: Final[dict[type[DomainError], str | None]] = {
    InvalidInputError: None,
    MemoryNotFoundError: "find the right id with search_memories",
    VersionMismatchError: None,
    WriteConflictError: "retry in {retry_after_seconds} s",
    StorageUnavailableError: "retry in {retry_after_seconds} s",
    WriteOutcomeUnknownError: "wait {retry_after_seconds} s before retrying",
    TableMissingError: "retry in {retry_after_seconds} s",
    AuthenticationError: "the MCP client must send a valid agent-memory API key as `Authorization: Bearer <key>`",
    PermissionDeniedError: "ask the user for an API key with the {scope} scope",
    KeyNotFoundError: None,
    NamespaceFullError: "do not retry; tell the user",
    VersionExhaustedError: "store the change with create_memory instead",
}
# What a caller holding an OAuth access token is told instead: it has no key to send, its person signs in again (a
# token's PermissionDeniedError says so itself, as the 403 at /mcp does).
TOKEN_HINTS: Final[dict[type[DomainError], str | None]] = {
    AuthenticationError: SIGN_IN_AGAIN,
    PermissionDeniedError: None,
}


def tool_error(exc: DomainError, *, by_token: bool = False) -> CallToolResult:
    """The tool error a model reads for a domain error: exactly the core's words (and a hint), as the HTTP detail;
    `by_token` when the caller holds an OAuth access token rather than an API key.

    Returned rather than raised: the SDK would put "Error executing tool <name>: " before a raised ToolError's text.
    """
    log_operator_error(exc)
    by_token = by_token or getattr(exc, "by_token", False)
    hint = TOKEN_HINTS[type(exc)] if by_token and type(exc) in TOKEN_HINTS else TOOL_ERROR_HINTS[type(exc)]
    text = str(exc) if hint is None else f"{exc}; {hint.format_map(vars(exc))}"
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


P = ParamSpec("P")
R = TypeVar("R")


def domain_errors_as_tool_errors(tool: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R | CallToolResult]]:
    """Every tool's one translation of domain errors; anything else stays a crash the SDK logs."""

    @functools.wraps(tool)
    async def call(*args: P.args, **kwargs: P.kwargs) -> R | CallToolResult:
        try:
            return await tool(*args, **kwargs)
        except DomainError as exc:
            principal = verified_principal(ctx if isinstance(ctx := kwargs.get("ctx"), Context) else None)
            return tool_error(exc, by_token=principal is not None and principal.by_token)

    # The SDK publishes __doc__ as the tool's description; Python before 3.13 keeps the source indentation in it.
    call.__doc__ = inspect.cleandoc(tool.__doc__ or "")
    return call


class DeletedMemory(BaseModel):
    """What delete_memory reports: the memory is now soft-deleted."""

    id: int
    status: Literal["deleted"] = "deleted"


# What update_memory reports: the memory as stored, or only its id and version for a key without the read scope
# (such a key never receives a record it did not just send). The record's fields, derived from Memory.
_ALWAYS_REPORTED: Final = ("id", "version")
UpdatedMemory = TypedDict(  # type: ignore[misc]  # built from Memory's fields, so it cannot drift from the record
    "UpdatedMemory",
    {
        name: Required[field.annotation] if name in _ALWAYS_REPORTED else field.annotation
        for name, field in Memory.model_fields.items()
    },
    total=False,
)


def structured(data: Mapping[str, Any]) -> CallToolResult:
    """A result as the SDK builds one from a returned model: the data, and the same data as indented JSON text."""
    text = pydantic_core.to_json(data, indent=2).decode()
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=dict(data))


class SupersededMemories(TypedDict):
    """What supersede_memories reports: the superseded memories as stored, or only their ids and versions for a key
    without the read scope."""

    items: list[UpdatedMemory]
