"""API keys never reach the logs: both Lambda handlers, fed events from events/ over moto, with every logger at
DEBUG, through authenticated, refused and crashing requests; and the event (which carries the key) is never logged,
even when POWERTOOLS_LOGGER_LOG_EVENT asks for it."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from moto import mock_aws

from adapters.dynamodb import DynamoDBKeyRepository, ensure_table, make_client
from core.keys import KeyService
from core.memories import MemoryService
from handlers import bootstrap
from handlers.http import app as http_api
from handlers.mcp import endpoint as mcp_server
from local.template import table_definition
from tests.conftest import EVENT_API_KEY, SERVE_ROOT, LambdaFunctions, store_event_key
from tests.handlers.conftest import FUNCTION_URL_HOST, FunctionUrlBridge, LambdaWorker
from tests.handlers.oauth.test_doors import run_the_whole_flow

ROOT = SERVE_ROOT
EVENTS = ROOT / "events"
REGION = "us-east-1"
TABLE = "agent-memory-secrecy-test"
SECRET = EVENT_API_KEY.split("_", 2)[2]
CONTEXT = SimpleNamespace(
    function_name="agent-memory-fn",
    memory_limit_in_mb=512,
    invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:agent-memory-fn",
    aws_request_id="5d1f7a0e-2b3c-4d5e-8f90-a1b2c3d4e5f6",
)


def load_event(name: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((EVENTS / name).read_text(encoding="utf-8"))
    return event


def with_key(event: dict[str, Any], token: str) -> dict[str, Any]:
    event["headers"]["authorization"] = f"Bearer {token}"
    return event


@pytest.fixture
def logs(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> Iterator[Callable[[], str]]:
    """Every log line of the process at DEBUG: the standard loggers (boto, the MCP SDK, ...) and Powertools."""
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("TABLE_NAME", TABLE)
    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB", raising=False)
    caplog.set_level(logging.DEBUG)
    levels = {module: module.logger.log_level for module in (http_api, mcp_server)}
    for module in levels:
        # The Powertools handler bound sys.stdout at import, before capsys replaced it.
        monkeypatch.setattr(module.logger.registered_handler, "stream", sys.stdout)
        module.logger.setLevel("DEBUG")
    with mock_aws():
        client = make_client(None, REGION)
        ensure_table(client, TABLE, table_definition())
        store_event_key(DynamoDBKeyRepository(client, TABLE))
        yield lambda: caplog.text + "".join(capsys.readouterr())
    for module, level in levels.items():
        module.logger.setLevel(level)


@pytest.fixture
def deployed(logs: Callable[[], str]) -> LambdaFunctions:
    """The functions as their entrypoints build them at init from the environment `logs` gives."""
    return LambdaFunctions.over(bootstrap.from_environment())


def invoke_http(functions: LambdaFunctions, event: dict[str, Any]) -> int:
    status: int = functions.http(event, CONTEXT)["statusCode"]
    return status


def invoke_mcp(functions: LambdaFunctions, event: dict[str, Any]) -> int:
    status: int = functions.mcp(event, CONTEXT)["statusCode"]
    return status


def assert_no_key_in(text: str) -> None:
    assert text, "nothing was logged: the capture is not working"
    assert EVENT_API_KEY not in text
    assert SECRET not in text


def test_http_requests_that_pass_or_fail_authentication_log_no_key(
    deployed: LambdaFunctions, logs: Callable[[], str]
) -> None:
    forged = EVENT_API_KEY[: -len(SECRET)] + "F" * len(SECRET)
    statuses = [
        invoke_http(deployed, load_event("http_create.json")),
        invoke_http(deployed, load_event("http_get.json")),
        invoke_http(deployed, load_event("http_get_unauthenticated.json")),
        invoke_http(deployed, with_key(load_event("http_get.json"), forged)),
        invoke_http(deployed, with_key(load_event("http_get.json"), EVENT_API_KEY + "x")),
    ]

    assert statuses == [201, 200, 401, 401, 401]
    text = logs()
    assert_no_key_in(text)
    assert forged.split("_", 2)[2] not in text


def test_an_http_request_with_a_revoked_key_logs_no_key(deployed: LambdaFunctions, logs: Callable[[], str]) -> None:
    assert invoke_http(deployed, load_event("http_get_missing.json")) == 404
    KeyService(DynamoDBKeyRepository(make_client(None, REGION), TABLE)).revoke(EVENT_API_KEY.split("_")[1])
    deployed = LambdaFunctions.over(bootstrap.from_environment())  # a fresh process, past any cached verification

    assert invoke_http(deployed, load_event("http_get_missing.json")) == 401
    assert_no_key_in(logs())


def test_an_http_request_that_crashes_after_authentication_logs_its_traceback_but_no_key(
    deployed: LambdaFunctions, logs: Callable[[], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(MemoryService, "get", lambda *args, **kwargs: 1 / 0)

    assert invoke_http(deployed, load_event("http_get.json")) == 500
    text = logs()
    assert "ZeroDivisionError" in text
    assert_no_key_in(text)


def test_mcp_requests_that_pass_or_fail_authentication_log_no_key(
    deployed: LambdaFunctions, logs: Callable[[], str]
) -> None:
    statuses = [
        invoke_mcp(deployed, load_event("mcp_tools_call_create.json")),
        invoke_mcp(deployed, load_event("mcp_tools_call_search.json")),
        invoke_mcp(deployed, load_event("mcp_tools_list_unauthenticated.json")),
        invoke_mcp(deployed, with_key(load_event("mcp_tools_list.json"), EVENT_API_KEY[:-1] + "Z")),
    ]

    assert statuses == [200, 200, 401, 401]
    assert_no_key_in(logs())


# Run in a fresh interpreter: Powertools reads POWERTOOLS_LOGGER_LOG_EVENT when the handler is decorated, at import.
LOG_EVENT_SCRIPT = """
import json, sys
from types import SimpleNamespace
from moto import mock_aws

events, table = sys.argv[1], sys.argv[2]
context = SimpleNamespace(function_name="f", memory_limit_in_mb=512, aws_request_id="r",
                          invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:f")
with mock_aws():
    from adapters.dynamodb import DynamoDBKeyRepository, ensure_table, make_client
    from local.template import table_definition
    from tests.conftest import store_event_key
    client = make_client(None, "us-east-1")
    ensure_table(client, table, table_definition())
    store_event_key(DynamoDBKeyRepository(client, table))
    from aws_lambda_powertools import Logger
    from handlers.aws import http as lambda_http
    from handlers.aws import mcp as lambda_mcp

    control = Logger().inject_lambda_context(lambda event, context: {"statusCode": 200})
    control(json.load(open(f"{events}/http_get.json")), context)
    print("=== handlers ===", flush=True)
    for module, name in ((lambda_http, "http_get.json"), (lambda_mcp, "mcp_tools_list.json")):
        print(module.handler(json.load(open(f"{events}/{name}")), context)["statusCode"], flush=True)
"""


def test_the_handlers_never_log_the_event_even_when_powertools_is_told_to() -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
        "POWERTOOLS_LOGGER_LOG_EVENT": "true",
        "POWERTOOLS_LOG_LEVEL": "DEBUG",
        "AWS_REGION": REGION,
        "TABLE_NAME": TABLE,
    }
    env.pop("AWS_ENDPOINT_URL_DYNAMODB", None)

    completed = subprocess.run(
        [sys.executable, "-c", LOG_EVENT_SCRIPT, str(EVENTS), TABLE],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
        check=False,
    )

    assert completed.returncode == 0, completed.stderr[-3000:]
    control, _, handlers = completed.stdout.partition("=== handlers ===")
    assert EVENT_API_KEY in control, "the setting did not make Powertools log events: this test proves nothing"
    # Both keys were accepted: memory 1 does not exist (404), the tools were listed (200).
    assert [line for line in handlers.splitlines() if line.isdigit()] == ["404", "200"]
    for text in (handlers, completed.stderr):
        assert EVENT_API_KEY not in text
        assert SECRET not in text


def test_the_oauth_flow_through_the_mcp_function_logs_no_key_code_or_token(
    deployed: LambdaFunctions, logs: Callable[[], str]
) -> None:
    _, key = KeyService(DynamoDBKeyRepository(make_client(None, REGION), TABLE)).create("alice")
    worker = LambdaWorker()
    try:
        bridge = FunctionUrlBridge(deployed.mcp, worker)
        secrets = asyncio.run(run_the_whole_flow(f"https://{FUNCTION_URL_HOST}", key, "alice", bridge))
    finally:
        worker.close()

    text = logs()
    assert_no_key_in(text)
    assert len(secrets) == 8
    for secret in [key, *secrets]:
        assert secret not in text
        assert secret.split("_", 2)[2] not in text  # the 43-character secret, which may itself hold "_"
