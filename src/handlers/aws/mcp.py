"""The MCP function's entrypoint (template.yaml `Handler: handlers.aws.mcp.handler`): the MCP door wired by the
composition root, served for function URL (payload 2.0) events."""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths

from handlers import bootstrap
from handlers.concurrency import inline
from handlers.mcp.endpoint import create_handler, logger
from handlers.mcp.tools import create_server
from handlers.metrics import event_body, is_tool_error, mcp_operation
from handlers.oauth.server import OAuthServer

# The DynamoDB client and services are built at import, in the init phase, so the first request does not pay for
# them; the endpoint and its session manager start on the first invocation (handlers.mcp.endpoint.create_handler).
bootstrap.default_services()
_authenticate = bootstrap.lambda_authenticator()
# One request per execution environment: blocking calls run inline (handlers.concurrency).
_server = create_server(
    provide_service=lambda: bootstrap.default_services().memories,
    authenticate=_authenticate,
    version=bootstrap.VERSION,
    run_blocking=inline,
)

_settings = bootstrap.settings_from_env()
# The door's authorization server, as the function URL's own origin unless OAUTH_ISSUER names a custom domain.
_oauth = (
    OAuthServer(lambda: bootstrap.default_services().grants, issuer=_settings.oauth_issuer, run_blocking=inline)
    if _settings.oauth_enabled
    else None
)
_serve = create_handler(
    _server, _settings.mcp_allowed_origins, authenticate=_authenticate, run_blocking=inline, oauth=_oauth
)
_metrics = bootstrap.lambda_metrics("mcp")


# log_event=False whatever POWERTOOLS_LOGGER_LOG_EVENT says: the event carries the caller's API key.
@logger.inject_lambda_context(correlation_id_path=correlation_paths.LAMBDA_FUNCTION_URL, log_event=False)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    started = _metrics.start()
    response: dict[str, Any] = {}
    try:
        response = _serve(event, context)
    finally:
        operation = mcp_operation(event_body(event))
        status = response.get("statusCode", 500)
        _metrics.finish(started, operation, status, tool_error=is_tool_error(event_body(response)))
    return response
