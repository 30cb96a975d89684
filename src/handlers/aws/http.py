"""The HTTP function's entrypoint (template.yaml `Handler: handlers.aws.http.handler`): the HTTP door wired by
the composition root, served for API Gateway HTTP API (payload 2.0) events."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.logging import correlation_paths

# First of ours: the pydantic models made while the function imports are built on first use (handlers.aws.models).
import handlers.aws.models
from handlers import bootstrap
from handlers.aws import snapstart
from handlers.aws.events import invoke
from handlers.bootstrap import Settings
from handlers.bootstrap.http import lambda_app
from handlers.http.app import logger
from handlers.metrics import http_operation, request_line

if TYPE_CHECKING:
    from fastapi import FastAPI


def entrypoint(app: FastAPI, settings: Settings) -> snapstart.Handler:
    """The function's handler serving `app` (handlers.bootstrap.http.lambda_app), emitting each request's metrics
    in the settings' namespace. Built once, at init (below); tests build their own over their own services."""
    metrics = bootstrap.lambda_metrics("http", settings)

    # log_event=False whatever POWERTOOLS_LOGGER_LOG_EVENT says: the event carries the caller's API key.
    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, log_event=False)
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        started = metrics.start()
        response: dict[str, Any] = {}
        try:
            response = invoke(app, event, context)
        finally:
            metrics.finish(started, http_operation(*request_line(event)), response.get("statusCode", 500))
        return response

    return handler


def _warm_up() -> list[int]:
    """Before a SnapStart snapshot: the OpenAPI document (built on its first request otherwise), one request through
    Mangum, the app and its middleware, and every model not built yet; the statuses answered (tests check them, the
    runtime ignores them)."""
    app.openapi()
    healthz = snapstart.request("GET", "/healthz", "snapshot.execute-api.invalid")
    statuses = snapstart.serve(lambda event, context: invoke(app, event, context), healthz)
    handlers.aws.models.build_deferred()
    return statuses


# Built once, at import, in the init phase before the first request, from the environment (the composition root's
# one reading of it): the settings, the DynamoDB client and services, and the app over them, so the first request
# does not pay for them; every invocation serves this app while the process lives.
services = bootstrap.from_environment()
app = lambda_app(services)
handler = entrypoint(app, services.settings)
snapstart.register(services, _warm_up)
handlers.aws.models.resume_builds()
