"""The HTTP function's entrypoint (template.yaml `Handler: handlers.aws.http.handler`): the HTTP door wired by
the composition root, served for API Gateway HTTP API (payload 2.0) events."""

from functools import lru_cache
from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from fastapi import FastAPI

from handlers import bootstrap
from handlers.aws.events import invoke
from handlers.concurrency import inline
from handlers.http.app import create_app, logger
from handlers.metrics import http_operation, request_line


@lru_cache(maxsize=1)
def wired(services: bootstrap.Services) -> FastAPI:
    """The HTTP door over `services`. Each invocation serves the one over bootstrap.default_services(): the same app
    for as long as the process lives (the services are built once), a new one only once they were replaced (tests
    swap them)."""
    # One request per execution environment: blocking calls run inline (handlers.concurrency).
    return create_app(
        services.memories,
        bootstrap.lambda_authenticator(),
        version=bootstrap.VERSION,
        run_blocking=inline,
        retention_days=bootstrap.settings_from_env().deleted_retention_days,
    )


# Built at import, in the init phase before the first request: the DynamoDB client and services, and the app over
# them, so the first request does not pay for them.
app = wired(bootstrap.default_services())


_metrics = bootstrap.lambda_metrics("http")


# log_event=False whatever POWERTOOLS_LOGGER_LOG_EVENT says: the event carries the caller's API key.
@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, log_event=False)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    started = _metrics.start()
    response: dict[str, Any] = {}
    try:
        response = invoke(wired(bootstrap.default_services()), event, context)
    finally:
        _metrics.finish(started, http_operation(*request_line(event)), response.get("statusCode", 500))
    return response
