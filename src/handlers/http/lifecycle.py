"""A memory's life at the HTTP door after its writes: its history of revisions (and the namespace's, every memory's
changes since a moment), restoring it once deleted, and superseding others by it (a purge is
`DELETE /memories/{id}?purge=true`, among the memory routes of handlers.http.memories)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from core.access import sees_records
from core.history import DEFAULT_CHANGES_DAYS, ChangesPage, ChangesQuery, HistoryPage, HistoryQuery
from core.memories import Superseded, SupersedeRequest
from core.model import Memory, parse_memory_id
from handlers.http.dependencies import Reader, ThisDoor, Writer
from handlers.http.input import query_parameters, query_string, read_json_body
from handlers.http.openapi import (
    BODY_RESPONSES,
    INVALID_INPUT_RESPONSES,
    NOT_FOUND_RESPONSES,
    etag_only_doc,
    json_schema_body,
    problem_doc,
    retrieval_parameters,
)
from handlers.http.records import written
from handlers.metrics import rows_served

router = APIRouter()


@router.post(
    "/memories/{memory_id}/restore",
    response_model=Memory,
    responses={
        **NOT_FOUND_RESPONSES,
        204: etag_only_doc("Restored"),
        409: problem_doc("Other writers kept colliding with this one; retry."),
    },
    summary="Restore a deleted memory",
    description="The memory gets back the status it had before the delete; `version` and `updated_at` stay. "
    "404 when it is missing, not deleted, or purged.",
)
async def restore_memory(memory_id: str, response: Response, door: ThisDoor, caller: Writer) -> Memory | Response:
    memory = await door.run_blocking(door.memories.restore, caller.namespace, parse_memory_id(memory_id), caller.key_id)
    return written(memory, caller, response)


@router.post(
    "/memories/{memory_id}/supersede",
    response_model=Superseded,
    responses={
        **BODY_RESPONSES,
        **NOT_FOUND_RESPONSES,
        **INVALID_INPUT_RESPONSES,
        204: {"description": "Superseded, for a key that may not read memories"},
        409: problem_doc("Other writers kept colliding with this one; retry."),
    },
    openapi_extra=json_schema_body(SupersedeRequest),
    summary="Supersede memories by this one",
    description="In one atomic write, each listed memory becomes `invalid`, its `version` +1 and `updated_at` the "
    "write's time, and its history gains a revision `superseded` naming this memory, which must be `active`. A "
    "missing, deleted or repeated id (or this memory itself) is a 422 naming the entry, and nothing is written. "
    "404 when this memory is missing or deleted. A key that may not read memories gets 204 and no records.",
)
async def supersede_memories(memory_id: str, request: Request, door: ThisDoor, caller: Writer) -> Superseded | Response:
    mid = parse_memory_id(memory_id)
    body = SupersedeRequest.parse(await read_json_body(request))
    superseded = await door.run_blocking(door.memories.supersede, caller.namespace, mid, body.ids, caller.key_id)
    if not sees_records(caller):  # a write-only key learns that the write landed, never what the records say
        return Response(status_code=204)
    return superseded


@router.get(
    "/memories/{memory_id}/history",
    response_model=HistoryPage,
    responses={**NOT_FOUND_RESPONSES, **INVALID_INPUT_RESPONSES},
    openapi_extra={"parameters": retrieval_parameters(HistoryQuery)},
    summary="A memory's revisions, newest first",
    description="Every change of the memory (created, updated, deleted, restored, superseded with `superseded_by`) "
    "as the record was right after it, when, and the id of the API key that made it; deleted memories too. "
    "Does not stamp `last_accessed_at`. "
    "404 when the memory never existed or is purged.",
)
async def memory_history(memory_id: str, request: Request, door: ThisDoor, caller: Reader) -> HistoryPage:
    mid = parse_memory_id(memory_id)
    page = await door.run_blocking(
        door.memories.history,
        caller.namespace,
        mid,
        query_string(HistoryQuery, query_parameters(request)),
        caller.key_id,
    )
    rows_served(len(page.items), stamped=False)  # a history page stamps nothing
    return page


@router.get(
    "/changes",
    response_model=ChangesPage,
    responses=INVALID_INPUT_RESPONSES,
    openapi_extra={"parameters": retrieval_parameters(ChangesQuery)},
    summary="The namespace's changes, newest first",
    description="Every change of the namespace's memories made at or after `since` (default: "
    f"{DEFAULT_CHANGES_DAYS} days before the request), as a history gives them: the change (created, updated, "
    "deleted, restored, superseded with `superseded_by`), when, the id of the API key that made it, and the "
    "record as it was right after it. A purged memory's changes are gone with it. Does not stamp "
    "`last_accessed_at`.",
)
async def namespace_changes(request: Request, door: ThisDoor, caller: Reader) -> ChangesPage:
    query = query_string(ChangesQuery, query_parameters(request))
    page = await door.run_blocking(door.memories.changes, caller.namespace, query, caller.key_id)
    rows_served(len(page.items), stamped=False)  # the changes stamp nothing
    return page
