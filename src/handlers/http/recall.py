"""Recall at the HTTP door: `GET /recall`, the memories that best answer a question in natural language, ranked
(CONTRACT.md, Recall), and `GET /memories/{id}/related`, the memories closest in meaning to one (CONTRACT.md, Keeping
memories true). Each parses the query string into the core's query, makes one service call and returns the core's
answer."""

from __future__ import annotations

from functools import partial

from fastapi import APIRouter, Request, Response

from core.limits import RECALL_MAX_LIMIT, RELATED_MAX_LIMIT
from core.model import parse_memory_id
from core.recall.answer import RecallPage
from core.recall.query import RecallQuery
from core.recall.related import RelatedMemories, RelatedQuery
from handlers.http.dependencies import Reader, ThisDoor
from handlers.http.input import NO_STAMP, Prefer, query_parameters, query_string, stamps_wanted
from handlers.http.openapi import INVALID_INPUT_RESPONSES, NOT_FOUND_RESPONSES, retrieval_parameters
from handlers.metrics import rows_served

router = APIRouter()


@router.get(
    "/recall",
    response_model=RecallPage,
    responses=INVALID_INPUT_RESPONSES,
    openapi_extra={"parameters": retrieval_parameters(RecallQuery)},
    summary="Recall the memories that best answer a question, ranked",
    description="Every memory the filters match (deleted ones only with `status=deleted`) is ranked by a score, "
    "the weighted sum of six parts each in [0, 1]: lexical (BM25 of the question's words over content and tags), "
    "semantic (the similarity of the question's and the memory's embeddings), recency (of `updated_at`), use (of "
    "the stored `last_accessed_at`), type (a prior per memory type) and newer (0 unless the memory restates an "
    "older match, a version of the same fact: then how far it was lifted to rank just above it). Ordered by score, "
    "then id, both descending; at most "
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


@router.get(
    "/memories/{memory_id}/related",
    response_model=RelatedMemories,
    responses={**NOT_FOUND_RESPONSES, **INVALID_INPUT_RESPONSES},
    openapi_extra={"parameters": retrieval_parameters(RelatedQuery)},
    summary="The active memories closest in meaning to this one",
    description="The namespace's `active` memories whose embeddings are most similar to this memory's (itself left "
    "out), each with its `similarity`, most similar first, ties by id descending; only those above the model's "
    f"related `floor`; `limit` 1 to {RELATED_MAX_LIMIT} (default 3). Use it to find what a memory may replace "
    "(supersede it) or repeat. `waiting: true` (and no items) while the memory waits for its vector. Does not stamp "
    "`last_accessed_at`. 404 when the memory is missing or deleted.",
)
async def related_memories(memory_id: str, request: Request, door: ThisDoor, caller: Reader) -> RelatedMemories:
    mid = parse_memory_id(memory_id)
    query = query_string(RelatedQuery, query_parameters(request))
    related = await door.run_blocking(
        partial(door.recall.related.related, key_id=caller.key_id), caller.namespace, mid, query
    )
    rows_served(len(related.items), stamped=False)  # related memories stamp nothing
    return related
