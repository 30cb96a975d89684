"""Runs a Lambda entrypoint's SnapStart hooks the way the runtime does, in a process of its own (tests/handlers/aws/
test_snapstart.py runs it): the entrypoint is imported over services it is handed, the process is left as an init
would leave it (a pooled DynamoDB connection, a key verified and cached, the models its import deferred
(handlers.aws.models) counted), the before-snapshot hooks run once in reverse order of registration (what they left
unbuilt listed), and two restored copies then start from that very memory (forked, with the
`random` state that fork re-seeds set back: the same module state, the same sockets), each running the after-restore
hooks in order (unless told not to) and writing what it issued and saw to OUT_DIR/copy-<n>.json.

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
import threading
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import snapshot_restore_py as runtime  # type: ignore[import-untyped]  # one untyped module, no stubs published
from pydantic._internal._config import config_defaults

from adapters.dynamodb import make_client
from adapters.memory.grants import InMemoryGrantRepository
from adapters.memory.keys import InMemoryKeyRepository
from adapters.memory.memories import InMemoryMemoryRepository
from core.errors import AuthenticationError
from core.grants import GrantService
from core.keys import KeyService
from core.memories import MemoryService
from handlers import bootstrap
from handlers.aws import models

CLIENT = "client-1"
REDIRECT = "http://127.0.0.1:53682/callback"
RESOURCE = "https://memory.example.com/mcp"
CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
METADATA = json.dumps({"client_name": "Test", "redirect_uris": [REDIRECT]})


class EmptyAnswers(BaseHTTPRequestHandler):
    """A stand-in DynamoDB on loopback that answers `{}` to everything, keeping connections alive."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        self.send_response(200)
        self.send_header("content-type", "application/x-amz-json-1.0")
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, format: str, *args: Any) -> None:  # the base class names it so
        return


class NewConnections(logging.Handler):
    """Counts the connections urllib3 opens (a pooled one is reused without a word)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.opened = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("Starting new HTTP connection"):
            self.opened += 1


def main(module: str, out: Path, restore_hooks: bool) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), EmptyAnswers)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    key_store = InMemoryKeyRepository()
    keys = KeyService(key_store)
    grants = GrantService(InMemoryGrantRepository(key_store), keys)
    client = make_client(f"http://127.0.0.1:{server.server_address[1]}", "us-east-1")
    services = bootstrap.Services(MemoryService(InMemoryMemoryRepository()), keys, grants, client=client)
    # The entrypoint builds its door over what the root gives at import (still a patch: see
    # tests/infra/test_injected_wiring.py's STILL_PATCHED).
    setattr(bootstrap, "from_environment", lambda **_: services)  # noqa: B010  # the entrypoint calls it at import
    importlib.import_module(module)
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
    # Revoked in the store behind the service's back, as another process's revoke would be.
    key_store.revoke(key.key_id)

    connections = NewConnections()
    pool_log = logging.getLogger("urllib3.connectionpool")
    pool_log.addHandler(connections)
    pool_log.setLevel(logging.DEBUG)
    pool_log.propagate = False
    # fork() re-seeds `random` in the child (random's own at-fork hook); a restore re-seeds nothing, so each copy
    # gets the snapshot's state back.
    saved_random = random.getstate()
    warnings.simplefilter("ignore", DeprecationWarning)  # fork() with the stand-in's thread alive: the copy runs alone
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
