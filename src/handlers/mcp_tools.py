"""The MCP tools: the contract's six operations for a model to call, their argument schemas and
descriptions, and one translation of domain errors into tool errors."""

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Final, Literal, ParamSpec, Required, TypedDict, TypeVar

import pydantic_core
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, PlainValidator

from core.access import Principal, Scope, require, sees_records
from core.contract import DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET, Q_MAX_CHARS, Page, RetrievalQuery, SortKey
from core.errors import (
    AuthenticationError,
    DomainError,
    InvalidInputError,
    KeyNotFoundError,
    MemoryNotFoundError,
    PermissionDeniedError,
    StorageUnavailableError,
    TableMissingError,
    VersionMismatchError,
    WriteConflictError,
)
from core.model import (
    CONTENT_MAX_CHARS,
    IDEMPOTENCY_KEY_MAX_CHARS,
    IDEMPOTENCY_WINDOW_HOURS,
    MAX_VERSION,
    STANDARD_TAGS,
    TAG_MAX_CHARS,
    TAGS_MAX,
    IdempotentCreate,
    Memory,
    MemoryChanges,
    MemoryType,
    NewMemory,
    Status,
    WritableStatus,
    parse_expected_version,
    parse_memory_id,
)
from core.service import MemoryService
from handlers.auth import Authenticator, presented_credentials
from handlers.problem import log_operator_error

# Where the endpoint's guard leaves the principal it verified, in the ASGI scope the SDK hands tools as the request.
PRINCIPAL_SCOPE_KEY: Final = "agent_memory.principal"

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

# The one table from domain errors to tool errors: what to add to the core's own words, if anything.
# The core's message always comes first and unchanged, so an invalid input reads exactly as the HTTP 422 detail.
TOOL_ERROR_HINTS: Final[dict[type[DomainError], str | None]] = {
    InvalidInputError: None,
    MemoryNotFoundError: "find the right id with search_memories",
    VersionMismatchError: None,
    WriteConflictError: "retry in {retry_after_seconds} s",
    StorageUnavailableError: "retry in {retry_after_seconds} s",
    TableMissingError: "retry in {retry_after_seconds} s",
    AuthenticationError: "the MCP client must send a valid agent-memory API key as `Authorization: Bearer <key>`",
    PermissionDeniedError: "ask the user for an API key with the {scope} scope",
    KeyNotFoundError: None,
}


def tool_error(exc: DomainError) -> CallToolResult:
    """The tool error a model reads for a domain error: exactly the core's words (and a hint), as the HTTP detail.

    Returned rather than raised: the SDK would put "Error executing tool <name>: " before a raised ToolError's text.
    """
    log_operator_error(exc)
    hint = TOOL_ERROR_HINTS[type(exc)]
    text = str(exc) if hint is None else f"{exc}; {hint.format_map(vars(exc))}"
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


P = ParamSpec("P")
R = TypeVar("R")


def _domain_errors_as_tool_errors(tool: Callable[P, R]) -> Callable[P, R | CallToolResult]:
    """Every tool's one translation of domain errors; anything else stays a crash the SDK logs."""

    @functools.wraps(tool)
    def call(*args: P.args, **kwargs: P.kwargs) -> R | CallToolResult:
        try:
            return tool(*args, **kwargs)
        except DomainError as exc:
            return tool_error(exc)

    # The SDK publishes __doc__ as the tool's description; Python before 3.13 keeps the source indentation in it.
    call.__doc__ = inspect.cleandoc(tool.__doc__ or "")
    return call


def _as_given(value: object) -> object:
    return value


def _documented(schema_type: Any) -> PlainValidator:
    """Publish `schema_type` as the argument's JSON schema but let the value through unvalidated.

    The core validates every argument, so a bad one is refused in the same words as the HTTP 422, never in the
    SDK's pydantic wording. Text arguments are annotated plain `str` for another reason: the SDK JSON-decodes
    string arguments of any other annotation, which would turn a search for "null" into no filter at all.
    """
    return PlainValidator(_as_given, json_schema_input_type=schema_type)


# A tool argument left out arrives as None; typed Any so it can default a parameter annotated `str` (see above).
ABSENT: Final[Any] = None

StatusArg = Annotated[
    str,
    _documented(Status | None),
    Field(
        description="Only memories with this lifecycle status: active (believed true), invalid (marked wrong, kept "
        "for the record) or deleted (soft-deleted; listed only when asked for). Null or left out: active and "
        "invalid ones."
    ),
]
MemoryTypeArg = Annotated[
    str,
    _documented(MemoryType | None),
    Field(
        description="Only memories of this type: identity (who the user is), preference (likes, dislikes, how "
        "things should be done), event (happened or will happen at a time) or fact (anything else true)."
    ),
]
TagArg = Annotated[
    str,
    _documented(str | None),
    Field(
        description="Only memories carrying exactly this tag, compared after trimming and lower-casing; travel "
        "does not match travel-plans. Empty means no tag filter."
    ),
]
QueryArg = Annotated[
    str,
    _documented(Annotated[str, Field(max_length=Q_MAX_CHARS)] | None),
    Field(
        description=f"Case-insensitive substring looked for in the content and in each tag, 1 to {Q_MAX_CHARS} "
        "characters; % _ and \\ are ordinary characters. Lexical, not semantic: give a distinctive word, not a "
        "question. Empty means no text filter."
    ),
]
SortArg = Annotated[
    str,
    _documented(SortKey | None),
    Field(
        description="Order: id (oldest first), or newest first by created_at, updated_at or last_accessed_at "
        "(ties broken by id, newest first; never-read memories come last under last_accessed_at)."
    ),
]
LimitArg = Annotated[
    int,
    _documented(Annotated[int, Field(ge=1)] | None),
    Field(
        description=f"Page size, 1 or more; values over {MAX_LIMIT} are served as {MAX_LIMIT}. "
        "The envelope's limit says what was served."
    ),
]
OffsetArg = Annotated[
    int,
    _documented(Annotated[int, Field(ge=0, le=MAX_OFFSET)] | None),
    Field(
        description="Matches to skip, 0 or more: for the next page pass offset + limit while has_more is true. "
        "Past the last match the page is empty."
    ),
]
IdArg = Annotated[
    int,
    _documented(Annotated[int, Field(ge=1)]),
    Field(description="The memory's id, as returned by search_memories, prime_memory_context or create_memory."),
]
_CONTENT_DESCRIPTION = (
    f"The memory itself: one atomic fact in normalised, self-contained words (third person, absolute dates), "
    f"e.g. 'The user prefers metric units'. Trimmed; 1 to {CONTENT_MAX_CHARS} characters."
)
_TAGS_DESCRIPTION = (
    f"Labels for filtering, at most {TAGS_MAX}. Each is trimmed and lower-cased, then 1 to {TAG_MAX_CHARS} "
    f"characters of a-z 0-9 - _ . : starting with a letter or digit; duplicates are dropped. Prefer the standard "
    f"tags: {', '.join(STANDARD_TAGS)}; add freeform ones (e.g. project:apollo) only for what they do not cover."
)
_MEMORY_TYPE_DESCRIPTION = (
    "identity (who the user is: name, role, relationships, home), preference (likes, dislikes, how the user wants "
    "things done), event (happened or will happen at a known time) or fact (anything else true)."
)
_STATUS_DESCRIPTION = "active (believed true) or invalid (known to be wrong or outdated, kept for the record)."
_CONTENT_SCHEMA = Annotated[str, Field(min_length=1, max_length=CONTENT_MAX_CHARS)]

NewContentArg = Annotated[str, _documented(_CONTENT_SCHEMA), Field(description=_CONTENT_DESCRIPTION)]
NewTagsArg = Annotated[list[str], _documented(list[str] | None), Field(description=_TAGS_DESCRIPTION)]
NewMemoryTypeArg = Annotated[str, _documented(MemoryType), Field(description=_MEMORY_TYPE_DESCRIPTION)]
NewStatusArg = Annotated[str, _documented(WritableStatus), Field(description=_STATUS_DESCRIPTION)]
IdempotencyKeyArg = Annotated[
    str,
    _documented(Annotated[str, Field(min_length=1, max_length=IDEMPOTENCY_KEY_MAX_CHARS)] | None),
    Field(
        description="A unique string (e.g. a UUID) naming this create, so retrying it is safe: the same key with "
        f"the same arguments within {IDEMPOTENCY_WINDOW_HOURS} hours returns the memory the first call created "
        "and creates nothing; the same key with other arguments is an error. Recommended whenever a call may be "
        "retried."
    ),
]

_UNCHANGED = " Left out or null: unchanged."
ContentChangeArg = Annotated[
    str, _documented(_CONTENT_SCHEMA | None), Field(description=f"New content. {_CONTENT_DESCRIPTION}{_UNCHANGED}")
]
TagsChangeArg = Annotated[
    list[str],
    _documented(list[str] | None),
    Field(description=f"The complete new tag list (it replaces the old one). {_TAGS_DESCRIPTION}{_UNCHANGED}"),
]
MemoryTypeChangeArg = Annotated[
    str, _documented(MemoryType | None), Field(description=f"New type: {_MEMORY_TYPE_DESCRIPTION}{_UNCHANGED}")
]
StatusChangeArg = Annotated[
    str,
    _documented(WritableStatus | None),
    Field(description=f"New status: {_STATUS_DESCRIPTION} Mark a wrong memory invalid rather than deleting it."),
]
ExpectedVersionArg = Annotated[
    int,
    _documented(Annotated[int, Field(ge=1, le=MAX_VERSION)] | None),
    Field(
        description="The version you last read. When given, the update is refused if the memory has changed "
        "since (the error names the current version); nothing is written. Recommended."
    ),
]


class DeletedMemory(BaseModel):
    """What delete_memory reports: the memory is now soft-deleted."""

    id: int
    status: Literal["deleted"] = "deleted"


class UpdatedMemory(TypedDict, total=False):
    """What update_memory reports: the memory as stored, or only its id and version for a key without the read
    scope (such a key never receives a record it did not just send)."""

    id: Required[int]
    version: Required[int]
    content: str
    tags: list[str]
    created_at: str
    updated_at: str
    last_accessed_at: str | None
    memory_type: MemoryType
    status: Status


def _structured(data: Mapping[str, Any]) -> CallToolResult:
    """A result as the SDK builds one from a returned model: the data, and the same data as indented JSON text."""
    text = pydantic_core.to_json(data, indent=2).decode()
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=dict(data))


_READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def _given(**arguments: object) -> dict[str, object]:
    """The arguments actually sent: a left-out or null argument is not part of the input."""
    return {name: value for name, value in arguments.items() if value is not None}


def _undeclared_arguments(ctx: Context | None, tool: Callable[..., object]) -> dict[str, object]:
    """Arguments the tool does not declare. The SDK drops them silently; handed to the core, they are refused as
    the HTTP door refuses unknown and read-only body fields, so a misspelt field is never quietly lost."""
    params = ctx.request_context.params if ctx is not None else None
    arguments = params.get("arguments") if params else None
    if not isinstance(arguments, Mapping):
        return {}
    declared = set(inspect.signature(tool).parameters) - {"ctx"}  # the SDK's own injection, not an argument
    return {str(name): value for name, value in arguments.items() if name not in declared}


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
) -> MCPServer:
    """The MCP server with the contract's tools; tests pass their own service and authenticator.

    Each tool acts as the principal the endpoint's guard verified. A request that did not pass the guard (an
    in-process client, or the SDK's app served unguarded) is authenticated here by `authenticate`, from its
    `Authorization` header when it has one.
    """
    # No subscriptions/listen: its stream never ends, and nothing here changes behind a client's back.
    server: MCPServer = MCPServer(
        "agent-memory", instructions=INSTRUCTIONS, version=version, subscriptions=False, log_level="WARNING"
    )
    _serve_tools_only(server)

    def caller(ctx: Context | None, scope: Scope) -> Principal:
        principal = verified_principal(ctx)
        if principal is None:
            headers = getattr(_request_of(ctx), "headers", None)
            principal = authenticate(presented_credentials(headers) if isinstance(headers, Mapping) else None)
        require(principal, scope)
        return principal

    def search(ctx: Context | None, arguments: dict[str, object]) -> Page:
        namespace = caller(ctx, "read").namespace
        return provide_service().search(namespace, RetrievalQuery.parse(arguments))

    @server.tool(title="Prime memory context", annotations=_READ)
    @_domain_errors_as_tool_errors
    def prime_memory_context(
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
        return search(
            ctx, _given(status=status, memory_type=memory_type, tag=tag, q=q, sort=sort, limit=limit, offset=offset)
        )

    @server.tool(title="Search memories", annotations=_READ)
    @_domain_errors_as_tool_errors
    def search_memories(
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
        return search(
            ctx, _given(status=status, memory_type=memory_type, tag=tag, q=q, sort=sort, limit=limit, offset=offset)
        )

    @server.tool(
        title="Create a memory",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
        ),
    )
    @_domain_errors_as_tool_errors
    def create_memory(
        content: NewContentArg,
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
        namespace = caller(ctx, "write").namespace
        given = _given(content=content, tags=tags, memory_type=memory_type, status=status)
        new = NewMemory.parse({**given, **_undeclared_arguments(ctx, create_memory)})
        once = None if idempotency_key is None else IdempotentCreate.of(idempotency_key, new, "idempotency_key")
        return provide_service().create(namespace, new, once)

    @server.tool(title="Read a memory", annotations=_READ)
    @_domain_errors_as_tool_errors
    def get_memory(id: IdArg, ctx: Context | None = None) -> Memory:
        """Read one memory by id, with its current version (pass that to update_memory as expected_version).

        A deleted or unknown id is an error. Reading stamps last_accessed_at and changes nothing else, so it is
        read-only from your side.
        """
        namespace = caller(ctx, "read").namespace
        return provide_service().get(namespace, parse_memory_id(id))

    @server.tool(
        title="Update a memory",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
        ),
    )
    @_domain_errors_as_tool_errors
    def update_memory(
        id: IdArg,
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
        deleting it. The old content is not kept.
        """
        principal = caller(ctx, "write")
        memory_id = parse_memory_id(id)
        given = _given(content=content, tags=tags, memory_type=memory_type, status=status)
        changes = MemoryChanges.parse({**given, **_undeclared_arguments(ctx, update_memory)})
        memory = provide_service().update(
            principal.namespace, memory_id, changes, parse_expected_version(expected_version, "expected_version")
        )
        if not sees_records(principal):
            return _structured({"id": memory.id, "version": memory.version})
        return _structured(memory.model_dump(mode="json"))

    @server.tool(
        title="Delete a memory",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
        ),
    )
    @_domain_errors_as_tool_errors
    def delete_memory(id: IdArg, ctx: Context | None = None) -> DeletedMemory:
        """Delete a memory the user asked you to forget: it disappears from reads and searches.

        For a memory that is merely wrong or outdated, use update_memory with status invalid instead, which keeps
        the record. Deleting an unknown or already deleted id is an error and changes nothing.
        """
        namespace = caller(ctx, "write").namespace
        memory_id = parse_memory_id(id)
        provide_service().delete(namespace, memory_id)
        return DeletedMemory(id=memory_id)

    return server
