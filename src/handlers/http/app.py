"""The HTTP door assembled: the FastAPI application over the core's services, its routers by resource
(handlers.http.memories, handlers.http.lifecycle, handlers.http.recall), the system routes (/healthz, the console),
its error answers (handlers.http.errors) and its OpenAPI document. handlers.aws.http serves it on Lambda, `serve`
locally."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from core.health import StorageHealth
from core.history import DEFAULT_RETENTION_DAYS
from core.memories import MemoryService
from handlers.auth import Authenticator
from handlers.concurrency import RunBlocking, WithinRequestBudget, inline
from handlers.console import console_router
from handlers.door import Door
from handlers.http.dependencies import install
from handlers.http.errors import EXCEPTION_HANDLERS
from handlers.http.errors import logger as logger  # the door's logger: the Lambda entrypoint injects its context
from handlers.http.key import router as key_routes
from handlers.http.keys import router as keys_routes
from handlers.http.lifecycle import router as lifecycle_routes
from handlers.http.memories import router as memory_routes
from handlers.http.openapi import COMMON_RESPONSES, document_schemas
from handlers.http.recall import router as recall_routes

if TYPE_CHECKING:
    from core.keys import KeyService
    from core.recall.service import RecallService


def health_answer(health: StorageHealth) -> tuple[int, bytes]:
    """/healthz's status and JSON body: ok, or 503 degraded with the reason while the process's storage calls are
    failing: read from what those calls found (core.health), never by a storage call of its own. `serve` answers
    its probes with it before they reach the app (local.listener)."""
    degraded = health.degraded()
    if degraded is None:
        return 200, bytes(JSONResponse({"status": "ok"}).body)
    return 503, bytes(JSONResponse({"status": "degraded", "reason": degraded.reason}).body)


async def healthz(request: Request) -> Response:
    status, body = health_answer(request.app.state.storage_health)
    return Response(body, status_code=status, media_type="application/json")


def create_app(
    memories: MemoryService,
    authenticate: Authenticator,
    *,
    version: str,
    run_blocking: RunBlocking = inline,
    retention_days: int = DEFAULT_RETENTION_DAYS,
    recall: RecallService | None = None,
    health: StorageHealth | None = None,
    keys: KeyService | None = None,
) -> FastAPI:
    """The HTTP API over `memories` and `recall`, authenticating each request with `authenticate`; the composition
    root (handlers.bootstrap) assembles them, tests pass their own (without `recall`, GET /recall is a 500: a door
    wired for tests of other routes).

    Every blocking service and key call goes through `run_blocking`, the entrypoint's concurrency policy
    (handlers.concurrency). Deleted memories stay restorable for `retention_days` (the console says so). /healthz
    reports `health`, how the services' storage calls have been ending (without it: always ok). GET /keys lists
    and DELETE /keys/{key_id} revokes through `keys` (without it: no keys to list, as on an open server).
    """
    app = FastAPI(
        title="agent-memory",
        version=version,
        description="Memory for AI agents: store facts, preferences, identity and events; find them predictably.",
        responses=COMMON_RESPONSES,
        exception_handlers=EXCEPTION_HANDLERS,
        # Only the document: Swagger UI and ReDoc load their assets from a public CDN (blank offline), and serving
        # them locally would not fit the HTTP function's artifact budget. Any OpenAPI viewer reads /openapi.json.
        docs_url=None,
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
        # A path with a stray slash is a 404 problem: Starlette's redirect would build its Location from the Host
        # header the client sent, an open redirect to any host.
        redirect_slashes=False,
    )
    app.add_middleware(WithinRequestBudget)
    install(app, Door(memories, authenticate, run_blocking, recall, keys))
    app.state.storage_health = health or StorageHealth()
    app.add_api_route("/healthz", healthz, include_in_schema=False)
    app.include_router(console_router(retention_days))
    app.include_router(memory_routes)
    app.include_router(lifecycle_routes)
    app.include_router(key_routes)
    app.include_router(keys_routes)
    app.include_router(recall_routes)
    document_schemas(app)
    return app
