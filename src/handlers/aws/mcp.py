"""The MCP function's entrypoint (template.yaml `Handler: handlers.aws.mcp.handler`): the MCP door wired by the
composition root, served for function URL (payload 2.0) events."""

from typing import Any
from urllib.parse import urlsplit

from aws_lambda_powertools.logging import correlation_paths

# First of ours: the pydantic models made while the function imports are built on first use (handlers.aws.models),
# then the MCP SDK's server without what this function never runs (handlers.aws.sdk).
import handlers.aws.models
import handlers.aws.sdk
from handlers import bootstrap
from handlers.aws import snapstart
from handlers.bootstrap import Settings
from handlers.bootstrap.mcp import lambda_handler
from handlers.mcp.endpoint import LambdaHandler, logger
from handlers.metrics import OAUTH, OTHER, event_body, is_tool_error, mcp_operation, request_line
from handlers.oauth.paths import AUTHORIZATION_SERVER_METADATA, RESOURCE_PATH
from handlers.oauth.paths import PATHS as OAUTH_PATHS


def entrypoint(door: LambdaHandler, settings: Settings) -> snapstart.Handler:
    """The function's handler serving `door` (handlers.bootstrap.mcp.lambda_handler), emitting each request's metrics
    in the settings' namespace. Built once, at init (below); tests build their own over their own services."""
    metrics = bootstrap.lambda_metrics("mcp", settings)

    # log_event=False whatever POWERTOOLS_LOGGER_LOG_EVENT says: the event carries the caller's API key.
    @logger.inject_lambda_context(correlation_id_path=correlation_paths.LAMBDA_FUNCTION_URL, log_event=False)
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        started = metrics.start()
        response: dict[str, Any] = {}
        try:
            response = door(event, context)
        finally:
            operation = request_operation(event)
            status = response.get("statusCode", 500)
            metrics.finish(started, operation, status, tool_error=is_tool_error(event_body(response)))
        return response

    return handler


def request_operation(event: dict[str, Any]) -> str:
    """The operation of a request to the MCP function: its OAuth server's (one name for all its paths), /mcp's by the
    JSON-RPC message (handlers.metrics.mcp_operation), or OTHER for any other path."""
    path = urlsplit(request_line(event)[1]).path
    if path in OAUTH_PATHS:
        return OAUTH
    return mcp_operation(event_body(event)) if path == RESOURCE_PATH else OTHER


def _warm_up() -> list[int]:
    """Before a SnapStart snapshot: a preflight, which starts the endpoint and its session manager (the first
    invocation's work otherwise), the authorization server's metadata, which assembles the OAuth routes, and every
    model not built yet; the statuses answered (tests check them, the runtime ignores them)."""
    host = "snapshot.lambda-url.invalid"
    events = [
        snapstart.request("OPTIONS", RESOURCE_PATH, host),
        snapstart.request("GET", AUTHORIZATION_SERVER_METADATA, host),
    ]
    statuses = snapstart.serve(door, *events)
    handlers.aws.models.build_deferred()
    return statuses


# Built once, at import, in the init phase, from the environment (the composition root's one reading of it): the
# settings, the DynamoDB client and services, and the door over them, so the first request does not pay for them;
# the endpoint and its session manager start on the first invocation (handlers.mcp.endpoint.create_handler). Every
# invocation serves this door while the process lives.
services = bootstrap.from_environment()
door = lambda_handler(services)
handler = entrypoint(door, services.settings)
snapstart.register(services, _warm_up)
handlers.aws.models.resume_builds()
