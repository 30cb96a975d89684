"""Recall as `serve` answers it, on Amazon DynamoDB Local with the offline model: both doors rank the memories of a
namespace by meaning and give the same answer for the same question and `as_of` (the contract's "same items in the
same order, on every door"), and the HTTP door's `Prefer: no-stamp` leaves the stamps for the MCP call to set. The
rest of recall's contract runs in process on every store (tests/integration/test_recall_contract.py)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx2
from mcp.client import Client as McpClient
from mcp.client.streamable_http import streamable_http_client

from adapters.dynamodb import DynamoDBKeyRepository, make_client
from core.keys import KeyService
from tests.conftest import REGION
from tests.embedding_models import wait_for

SERVE_TABLE = "agent-memory"
MEMORIES = (
    "The user writes Python for a living",
    "The user is vegetarian and avoids fish too",
    "The user lives in Lyon and works from home",
)
QUESTION = {"query": "what does the user eat?", "as_of": "2031-01-01T00:00:00Z"}


def unembedded(http: httpx2.Client) -> int:
    page = http.get("/recall", params=QUESTION, headers={"Prefer": "no-stamp"}).json()
    return int(page["ranking"]["unembedded"])


def unstamped(page: dict[str, Any]) -> dict[str, Any]:
    """The answer without the stamps it set (the MCP call stamps; the audited HTTP call does not)."""
    items = [{**item, "memory": {**item["memory"], "last_accessed_at": None}} for item in page["items"]]
    return {**page, "items": items}


async def recall_over_mcp(base: str, key: str) -> dict[str, Any]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30) as http,
        McpClient(streamable_http_client(f"{base}/mcp", http_client=http)) as client,
    ):
        result = await client.call_tool("recall_memories", QUESTION)
    assert not result.is_error, result.content
    page: dict[str, Any] | None = result.structured_content
    assert page is not None
    return page


def test_both_served_doors_rank_by_meaning_and_give_the_same_answer(shared_serve_engine: tuple[str, str, int]) -> None:
    base, _, ddb_port = shared_serve_engine
    keys = KeyService(DynamoDBKeyRepository(make_client(f"http://127.0.0.1:{ddb_port}", REGION), SERVE_TABLE))
    _, key = keys.create(f"recall-{uuid.uuid4().hex[:8]}")
    auth = {"Authorization": f"Bearer {key}"}
    with httpx2.Client(base_url=base, headers=auth, timeout=30) as http:
        for content in MEMORIES:
            assert http.post("/memories", json={"content": content}).status_code == 201
        # A write waits for its vector only so long (a busy machine can outlast it); serve's backfill adds it then.
        wait_for(lambda: unembedded(http) == 0, "the memories embedded")
        audited = http.get("/recall", params=QUESTION, headers={"Prefer": "no-stamp"})

        over_mcp = asyncio.run(recall_over_mcp(base, key))
        stamped = http.get("/memories", params={"limit": 10}, headers={"Prefer": "no-stamp"}).json()["items"]

    assert audited.status_code == 200, audited.text
    page = audited.json()
    assert page["items"][0]["memory"]["content"] == "The user is vegetarian and avoids fish too"
    assert (page["total"], page["as_of"], page["ranking"]["semantic"], page["ranking"]["unembedded"]) == (
        3,
        "2031-01-01T00:00:00.000000Z",
        True,
        0,
    )
    assert not page["ranking"]["model"].startswith("stand-in")
    assert {item["memory"]["last_accessed_at"] for item in page["items"]} == {None}
    assert unstamped(over_mcp) == page
    (stamp,) = {item["memory"]["last_accessed_at"] for item in over_mcp["items"]}
    assert [memory["last_accessed_at"] for memory in stamped] == [stamp] * 3
