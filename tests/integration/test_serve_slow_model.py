"""`serve` with a slow embedding model (issue 38: an 8,190-character write in CJK held the offline model for up to a
minute, three such writes at once were answered 503 "Storage is briefly unavailable", and another namespace's small
write waited 34.5 s). The app serve runs, behind a real uvicorn, over DynamoDB Local, with serve's background
embedding: writes whose vectors the model holds are answered 201 once the indexer's wait passes, stored without
their vectors; another namespace's write is answered while the model still holds them; once the model answers,
the background embeds every one. The wait is short here; nothing measures time."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import httpx2
import pytest

from adapters.dynamodb import DynamoDBGrantRepository, DynamoDBKeyRepository, DynamoDBMemoryRepository
from core.grants import GrantService
from core.keys import KeyService
from core.memories import MemoryService
from core.recall.backfill import Backfill
from core.recall.indexing import RecallIndexer
from core.recall.service import RecallService
from handlers import bootstrap
from handlers.auth import key_authenticator
from local import serve as cli
from local.purging import start_embedding
from tests.conftest import Engine
from tests.embedding_models import TINY_WAIT_SECONDS, SlowModel, wait_for
from tests.integration.test_serve_stall import WAIT, running

SLOW_WRITES = 3
QUESTION = {"query": "what does the user learn?"}


def served(engine: Engine, model: SlowModel) -> bootstrap.Services:
    """serve's services (bootstrap.build_services) over a new table, embedding with `model` within a short wait."""
    table = engine.new_table()
    repository = DynamoDBMemoryRepository(engine.client, table)
    keys = KeyService(DynamoDBKeyRepository(engine.client, table))
    return bootstrap.Services(
        MemoryService(repository, fenced=True, indexer=RecallIndexer(model, wait_seconds=TINY_WAIT_SECONDS)),
        keys,
        GrantService(DynamoDBGrantRepository(engine.client, table), keys),
        bootstrap.Settings(table_name=table),
        RecallService(repository, model, wait_seconds=TINY_WAIT_SECONDS),
        Backfill(repository, model),
    )


@pytest.fixture
def model() -> Iterator[SlowModel]:
    slow = SlowModel()
    yield slow
    slow.release.set()  # a failing test leaves no thread held


def post(base: str, token: str, content: str) -> httpx2.Response:
    with httpx2.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=WAIT) as http:
        return http.post("/memories", json={"content": content})


def ranking(base: str, token: str) -> dict[str, Any]:
    with httpx2.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=WAIT) as http:
        answer = http.get("/recall", params=QUESTION, headers={"Prefer": "no-stamp"})
    assert answer.status_code == 200, answer.text
    page: dict[str, Any] = answer.json()
    return page["ranking"]  # type: ignore[no-any-return]


def test_writes_the_model_holds_are_stored_without_waiting_for_it_and_embedded_in_the_background_once_it_answers(
    ddb_local_engine: Engine, model: SlowModel
) -> None:
    services = served(ddb_local_engine, model)
    _, alice = services.keys.create("alice")
    _, bob = services.keys.create("bob")
    server, thread, base = running(cli.serve_app(services, key_authenticator(services.keys)))
    assert services.backfill is not None
    stop_embedding = start_embedding(services.backfill, timedelta(milliseconds=50))
    try:
        with ThreadPoolExecutor(max_workers=SLOW_WRITES) as pool:
            slow = list(
                pool.map(lambda n: post(base, alice, f"The user slowly learns Korean, lesson {n}"), range(SLOW_WRITES))
            )
        other = post(base, bob, "The user learns the cello")
        answered_while_held = not model.finished_slow.is_set()
        waiting = ranking(base, alice)["unembedded"]

        model.release.set()
        wait_for(lambda: ranking(base, alice)["unembedded"] == 0, "alice's memories embedded in the background")
        wait_for(lambda: ranking(base, bob)["unembedded"] == 0, "bob's memory embedded")
        after = ranking(base, alice)
    finally:
        stop_embedding()
        server.should_exit = True
        thread.join(timeout=WAIT)

    assert [answer.status_code for answer in [*slow, other]] == [201] * (SLOW_WRITES + 1), [a.text for a in slow]
    assert answered_while_held  # bob's write, like alice's, did not wait for the model
    assert waiting == SLOW_WRITES
    assert after["semantic"] is True
