"""One storage budget per request (core.budget): the DynamoDB adapter sends no attempt that could outlast it, and the
budget reaches the worker threads `serve` runs storage calls in."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import core.budget
from core.budget import REQUEST_STORAGE_SECONDS, seconds_left, storage_budget
from core.errors import StorageUnavailableError
from core.repository.dynamodb import DynamoDBKeyRepository
from handlers.concurrency import in_worker_thread
from tests.conftest import Engine

# make_client's defaults: one attempt waits at most its 2 s connect and 5 s read timeouts.
ATTEMPT_SECONDS = 2 + 5


class SentAttempts:
    """Counts the attempts botocore actually sends (after every check before sending)."""

    def __init__(self, client: Any) -> None:
        self.count = 0
        client.meta.events.register_last("before-send.dynamodb", self._sent)

    def _sent(self, **_: Any) -> None:
        self.count += 1


@pytest.fixture
def now(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    clock = [1000.0]
    monkeypatch.setattr(core.budget, "clock", lambda: clock[0])
    return clock


@pytest.mark.parametrize(("left", "sent"), [(ATTEMPT_SECONDS, 1), (ATTEMPT_SECONDS - 0.1, 0)])
def test_an_attempt_is_sent_only_while_its_worst_case_fits_in_what_is_left_of_the_budget(
    moto_engine: Engine, now: list[float], left: float, sent: int
) -> None:
    keys = DynamoDBKeyRepository(moto_engine.client, moto_engine.new_table())
    attempts = SentAttempts(moto_engine.client)

    with storage_budget(left):
        if sent:
            assert keys.get("0123456789ab") is None
        else:
            with pytest.raises(StorageUnavailableError, match="too slowly"):
                keys.get("0123456789ab")

    assert attempts.count == sent


def test_outside_any_budget_nothing_is_refused(moto_engine: Engine, now: list[float]) -> None:
    keys = DynamoDBKeyRepository(moto_engine.client, moto_engine.new_table())

    assert seconds_left() is None
    assert keys.get("0123456789ab") is None


def test_the_budget_reaches_the_worker_threads_serve_runs_storage_calls_in(now: list[float]) -> None:
    async def left_in_a_worker() -> float | None:
        with storage_budget():
            now[0] += 1
            return await in_worker_thread(seconds_left)

    assert anyio.run(left_in_a_worker) == REQUEST_STORAGE_SECONDS - 1
