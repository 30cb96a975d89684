"""The MCP function's entrypoint (template.yaml `Handler: handlers.aws.mcp.handler`): the MCP door wired by the
composition root, served for function URL (payload 2.0) events."""

from functools import lru_cache
from typing import Any

from aws_lambda_powertools.logging import correlation_paths

from handlers import bootstrap
from handlers.concurrency import inline
from handlers.mcp import create_server
from handlers.mcp.endpoint import LambdaHandler, create_handler, logger
from handlers.metrics import event_body, is_tool_error, mcp_operation
from handlers.oauth.server import OAuthServer

_settings = bootstrap.settings_from_env()


@lru_cache(maxsize=1)
def wired(services: bootstrap.Services) -> LambdaHandler:
    """The MCP door over `services`. Each invocation serves the one over bootstrap.default_services(): the same
    handler for as long as the process lives (the services are built once), a new one only once they were replaced
    (tests swap them)."""
    authenticate = bootstrap.lambda_authenticator()
    # One request per execution environment: blocking calls run inline (handlers.concurrency).
    server = create_server(services.memories, authenticate, version=bootstrap.VERSION, run_blocking=inline)
    # The door's authorization server, as the function URL's own origin unless OAUTH_ISSUER names a custom domain.
    oauth = (
        OAuthServer(services.grants, issuer=_settings.oauth_issuer, run_blocking=inline)
        if _settings.oauth_enabled
        else None
    )
    return create_handler(
        server, _settings.mcp_allowed_origins, authenticate=authenticate, run_blocking=inline, oauth=oauth
    )


# The DynamoDB client and services, and the door over them, are built at import, in the init phase, so the first
# request does not pay for them; the endpoint and its session manager start on the first invocation
# (handlers.mcp.endpoint.create_handler).
wired(bootstrap.default_services())
_metrics = bootstrap.lambda_metrics("mcp")


# log_event=False whatever POWERTOOLS_LOGGER_LOG_EVENT says: the event carries the caller's API key.
@logger.inject_lambda_context(correlation_id_path=correlation_paths.LAMBDA_FUNCTION_URL, log_event=False)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    started = _metrics.start()
    response: dict[str, Any] = {}
    try:
        response = wired(bootstrap.default_services())(event, context)
    finally:
        operation = mcp_operation(event_body(event))
        status = response.get("statusCode", 500)
        _metrics.finish(started, operation, status, tool_error=is_tool_error(event_body(response)))
    return response
