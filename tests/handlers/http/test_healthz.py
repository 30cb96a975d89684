"""/healthz as the composition root wires it: 200 ok, 503 degraded (with the reason) while the process's storage
calls are failing, and 200 ok again once one succeeds. It never calls storage itself. Faults are injected in front of
moto through botocore's event hooks."""

from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Any

import botocore.endpoint
import pytest
from botocore.awsrequest import AWSResponse
from fastapi.testclient import TestClient

from handlers import bootstrap
from handlers.auth import open_access
from handlers.bootstrap.http import http_app
from handlers.concurrency import inline
from tests.conftest import Engine
from tests.faults import error_answer


class Throttling:
    """While `on`, every DynamoDB call is throttled before moto sees it; `calls` counts the calls that reach storage."""

    def __init__(self, client: Any) -> None:
        self.on = False
        self.calls = 0
        client.meta.events.register_first("before-send.dynamodb", self._send)

    def _send(self, request: Any, **_: Any) -> AWSResponse | None:
        self.calls += 1
        if not self.on:
            return None
        return error_answer(request, "ThrottlingException")


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore's backoffs between attempts, not slept: these tests hold what is answered, not seconds."""
    monkeypatch.setattr(botocore.endpoint, "time", types.SimpleNamespace(sleep=lambda seconds: None))


@pytest.fixture
def wired(moto_engine: Engine, moto_table: str) -> Iterator[tuple[TestClient, Throttling]]:
    throttling = Throttling(moto_engine.client)
    services = bootstrap.build_services(bootstrap.Settings(table_name=moto_table), moto_engine.client)
    app = http_app(services, services.settings, authenticate=open_access(), run_blocking=inline)
    with TestClient(app) as client:
        yield client, throttling


def test_healthz_says_degraded_while_storage_calls_fail_and_ok_once_one_succeeds(
    wired: tuple[TestClient, Throttling],
) -> None:
    http, throttling = wired
    healthy = http.get("/healthz")
    throttling.on = True
    failed = http.get("/memories")
    degraded = http.get("/healthz")
    throttling.on = False
    recovered = http.get("/memories")

    assert (healthy.status_code, healthy.json()) == (200, {"status": "ok"})
    assert failed.status_code == 503
    assert degraded.status_code == 503
    assert degraded.json()["status"] == "degraded"
    assert "(ThrottlingException); none has succeeded since" in degraded.json()["reason"]
    assert recovered.status_code == 200
    assert (http.get("/healthz").status_code, http.get("/healthz").json()) == (200, {"status": "ok"})


def test_healthz_never_calls_storage(wired: tuple[TestClient, Throttling]) -> None:
    http, throttling = wired

    for _ in range(3):
        http.get("/healthz")

    assert throttling.calls == 0
