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

from tests.conftest import SERVE_ROOT

SRC = SERVE_ROOT / "src"
# Top-level packages a handler's import must not load: the other door's framework (its function does not ship it).
NOT_AT_IMPORT = {
    "handlers.aws.http": {"mcp", "mcp_types", "cryptography", "yaml", "werkzeug", "local"},
    "handlers.aws.mcp": {"fastapi", "yaml", "werkzeug", "local"},
}
PROBE = """
import json, sys
import {module} as door
app = getattr(door, "app", None)
print(json.dumps({{
    "modules": sorted({{name.partition(".")[0] for name in sys.modules}}),
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
