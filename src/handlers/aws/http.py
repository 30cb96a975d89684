"""The HTTP function's entrypoint (template.yaml `Handler: handlers.aws.http.handler`): the HTTP door wired by
the composition root, served for API Gateway HTTP API (payload 2.0) events."""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths

# First of ours: the pydantic models made while the function imports are built on first use (handlers.aws.models).
import handlers.aws.models
from handlers import bootstrap
from handlers.aws import snapstart
from handlers.aws.events import invoke
from handlers.bootstrap.http import lambda_app
from handlers.http.app import logger
from handlers.metrics import http_operation, request_line

# Built at import, in the init phase before the first request: the settings, the DynamoDB client and services, and
# the app over them, so the first request does not pay for them. Each invocation serves the app over
# bootstrap.default_services(): this one while the process lives (tests swap the services for their own).
app = lambda_app(bootstrap.default_services())
_metrics = bootstrap.lambda_metrics("http", bootstrap.default_services().settings)


def _warm_up() -> list[int]:
    """Before a SnapStart snapshot: the OpenAPI document (built on its first request otherwise), one request through
    Mangum, the app and its middleware, and every model not built yet; the statuses answered (tests check them, the
    runtime ignores them)."""
    app.openapi()
    healthz = snapstart.request("GET", "/healthz", "snapshot.execute-api.invalid")
    statuses = snapstart.serve(lambda event, context: invoke(app, event, context), healthz)
    handlers.aws.models.build_deferred()
    return statuses


snapstart.register(bootstrap.default_services(), _warm_up)
handlers.aws.models.resume_builds()


# log_event=False whatever POWERTOOLS_LOGGER_LOG_EVENT says: the event carries the caller's API key.
@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, log_event=False)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    started = _metrics.start()
    response: dict[str, Any] = {}
    try:
        response = invoke(lambda_app(bootstrap.default_services()), event, context)
    finally:
        _metrics.finish(started, http_operation(*request_line(event)), response.get("statusCode", 500))
    return response
