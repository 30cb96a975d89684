"""Runs a Lambda entrypoint's SnapStart hooks the way the runtime does, in a process of its own (tests/handlers/aws/
test_snapstart.py runs it): the entrypoint is imported as Lambda imports it, building its services from the
environment (the composition root's one reading of it: test_snapstart.py names a table of its DynamoDB Local there),
the process is left as an init would leave it (a pooled DynamoDB connection, a key verified and cached, the models its
import deferred (handlers.aws.models) counted), the before-snapshot hooks run once in reverse order of registration
(what they left unbuilt listed), and two restored copies then start from that very memory (forked, with the `random`
state that fork re-seeds set back: the same module state, the same sockets), each running the after-restore hooks in
order (unless told not to) and writing what it issued and saw to OUT_DIR/copy-<n>.json.

As on Lambda, the kernel's generator (`secrets`, `os.urandom`) is the copies' own in both; everything in the
process's memory is shared unless the hooks renew it.

Usage: python -m tests.handlers.aws.restored_copies MODULE OUT_DIR [--without-restore-hooks]
"""

from __future__ import annotations

import importlib
import json
import logging
import multiprocessing
import random
import sys
import warnings
from pathlib import Path
from typing import Any, cast

import snapshot_restore_py as runtime  # type: ignore[import-untyped]  # one untyped module, no stubs published
from pydantic._internal._config import config_defaults

from adapters.dynamodb import DynamoDBKeyRepository, make_client
from core.errors import AuthenticationError
from handlers import bootstrap
from handlers.aws import models

CLIENT = "client-1"
REDIRECT = "http://127.0.0.1:53682/callback"
RESOURCE = "https://memory.example.com/mcp"
CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
METADATA = json.dumps({"client_name": "Test", "redirect_uris": [REDIRECT]})


class NewConnections(logging.Handler):
    """Counts the connections urllib3 opens (a pooled one is reused without a word)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.opened = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("Starting new HTTP connection"):
            self.opened += 1


def main(module: str, out: Path, restore_hooks: bool) -> None:
    # The entrypoint builds its services and door at import (bootstrap.from_environment); these are the ones it serves.
    services = cast("bootstrap.Services", importlib.import_module(module).services)
    keys, grants, client = services.keys, services.grants, services.client
    assert client is not None
    settings = services.settings
    deferred_models, deferred_adapters = models.deferred()
    snapshot: dict[str, Any] = {
        "deferred_at_init": {"models": len(deferred_models), "adapters": len(deferred_adapters)},
        "defer_build_after_init": config_defaults["defer_build"],
    }

    # What an init leaves behind: a pooled connection, a verified (cached) key, a registered client.
    client.list_tables()
    key, api_key = keys.create("alice")
    keys.authenticate(api_key)
    grants.register(CLIENT, METADATA, [REDIRECT], "203.0.113.7")
    snapshot["warm_up"] = [func(*args, **kwargs) for func, args, kwargs in reversed(runtime.get_before_snapshot())]
    snapshot["unbuilt_after_warm_up"] = [repr(unbuilt) for found in models.deferred() for unbuilt in found]
    # Revoked in the store behind the service's back, as another process's revoke would be (its own client).
    DynamoDBKeyRepository(make_client(settings.endpoint_url, settings.region), settings.table_name).revoke(key.key_id)

    connections = NewConnections()
    pool_log = logging.getLogger("urllib3.connectionpool")
    pool_log.addHandler(connections)
    pool_log.setLevel(logging.DEBUG)
    pool_log.propagate = False
    # fork() re-seeds `random` in the child (random's own at-fork hook); a restore re-seeds nothing, so each copy
    # gets the snapshot's state back.
    saved_random = random.getstate()
    warnings.simplefilter("ignore", DeprecationWarning)  # fork() with a thread alive: the copy runs alone
    fork = multiprocessing.get_context("fork")
    for number in (1, 2):
        copy = fork.Process(
            target=restored_copy,
            args=(out / f"copy-{number}.json", services, restore_hooks, connections, api_key, snapshot, saved_random),
        )
        copy.start()
        copy.join()
        if copy.exitcode != 0:
            sys.exit(f"restored copy {number} failed (exit code {copy.exitcode})")


def restored_copy(  # what the snapshot left, passed on as fork would
    out: Path,
    services: bootstrap.Services,
    restore_hooks: bool,
    connections: NewConnections,
    snapshot_key: str,
    snapshot: dict[str, Any],
    snapshot_random: Any,
) -> None:
    random.setstate(snapshot_random)
    if restore_hooks:
        for func, args, kwargs in runtime.get_after_restore():
            func(*args, **kwargs)
    jitter = [random.random() for _ in range(4)]  # what the retries' backoff draws
    key, api_key = services.keys.create("alice")
    code = services.grants.approve(
        client_id=CLIENT,
        redirect_uri=REDIRECT,
        code_challenge=CHALLENGE,
        resource=RESOURCE,
        scopes=("read",),
        namespace="alice",
        api_key=api_key,
    )
    grant = services.grants.pending_code(code, CLIENT)
    assert grant is not None
    tokens = services.grants.redeem(grant)
    assert services.client is not None
    services.client.list_tables()
    try:
        services.keys.authenticate(snapshot_key)
        revoked_key_trusted = True
    except AuthenticationError:
        revoked_key_trusted = False
    issued = {
        "key_id": key.key_id,
        "api_key": api_key,
        "grant_id": grant.grant_id,
        "code": code,
        "access_token": tokens.access_token,
        "refresh_token": tokens.refresh_token,
        "jitter": jitter,
        "new_connections": connections.opened,
        "revoked_key_trusted": revoked_key_trusted,
        **snapshot,
        "loaded": sorted(name for name in ("handlers.oauth.routes",) if name in sys.modules),
    }
    out.write_text(json.dumps(issued))


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]), "--without-restore-hooks" not in sys.argv[3:])
