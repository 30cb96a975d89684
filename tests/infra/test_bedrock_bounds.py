"""The Bedrock runtime client the deployed code builds (handlers.bootstrap.bedrock_embedder) keeps its retries and
timeouts bounded, as the DynamoDB client's are (tests/infra/test_template.py), and a write, which embeds its memory
before it stores it, fits inside the doors' function timeout: the embedding and the storage calls share the request's
one budget (core.budget; tests/core/test_storage_budget.py shows the adapters keep to it, and
tests/handlers/test_request_budget.py that both doors open it around every request)."""

from __future__ import annotations

import io
import json
import time
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse

from adapters.bedrock import (
    ATTEMPTS,
    CALL_SECONDS,
    CONNECT_TIMEOUT_SECONDS,
    READ_TIMEOUT_SECONDS,
    make_bedrock_client,
)
from core.budget import REQUEST_STORAGE_SECONDS
from core.recall.embedding import EmbedderUnavailableError
from core.recall.guard import EMBEDDING_WAIT_SECONDS
from handlers import bootstrap
from local.template import load_template

DOORS = ("HttpFunction", "McpFunction")


# boto3's retry guide: standard mode backs off exponentially "by a base factor of 2 for a maximum backoff time of 20
# seconds", from 1 s for throttling errors (its largest base scale), with jitter below that bound.
def _documented_backoff_bound_s(retry: int) -> float:
    return float(min(2**retry, 20))


def _worst_case_s(attempts: int, connect_timeout: float, read_timeout: float) -> float:
    """Every attempt waiting out its connect and read timeouts, and every backoff between them at its bound."""
    backoff = sum(_documented_backoff_bound_s(retry) for retry in range(attempts - 1))
    return attempts * (connect_timeout + read_timeout) + backoff


BEDROCK_WORST_CASE_S = _worst_case_s(ATTEMPTS, CONNECT_TIMEOUT_SECONDS, READ_TIMEOUT_SECONDS)


class _Throttled:
    """Answers every InvokeModel with Bedrock's throttling error before it leaves the client, counting the attempts."""

    def __init__(self) -> None:
        self.attempts = 0

    def __call__(self, request: Any, **_: Any) -> AWSResponse:
        self.attempts += 1
        raw = io.BytesIO(json.dumps({"message": "Too many requests, please wait before trying again."}).encode())
        raw.stream = lambda **_: iter([raw.getvalue()])  # type: ignore[attr-defined]
        return AWSResponse(request.url, 429, {"x-amzn-ErrorType": "ThrottlingException"}, raw)  # type: ignore[arg-type]


def _door_timeouts() -> dict[str, float]:
    template = load_template()
    default = template["Globals"]["Function"]["Timeout"]
    return {name: template["Resources"][name]["Properties"].get("Timeout", default) for name in DOORS}


def test_the_deployed_bedrock_client_makes_two_attempts_of_1_s_connect_and_3_s_read_9_s_at_worst(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    made: list[Any] = []
    throttled = _Throttled()

    def make(region: str) -> Any:
        client = make_bedrock_client(region)
        client.meta.events.register_first("before-send.bedrock-runtime.InvokeModel", throttled)  # type: ignore[arg-type]
        made.append(client)
        return client

    sleeps: list[float] = []
    monkeypatch.setattr(time, "sleep", sleeps.append)  # the one botocore.endpoint sleeps with
    embedder = bootstrap.bedrock_embedder(bootstrap.Settings(region="eu-west-1"), make_client=make)

    for draw in range(10):  # the backoff is jittered: every draw must stay within the documented bound
        sleeps.clear()
        with pytest.raises(EmbedderUnavailableError, match="ThrottlingException"):
            embedder.embed(["The user is vegetarian."], "passage")
        assert throttled.attempts == ATTEMPTS * (draw + 1)
        assert len(sleeps) == ATTEMPTS - 1
        assert all(0 <= slept <= _documented_backoff_bound_s(i) for i, slept in enumerate(sleeps)), sleeps

    (client,) = made  # one client per process, made on the first embedding
    config: Any = client.meta.config  # botocore-stubs declare no option attributes on Config
    assert config.region_name == "eu-west-1"
    assert config.retries == {"mode": "standard", "total_max_attempts": 2}
    assert (config.connect_timeout, config.read_timeout) == (1, 3)
    assert _worst_case_s(config.retries["total_max_attempts"], config.connect_timeout, config.read_timeout) == 9
    assert BEDROCK_WORST_CASE_S == 9


def test_an_embedding_alone_ends_before_the_doors_time_out() -> None:
    for name, timeout in _door_timeouts().items():
        assert timeout > BEDROCK_WORST_CASE_S, name


def test_a_write_that_embeds_ends_before_the_doors_time_out() -> None:
    # A write embeds its memory first (core.recall.indexing, on the request path), then stores it: one after the
    # other they could take 9 s + 24 s, but both keep within the request's budget, which ends before the timeout.
    for name, timeout in _door_timeouts().items():
        assert timeout > REQUEST_STORAGE_SECONDS, name
    assert BEDROCK_WORST_CASE_S < REQUEST_STORAGE_SECONDS


def test_a_calls_deadline_leaves_its_attempts_their_worst_case_and_ends_inside_the_budget() -> None:
    # The deadline cuts an answer trickled past it, never one botocore's own bounds let finish; a request waits for
    # an embedding far less than either, so a slow model leaves the storage calls nearly all of the budget.
    assert BEDROCK_WORST_CASE_S <= CALL_SECONDS < REQUEST_STORAGE_SECONDS
    assert EMBEDDING_WAIT_SECONDS < CALL_SECONDS
