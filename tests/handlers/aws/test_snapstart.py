"""SnapStart's runtime hooks, run the way the runtime runs them (tests/handlers/aws/restored_copies.py): once before
the snapshot, then in two copies restored from it. The copies must issue different secrets and ids, draw different
randomness, open their own connections and trust nothing verified before the snapshot; without the after-restore
hooks the same copies share the snapshot's randomness, connection and cache, which is what fails these tests."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from adapters.dynamodb import make_client
from tests.conftest import REGION, SERVE_ROOT, Engine

ENTRYPOINTS = ["handlers.aws.http", "handlers.aws.mcp"]
ISSUED = ("key_id", "api_key", "grant_id", "code", "access_token", "refresh_token")
# What each function's warm-up answers: /healthz; the MCP preflight and the authorization server's metadata.
WARM_UP = {"handlers.aws.http": [[200]], "handlers.aws.mcp": [[204, 200]]}


Copies = Callable[..., list[dict[str, Any]]]


@pytest.fixture(scope="module")
def restored_copies(tmp_path_factory: pytest.TempPathFactory, dynamodb_local_endpoint: str) -> Copies:
    """What the two copies of `module` restored from one snapshot issued and saw (one run per module and setting),
    each run over a table of its own in DynamoDB Local, named in the environment the entrypoint reads."""
    engine = Engine("dynamodb-local", make_client(dynamodb_local_endpoint, REGION))

    @functools.cache
    def run(module: str, *, restore_hooks: bool) -> list[dict[str, Any]]:
        out = tmp_path_factory.mktemp("copies")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SERVE_ROOT / "src"), str(SERVE_ROOT)])}
        env["AWS_REGION"] = REGION
        env["AWS_ENDPOINT_URL_DYNAMODB"] = dynamodb_local_endpoint
        env["TABLE_NAME"] = engine.new_table()
        flags = [] if restore_hooks else ["--without-restore-hooks"]
        command = [sys.executable, "-m", "tests.handlers.aws.restored_copies", module, str(out), *flags]
        subprocess.run(command, env=env, cwd=SERVE_ROOT, check=True, timeout=120, capture_output=True)
        return [json.loads((out / f"copy-{number}.json").read_text()) for number in (1, 2)]

    return run


@pytest.mark.parametrize("module", ENTRYPOINTS)
def test_two_copies_restored_from_one_snapshot_issue_different_secrets_ids_and_randomness(
    module: str, restored_copies: Copies
):
    first, second = restored_copies(module, restore_hooks=True)

    for issued in ISSUED:
        assert first[issued] != second[issued], issued
    assert first["jitter"] != second["jitter"]


@pytest.mark.parametrize("module", ENTRYPOINTS)
def test_a_restored_copy_opens_its_own_connection_and_trusts_no_key_verified_before_the_snapshot(
    module: str, restored_copies: Copies
):
    for restored in restored_copies(module, restore_hooks=True):
        assert restored["new_connections"] == 1
        assert restored["revoked_key_trusted"] is False


@pytest.mark.parametrize("module", ENTRYPOINTS)
def test_without_the_after_restore_hooks_the_copies_share_the_snapshots_randomness_connection_and_cache(
    module: str, restored_copies: Copies
):
    first, second = restored_copies(module, restore_hooks=False)

    assert first["jitter"] == second["jitter"]
    assert first["new_connections"] == second["new_connections"] == 0
    assert first["revoked_key_trusted"] is second["revoked_key_trusted"] is True


@pytest.mark.parametrize("module", ENTRYPOINTS)
def test_the_warm_up_before_the_snapshot_answers_without_storage(module: str, restored_copies: Copies):
    restored = restored_copies(module, restore_hooks=True)[0]

    assert restored["warm_up"] == WARM_UP[module]
    if module == "handlers.aws.mcp":
        assert restored["loaded"] == ["handlers.oauth.routes"]  # assembled into the snapshot, not on a request


# The models (and the SDK's type adapters) the import left to build on first use (handlers.aws.models): at least
# FastAPI's OpenAPI models; the MCP SDK's types of both protocol eras and its adapters over their unions.
DEFERRED_AT_INIT = {"handlers.aws.http": (20, 0), "handlers.aws.mcp": (300, 1)}


@pytest.mark.parametrize("module", ENTRYPOINTS)
def test_the_models_the_import_deferred_are_all_built_before_the_snapshot(module: str, restored_copies: Copies):
    restored = restored_copies(module, restore_hooks=True)[0]
    models, adapters = DEFERRED_AT_INIT[module]

    assert restored["deferred_at_init"]["models"] > models
    assert restored["deferred_at_init"]["adapters"] >= adapters
    assert restored["defer_build_after_init"] is False  # pydantic's default again once the function is imported
    assert restored["unbuilt_after_warm_up"] == []


def test_outside_the_lambda_runtime_the_entrypoints_import_and_register_nothing():
    # Without snapshot_restore_py (serve, the bench's environments) registering is a no-op, never an import error.
    probe = (
        "import sys; sys.modules['snapshot_restore_py'] = None\n"
        "import handlers.aws.http, handlers.aws.mcp\n"
        "print(callable(handlers.aws.http.handler) and callable(handlers.aws.mcp.handler))"
    )
    env = {**os.environ, "PYTHONPATH": str(SERVE_ROOT / "src"), "AWS_REGION": "us-east-1"}
    result = subprocess.run(
        [sys.executable, "-c", probe], env=env, cwd=SERVE_ROOT, check=True, capture_output=True, text=True
    )
    assert result.stdout.strip().splitlines()[-1] == "True"
