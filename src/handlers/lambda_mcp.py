"""The MCP function's entrypoint (template.yaml `Handler: handlers.lambda_mcp.handler`): the MCP door wired by the
composition root, served for function URL (payload 2.0) events."""

from aws_lambda_powertools.logging import correlation_paths

from handlers import bootstrap
from handlers.concurrency import inline
from handlers.mcp_server import create_handler, logger
from handlers.mcp_tools import create_server

_authenticate = bootstrap.lambda_authenticator()
# One request per execution environment: blocking calls run inline (handlers.concurrency).
_server = create_server(
    provide_service=lambda: bootstrap.default_services().memories,
    authenticate=_authenticate,
    version=bootstrap.VERSION,
    run_blocking=inline,
)

# log_event=False whatever POWERTOOLS_LOGGER_LOG_EVENT says: the event carries the caller's API key.
handler = logger.inject_lambda_context(correlation_id_path=correlation_paths.LAMBDA_FUNCTION_URL, log_event=False)(
    create_handler(
        _server, bootstrap.settings_from_env().mcp_allowed_origins, authenticate=_authenticate, run_blocking=inline
    )
)
