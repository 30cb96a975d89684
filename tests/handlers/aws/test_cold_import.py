"""What a cold start imports, checked without timing anything (the timings are `make bench`'s): each handler module
builds its app at import and exposes `handler`, and loads neither the other door's framework nor what only a rare
path needs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from tests.conftest import EVENT_API_KEY, NAMESPACE, SERVE_ROOT

SRC = SERVE_ROOT / "src"
# Top-level packages a handler's import must not load: the other door's framework (its function does not ship it).
NOT_AT_IMPORT = {
    "handlers.aws.http": {"mcp", "mcp_types", "cryptography", "yaml", "werkzeug", "local"},
    "handlers.aws.mcp": {"fastapi", "yaml", "werkzeug", "local"},
}
# Modules the function ships (its packages' dependencies) that its import must not load, as scripts/bench/cold.py's
# DENY reports them: the MCP SDK's client side, and uvicorn, click and httpx(2), which only a server process of its
# own or an HTTP resource would use (handlers.aws.sdk); pydantic.v1, which FastAPI imports only to ask whether a
# model is one (handlers.http.pydantic_v1).
NOT_LOADED = {
    "handlers.aws.http": ("mcp", "uvicorn", "click", "httpx", "pydantic.v1"),
    "handlers.aws.mcp": ("mcp.client", "uvicorn", "click", "httpx"),
}
PROBE = """
import json, sys
import {module} as door
app = getattr(door, "app", None)
print(json.dumps({{
    "modules": sorted({{name.partition(".")[0] for name in sys.modules}}),
    "loaded": sorted(sys.modules),
    "handler": callable(door.handler),
    "openapi_built": getattr(app, "openapi_schema", None) is not None,
}}))
"""


def _cold_import(module: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "AWS_REGION": "us-east-1"}
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module)], capture_output=True, text=True, env=env, check=True
    )
    loaded: dict[str, Any] = json.loads(result.stdout.splitlines()[-1])
    return loaded


@pytest.mark.parametrize("module", sorted(NOT_AT_IMPORT))
def test_a_cold_import_builds_the_handler_without_the_other_doors_framework(module: str):
    loaded = _cold_import(module)
    assert loaded["handler"] is True
    assert not set(loaded["modules"]) & NOT_AT_IMPORT[module]


@pytest.mark.parametrize("module", sorted(NOT_LOADED))
def test_a_cold_import_loads_nothing_the_function_never_runs(module: str):
    loaded = _cold_import(module)["loaded"]
    assert [name for name in loaded if name.startswith(NOT_LOADED[module])] == []


# The MCP function's import left the SDK's client, uvicorn and httpx2 out (handlers.aws.sdk): the door its entrypoint
# builds still serves both protocol eras over in-memory services, nothing it serves loads them, and the SDK's client
# still imports after.
LEAN_MCP_PROBE = """
import json, sys
from core.access import SCOPES, ApiKey, hash_key, key_id_of
from core.grants import GrantService
from core.keys import KeyService
from core.memories import MemoryService
from adapters.memory.grants import InMemoryGrantRepository
from adapters.memory.keys import InMemoryKeyRepository
from adapters.memory.memories import InMemoryMemoryRepository
from handlers import bootstrap
key = {key!r}
store = InMemoryKeyRepository()
store.add(ApiKey(key_id_of(key), {namespace!r}, SCOPES, "2026-04-06T14:00:00.000000Z", None, False, hash_key(key)))
keys = KeyService(store)
grants = GrantService(InMemoryGrantRepository(store), keys)
services = bootstrap.Services(MemoryService(InMemoryMemoryRepository()), keys, grants)
import handlers.aws.mcp as entry
from handlers.bootstrap.mcp import lambda_handler
handler = entry.entrypoint(lambda_handler(services), services.settings)
class Context:
    aws_request_id = "probe"; function_name = "probe"; memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:probe"
    def get_remaining_time_in_millis(self): return 28000
statuses = {{}}
for name in {events!r}:
    with open("events/" + name) as file:
        statuses[name] = handler(json.load(file), Context())["statusCode"]
left_out = sorted(name for name in sys.modules if name.startswith(("mcp.client", "uvicorn", "httpx")))
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
print(json.dumps({{"statuses": statuses, "left_out_while_serving": left_out, "client": Client.__name__}}))
"""
LEAN_EVENTS = {
    "mcp_initialize.json": 200,
    "mcp_tools_list.json": 200,
    "mcp_tools_call_create.json": 200,
    "mcp_tools_call_search.json": 200,
    "mcp_server_discover_modern.json": 200,
    "mcp_tools_call_modern.json": 200,
    "mcp_tools_list_unauthenticated.json": 401,
}


def test_the_mcp_function_serves_both_eras_without_the_sdks_client_which_still_imports_after():
    probe = LEAN_MCP_PROBE.format(key=EVENT_API_KEY, namespace=NAMESPACE, events=sorted(LEAN_EVENTS))
    env = {**os.environ, "PYTHONPATH": str(SRC), "AWS_REGION": "us-east-1"}
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True, cwd=SERVE_ROOT
    )
    served = json.loads(result.stdout.splitlines()[-1])

    assert served["statuses"] == LEAN_EVENTS
    assert served["left_out_while_serving"] == []
    assert served["client"] == "Client"


def test_the_openapi_document_is_built_on_first_request_not_at_import():
    assert _cold_import("handlers.aws.http")["openapi_built"] is False


def test_the_mcp_function_loads_its_authorization_server_on_the_first_oauth_request_not_at_import():
    probe = (
        "import sys, json, handlers.aws.mcp; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('handlers.'))))"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC), "AWS_REGION": "us-east-1"}
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    loaded = set(json.loads(result.stdout.splitlines()[-1]))

    assert "handlers.oauth.server" in loaded  # the light part: issuer, paths, token check
    # (the SDK's own auth modules load with MCPServer anyway; what is ours to defer is the routes and the page)
    assert not loaded & {"handlers.oauth.provider", "handlers.oauth.guard", "handlers.oauth.consent"}
