"""SnapStart's runtime hooks for the two door functions (template.yaml parameter `SnapStart`).

Before Lambda snapshots a published version, the door serves requests that need no storage, so what the first real
request would build (the endpoint and its session manager, the OpenAPI document, the OAuth routes, the framework's
lazily made parts) is built into the snapshot. After each restore, the copy is made its own
(handlers.bootstrap.snapshot). The hooks register with the runtime's `snapshot_restore_py` (every Python managed
runtime ships it; it runs the before-snapshot hooks in reverse order of registration, the after-restore ones in
order); where it is not installed nothing is ever snapshotted, and registering does nothing."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, Final

from handlers.bootstrap import Services
from handlers.bootstrap.snapshot import restored

Hook = Callable[[], object]
Handler = Callable[[dict[str, Any], Any], dict[str, Any]]

# What the warm-up requests are given for a Lambda context: nothing reads more than the request id.
_CONTEXT: Final = SimpleNamespace(aws_request_id="snapshot", function_name="snapshot", memory_limit_in_mb=1024)


def _registrars() -> tuple[Callable[[Hook], object], Callable[[Hook], object]]:
    try:
        runtime = importlib.import_module("snapshot_restore_py")
    except ModuleNotFoundError:
        return _never_called, _never_called
    return runtime.register_before_snapshot, runtime.register_after_restore


def _never_called(hook: Hook) -> Hook:
    return hook


def register(services: Services, warm_up: Hook) -> None:
    """Run `warm_up` before the snapshot and make each restored copy of `services` its own after restore."""
    before_snapshot, after_restore = _registrars()
    before_snapshot(warm_up)
    after_restore(lambda: restored(services))


def request(method: str, path: str, host: str) -> dict[str, Any]:
    """A payload 2.0 event of a request with no body and no credentials (the warm-up's)."""
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {"host": host, "x-forwarded-proto": "https", "x-forwarded-port": "443"},
        "requestContext": {
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1"},
            "requestId": "snapshot",
            "stage": "$default",
        },
        "isBase64Encoded": False,
    }


def serve(handler: Handler, *events: dict[str, Any]) -> list[int]:
    """Serve `events` to `handler`, as the warm-up does; their statuses."""
    return [handler(event, _CONTEXT).get("statusCode", 500) for event in events]
