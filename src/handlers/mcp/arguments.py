"""The MCP tools' arguments, derived from the core's types: each publishes the core field's JSON schema (its rule
and bounds) and description, and reaches the core unvalidated, for the core to parse in the HTTP 422's words; a
required one is published as required, yet reaches the core even when left out, for it to say so in those words."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Final, get_args

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools import Tool
from pydantic import BaseModel, PlainValidator, TypeAdapter, WithJsonSchema

from core.contract import RetrievalQuery
from core.errors import FieldError, InvalidInputError
from core.limits import IDEMPOTENCY_WINDOW_HOURS
from core.memories import SupersedeRequest
from core.model import (
    IS_REQUIRED,
    NOT_A_FIELD,
    ExpectedVersion,
    IdempotencyKey,
    MemoryChanges,
    MemoryId,
    NewMemory,
    parse_memory_id,
)
from core.recall.query import RecallQuery
from core.recall.related import RelatedQuery


def _as_given(value: object) -> object:
    return value


def _argument(schema_type: Any, description: str) -> PlainValidator:
    """A tool argument published with `schema_type`'s JSON schema (a core type: its rule and bounds) and
    `description`, but let through unvalidated, for the core to parse: a bad one is refused in the same words as the
    HTTP 422, never in the SDK's pydantic wording. Text arguments are annotated plain `str` for another reason: the
    SDK JSON-decodes string arguments of any other annotation, which would turn a search for "null" into no filter."""
    schema = {**_portable(TypeAdapter(schema_type).json_schema()), "description": description}
    return PlainValidator(_as_given, json_schema_input_type=Annotated[Any, WithJsonSchema(schema)])


# JSON Schema keywords the OpenAPI document carries but a tool schema leaves out: model providers' tool-schema
# dialects refuse `not`, and the patterns use regex escapes (\UXXXXXXXX) ECMA-262 validators do not read. The
# descriptions state those rules, and the core enforces them either way.
_NOT_PORTABLE: Final = frozenset({"pattern", "not"})


def _portable(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {key: _portable(value) for key, value in schema.items() if key not in _NOT_PORTABLE}
    if isinstance(schema, list):
        return [_portable(item) for item in schema]
    return schema


def _field(
    model: type[BaseModel], name: str, *, optional: bool = True, prefix: str = "", suffix: str = ""
) -> PlainValidator:
    """The argument for `model`'s field `name`: the core's type and description (null too, unless `optional` is
    False: a left-out argument arrives as null)."""
    field = model.model_fields[name]
    core_type = field.rebuild_annotation()
    schema_type = core_type | None if optional and not _admits_none(core_type) else core_type
    return _argument(schema_type, f"{prefix}{field.description}{suffix}")


def _admits_none(annotation: Any) -> bool:
    return type(None) in get_args(annotation) or any(type(None) in get_args(arg) for arg in get_args(annotation))


# A tool argument left out arrives as None; typed Any so it can default a parameter annotated `str` (see above).
ABSENT: Final[Any] = None


class _Required:
    """Marks an argument a call must give (in its annotation). Its parameter still defaults to ABSENT: a required
    parameter would make the SDK refuse a call without it in pydantic's words, before the core could."""


REQUIRED: Final = _Required()


def published(tool: Tool) -> Tool:
    """`tool` as clients see it: its REQUIRED arguments listed as required, without the null default their
    parameters have."""
    parameters = copy.deepcopy(tool.parameters)
    signature = inspect.signature(tool.fn, eval_str=True)
    required = [
        name
        for name, parameter in signature.parameters.items()
        if REQUIRED in getattr(parameter.annotation, "__metadata__", ())
    ]
    for name in required:
        parameters["properties"][name].pop("default", None)
    if required:
        parameters["required"] = required
    return tool.model_copy(update={"parameters": parameters})


def required_id(value: object) -> int:
    """The `id` argument, parsed as the core parses any id; left out or null, named as a missing field."""
    if value is None:
        raise InvalidInputError([FieldError("id", IS_REQUIRED)])
    return parse_memory_id(value)


StatusArg = Annotated[str, _field(RetrievalQuery, "status")]
MemoryTypeArg = Annotated[str, _field(RetrievalQuery, "memory_type")]
TagArg = Annotated[str, _field(RetrievalQuery, "tag")]
QueryArg = Annotated[str, _field(RetrievalQuery, "q")]
SortArg = Annotated[str, _field(RetrievalQuery, "sort")]
LimitArg = Annotated[int, _field(RetrievalQuery, "limit")]
OffsetArg = Annotated[int, _field(RetrievalQuery, "offset")]
# recall_memories' arguments: RecallQuery's fields (the filters and offset as the retrieval's, its own limit).
RecallQueryArg = Annotated[str, _field(RecallQuery, "query", optional=False), REQUIRED]
RecallStatusArg = Annotated[str, _field(RecallQuery, "status")]
RecallMemoryTypeArg = Annotated[str, _field(RecallQuery, "memory_type")]
RecallTagArg = Annotated[str, _field(RecallQuery, "tag")]
RecallLimitArg = Annotated[int, _field(RecallQuery, "limit")]
RecallOffsetArg = Annotated[int, _field(RecallQuery, "offset")]
AsOfArg = Annotated[str, _field(RecallQuery, "as_of")]
RelatedLimitArg = Annotated[int, _field(RelatedQuery, "limit")]
IdArg = Annotated[
    int,
    _argument(MemoryId, "The memory's id, as returned by search_memories, prime_memory_context or create_memory."),
    REQUIRED,
]

NewContentArg = Annotated[str, _field(NewMemory, "content", optional=False), REQUIRED]
NewTagsArg = Annotated[list[str], _field(NewMemory, "tags")]
NewMemoryTypeArg = Annotated[str, _field(NewMemory, "memory_type", optional=False)]
NewStatusArg = Annotated[str, _field(NewMemory, "status", optional=False)]
SupersedesArg = Annotated[list[int], _field(NewMemory, "supersedes")]
SupersededIdsArg = Annotated[list[int], _field(SupersedeRequest, "ids", optional=False), REQUIRED]
IdempotencyKeyArg = Annotated[
    str,
    _argument(
        IdempotencyKey | None,
        "A unique string (e.g. a UUID) naming this create, so retrying it is safe: the same key with "
        f"the same arguments within {IDEMPOTENCY_WINDOW_HOURS} hours returns the memory the first call created "
        "and creates nothing; the same key with other arguments is an error. Send one with every create: a call "
        "that fails after the write was sent may have stored the memory, and only a retry with the same key is sure "
        "to store it once.",
    ),
]

_UNCHANGED = " Left out or null: unchanged."
ContentChangeArg = Annotated[str, _field(MemoryChanges, "content", prefix="New content. ", suffix=_UNCHANGED)]
TagsChangeArg = Annotated[
    list[str],
    _field(MemoryChanges, "tags", prefix="The complete new tag list (it replaces the old one). ", suffix=_UNCHANGED),
]
MemoryTypeChangeArg = Annotated[str, _field(MemoryChanges, "memory_type", prefix="New type: ", suffix=_UNCHANGED)]
StatusChangeArg = Annotated[
    str,
    _field(
        MemoryChanges,
        "status",
        prefix="New status: ",
        suffix=" Mark a wrong memory invalid rather than deleting it.",
    ),
]
ExpectedVersionArg = Annotated[
    int,
    _argument(
        ExpectedVersion | None,
        "The version you last read. When given, the update is refused if the memory has changed "
        "since (the error names the current version); nothing is written. Recommended.",
    ),
]


def sent_arguments(**arguments: object) -> dict[str, object]:
    """The arguments actually sent: a left-out or null argument is not part of the input."""
    return {name: value for name, value in arguments.items() if value is not None}


def undeclared_arguments(ctx: Context | None, tool: Callable[..., object]) -> dict[str, object]:
    """Arguments the tool does not declare. The SDK drops them silently; handed to the core, they are refused as
    the HTTP door refuses unknown and read-only body fields, so a misspelt field is never quietly lost."""
    params = ctx.request_context.params if ctx is not None else None
    arguments = params.get("arguments") if params else None
    if not isinstance(arguments, Mapping):
        return {}
    declared = set(inspect.signature(tool).parameters) - {"ctx"}  # the SDK's own injection, not an argument
    return {str(name): value for name, value in arguments.items() if name not in declared}


def refuse_undeclared(ctx: Context | None, tool: Callable[..., object]) -> None:
    """Refuse every argument `tool` does not declare, in the words the HTTP door refuses an unknown body field with.
    For the tools whose arguments are no body the core parses (a retrieval, an id): dropped silently, a misspelt
    filter would answer (and stamp) an unfiltered page."""
    unknown = undeclared_arguments(ctx, tool)
    if unknown:
        raise InvalidInputError([FieldError(name, NOT_A_FIELD) for name in unknown])
