"""A memory's life at the HTTP door after its writes: its history of revisions, and restoring it once deleted (a
purge is `DELETE /memories/{id}?purge=true`, among the memory routes of handlers.http.memories)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from core.history import HistoryPage, HistoryQuery
from core.model import Memory, parse_memory_id
from handlers.http.dependencies import Reader, ThisDoor, Writer
from handlers.http.input import query_parameters, query_string
from handlers.http.openapi import (
    INVALID_INPUT_RESPONSES,
    NOT_FOUND_RESPONSES,
    etag_only_doc,
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


@router.get(
    "/memories/{memory_id}/history",
    response_model=HistoryPage,
    responses={**NOT_FOUND_RESPONSES, **INVALID_INPUT_RESPONSES},
    openapi_extra={"parameters": retrieval_parameters(HistoryQuery)},
    summary="A memory's revisions, newest first",
    description="Every change of the memory (created, updated, deleted, restored) as the record was right after "
    "it, when, and the id of the API key that made it; deleted memories too. Does not stamp `last_accessed_at`. "
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
