"""Recall at the HTTP door: `GET /recall`, the memories that best answer a question in natural language, ranked
(CONTRACT.md, Recall). It parses the query string into the core's RecallQuery, makes one service call and returns the
core's envelope."""

from __future__ import annotations

from functools import partial

from fastapi import APIRouter, Request, Response

from core.limits import RECALL_MAX_LIMIT
from core.recall.query import RecallQuery
from core.recall.service import RecallPage
from handlers.http.dependencies import Reader, ThisDoor
from handlers.http.input import NO_STAMP, Prefer, query_parameters, query_string, stamps_wanted
from handlers.http.openapi import INVALID_INPUT_RESPONSES, retrieval_parameters
from handlers.metrics import rows_served

router = APIRouter()


@router.get(
    "/recall",
    response_model=RecallPage,
    responses=INVALID_INPUT_RESPONSES,
    openapi_extra={"parameters": retrieval_parameters(RecallQuery)},
    summary="Recall the memories that best answer a question, ranked",
    description="Every memory the filters match (deleted ones only with `status=deleted`) is ranked by a score, "
    "the weighted sum of five parts each in [0, 1]: lexical (BM25 over content and tags), semantic (the similarity "
    "of the question's and the memory's embeddings), recency (of `updated_at`), use (of the stored "
    "`last_accessed_at`) and type (a prior per memory type). Ordered by score, then id, both descending; at most "
    f"{RECALL_MAX_LIMIT} per page. `ranking` says which model and weights ranked the answer; scores compare only "
    "within one answer. Every time-based part is computed at `as_of` (default: when the request arrived), so the "
    "same `as_of` reproduces an answer while its memories stay as they were. Stamps `last_accessed_at` of each "
    f"returned record, unless the request says `Prefer: {NO_STAMP}`: a stamp changes the `use` of what it returned, "
    "so an answer to reproduce is read with it.",
)
async def recall_memories(
    request: Request, response: Response, door: ThisDoor, caller: Reader, prefer: Prefer = None
) -> RecallPage:
    stamp = stamps_wanted(request, response)
    query = query_string(RecallQuery, query_parameters(request))
    page = await door.run_blocking(
        partial(door.recall.recall, stamp=stamp, key_id=caller.key_id), caller.namespace, query
    )
    rows_served(len(page.items), stamped=stamp)
    return page
