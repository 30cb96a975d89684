"""An embedding model that fails in any way never fails a request (CONTRACT.md, Recall; issue 38): whatever it raises
(a missing engine's ImportError, MemoryError, a bug's TypeError, RuntimeError) and whatever malformed answer it
gives (NaN or infinite values, an empty vector, a vector of other dimensions, too many or too few vectors, no list),
at both doors a create is a 201 whose memory waits for its vector (recall's `ranking.unembedded` counts it), a
content PATCH is a 200, and a recall is a 200 ranked without meaning (`"semantic": false`); no tool crashes."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp.client import Client

from adapters.memory import InMemoryMemoryRepository
from core.memories import MemoryService
from core.recall.indexing import PAUSE_AFTER_FAILURE_SECONDS, RecallIndexer
from core.recall.service import RecallService
from handlers.auth import open_access
from handlers.http.app import create_app
from handlers.mcp import create_server
from tests.conftest import FakeClock
from tests.embedding_models import FAILURES, FailingModel
from tests.handlers.conftest import tool_text

pytestmark = pytest.mark.anyio


@dataclass
class Doors:
    http: TestClient
    mcp: Client


def services(model: FailingModel) -> tuple[MemoryService, RecallService]:
    # Each write's clock reading is past the pause an earlier failure starts, so every write asks the model again.
    leaps = itertools.count(step=PAUSE_AFTER_FAILURE_SECONDS + 1).__next__
    store, clock = InMemoryMemoryRepository(), FakeClock()
    indexer = RecallIndexer(model, lambda: float(leaps()))
    return MemoryService(store, clock, indexer=indexer), RecallService(store, model, clock=clock)


@pytest.fixture(params=list(FAILURES))
def doors(request: pytest.FixtureRequest) -> Iterator[Doors]:
    model = FailingModel(FAILURES[request.param])
    (for_http, http_recall), (for_mcp, mcp_recall) = services(model), services(model)
    app = create_app(for_http, open_access(), version="test", recall=http_recall)
    with TestClient(app, raise_server_exceptions=False) as http:
        yield Doors(http, Client(create_server(for_mcp, open_access(), version="test", recall=mcp_recall)))


def test_the_http_door_stores_and_changes_memories_and_recalls_them_without_meaning(doors: Doors) -> None:
    created = doors.http.post("/memories", json={"content": "The user drinks green tea"})
    assert created.status_code == 201, created.text
    changed = doors.http.patch(f"/memories/{created.json()['id']}", json={"content": "The user drinks black tea"})
    assert changed.status_code == 200, changed.text
    assert doors.http.post("/memories", json={"content": "The user lives in Lyon"}).status_code == 201

    recalled = doors.http.get("/recall", params={"query": "what does the user drink?"})

    assert recalled.status_code == 200, recalled.text
    page = recalled.json()
    assert (page["total"], page["ranking"]["unembedded"], page["ranking"]["semantic"]) == (2, 2, False)
    assert page["items"][0]["memory"]["content"] == "The user drinks black tea"
    assert {item["parts"]["semantic"] for item in page["items"]} == {0.0}


async def test_the_mcp_tools_store_and_change_memories_and_recall_them_without_meaning(doors: Doors) -> None:
    async with doors.mcp as client:
        created = await client.call_tool("create_memory", {"content": "The user drinks green tea"})
        assert not created.is_error, tool_text(created)
        assert created.structured_content is not None
        changed = await client.call_tool(
            "update_memory", {"id": created.structured_content["id"], "content": "The user drinks black tea"}
        )
        assert not changed.is_error, tool_text(changed)
        other = await client.call_tool("create_memory", {"content": "The user lives in Lyon"})
        assert not other.is_error, tool_text(other)
        recalled = await client.call_tool("recall_memories", {"query": "what does the user drink?"})

    assert not recalled.is_error, tool_text(recalled)
    page: dict[str, Any] | None = recalled.structured_content
    assert page is not None
    assert (page["total"], page["ranking"]["unembedded"], page["ranking"]["semantic"]) == (2, 2, False)
    assert page["items"][0]["memory"]["content"] == "The user drinks black tea"
