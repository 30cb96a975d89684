"""The memory routes of the HTTP door: create, read, change, delete (or purge) one memory, and filter the memories
of the caller's namespace. Each parses its input into a core type, makes one service call and shapes the answer."""

from __future__ import annotations

from functools import partial
from typing import Annotated, Literal

from fastapi import APIRouter, Header, Query, Request, Response

from core.contract import Page
from core.limits import IDEMPOTENCY_KEY_MAX_CHARS, IDEMPOTENCY_WINDOW_HOURS, MAX_MEMORY_ID, MAX_VERSION
from core.model import IdempotentCreate, Memory, MemoryChanges, NewMemory, parse_memory_id
from handlers.http.dependencies import Reader, ThisDoor, Writer
from handlers.http.input import (
    NO_STAMP,
    Prefer,
    parse_if_match,
    query_parameters,
    read_json_body,
    retrieval_query,
    stamps_wanted,
)
from handlers.http.openapi import (
    BODY_RESPONSES,
    INVALID_INPUT_RESPONSES,
    NOT_FOUND_RESPONSES,
    etag_only_doc,
    json_schema_body,
    problem_doc,
    retrieval_parameters,
)
from handlers.http.records import with_etag, written
from handlers.metrics import rows_served

router = APIRouter()

IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        description="A unique string (e.g. a UUID) naming this create, 1 to "
        f"{IDEMPOTENCY_KEY_MAX_CHARS} visible ASCII characters. Within {IDEMPOTENCY_WINDOW_HOURS} hours, a "
        "retry with the same key and body returns the first response's record with 201 and creates nothing; "
        "the same key with another body is a 422; while an identical request is still in flight, a 409 with "
        "Retry-After.",
    ),
]
IfMatch = Annotated[str | None, Header(description='The ETag read earlier, e.g. "3".')]
Purge = Annotated[Literal["true", "false"], Query(description="true: purge a deleted memory now, for good.")]


@router.post(
    "/memories",
    status_code=201,
    response_model=Memory,
    responses={
        **BODY_RESPONSES,
        **INVALID_INPUT_RESPONSES,
        409: problem_doc("Collides with a write in flight; retry."),
        507: problem_doc(f"The namespace has used every id up to {MAX_MEMORY_ID}; nothing was stored."),
    },
    openapi_extra=json_schema_body(NewMemory),
    summary="Create a memory",
)
async def create_memory(
    request: Request,
    response: Response,
    door: ThisDoor,
    caller: Writer,
    idempotency_key: IdempotencyKey = None,
) -> Memory:
    new = NewMemory.parse(await read_json_body(request))
    idempotent = None if idempotency_key is None else IdempotentCreate.of(idempotency_key, new, "Idempotency-Key")
    memory = await door.run_blocking(door.memories.create, caller.namespace, new, idempotent, caller.key_id)
    response.headers["Location"] = f"/memories/{memory.id}"
    return with_etag(memory, response)


@router.get(
    "/memories/{memory_id}",
    response_model=Memory,
    responses=NOT_FOUND_RESPONSES,
    summary="Read one memory",
    description=f"Stamps `last_accessed_at`, unless the request says `Prefer: {NO_STAMP}`.",
)
async def get_memory(
    memory_id: str,
    request: Request,
    response: Response,
    door: ThisDoor,
    caller: Reader,
    prefer: Prefer = None,
) -> Memory:
    stamp = stamps_wanted(request, response)
    memory = await door.run_blocking(
        partial(door.memories.get, stamp=stamp, key_id=caller.key_id), caller.namespace, parse_memory_id(memory_id)
    )
    rows_served(1, stamped=stamp)
    return with_etag(memory, response)


@router.patch(
    "/memories/{memory_id}",
    response_model=Memory,
    responses={
        **BODY_RESPONSES,
        **NOT_FOUND_RESPONSES,
        **INVALID_INPUT_RESPONSES,
        204: etag_only_doc("Updated"),
        409: problem_doc(
            "Other writers kept colliding with this one; retry. Or (type `version-exhausted`, no `Retry-After`) "
            f"the memory is at version {MAX_VERSION} and can change no further."
        ),
        412: problem_doc("`If-Match` names no current version, or is malformed (`type` tells which)."),
    },
    openapi_extra=json_schema_body(MemoryChanges),
    summary="Change a memory's editable fields",
)
async def update_memory(
    memory_id: str,
    request: Request,
    response: Response,
    door: ThisDoor,
    caller: Writer,
    if_match: IfMatch = None,
) -> Memory | Response:
    mid = parse_memory_id(memory_id)
    changes = MemoryChanges.parse(await read_json_body(request))
    memory = await door.run_blocking(
        door.memories.update, caller.namespace, mid, changes, parse_if_match(if_match), caller.key_id
    )
    return written(memory, caller, response)


@router.delete(
    "/memories/{memory_id}",
    status_code=204,
    responses=NOT_FOUND_RESPONSES,
    summary="Soft-delete a memory, or purge a deleted one",
    description="Without `purge`, the memory is marked deleted: it stays restorable for the retention window, "
    "then it is purged. With `purge=true`, a memory already deleted is purged at once: its record and its history "
    "are gone for good (an active memory is a 404: delete it first).",
)
async def delete_memory(memory_id: str, door: ThisDoor, caller: Writer, purge: Purge = "false") -> Response:
    mid = parse_memory_id(memory_id)
    if purge == "true":
        await door.run_blocking(door.memories.purge, caller.namespace, mid, caller.key_id)
    else:
        await door.run_blocking(door.memories.delete, caller.namespace, mid, caller.key_id)
    return Response(status_code=204)


@router.get(
    "/memories",
    response_model=Page,
    responses=INVALID_INPUT_RESPONSES,
    openapi_extra={"parameters": retrieval_parameters()},
    summary="Filter, sort and page memories",
    description=f"Stamps `last_accessed_at` of each returned record, unless the request says `Prefer: {NO_STAMP}`.",
)
async def search_memories(
    request: Request, response: Response, door: ThisDoor, caller: Reader, prefer: Prefer = None
) -> Page:
    stamp = stamps_wanted(request, response)
    query = retrieval_query(query_parameters(request))
    page = await door.run_blocking(
        partial(door.memories.search, stamp=stamp, key_id=caller.key_id), caller.namespace, query
    )
    rows_served(len(page.items), stamped=stamp)
    return page
