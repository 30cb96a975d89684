"""The MCP door wired: the server and its tools, the guarded endpoint and the OAuth authorization server it hosts,
over the services, for the MCP function and for `serve`."""

from __future__ import annotations

from mcp.server import MCPServer

from handlers.auth import Authenticator, key_authenticator
from handlers.bootstrap import VERSION, Services, Settings
from handlers.concurrency import RunBlocking, inline
from handlers.door import Door
from handlers.mcp import MCPEndpoint, create_endpoint, create_server
from handlers.mcp.endpoint import LambdaHandler, create_handler
from handlers.oauth import OAuthServer


def mcp_server(services: Services, *, authenticate: Authenticator, run_blocking: RunBlocking) -> MCPServer[Door]:
    return create_server(
        services.memories, authenticate, version=VERSION, run_blocking=run_blocking, recall=services.recall
    )


def oauth_server(services: Services, settings: Settings, *, run_blocking: RunBlocking) -> OAuthServer | None:
    """The door's authorization server unless the settings turn it off: as the configured issuer (a custom domain),
    else as the origin each request reached."""
    if not settings.oauth_enabled:
        return None
    return OAuthServer(services.grants, issuer=settings.oauth_issuer, run_blocking=run_blocking)


def mcp_endpoint(
    services: Services, settings: Settings, *, authenticate: Authenticator, run_blocking: RunBlocking
) -> MCPEndpoint:
    """The guarded /mcp endpoint over `services`, admitting the settings' browser origins."""
    return create_endpoint(
        mcp_server(services, authenticate=authenticate, run_blocking=run_blocking),
        settings.mcp_allowed_origins,
        authenticate=authenticate,
        run_blocking=run_blocking,
        oauth=oauth_server(services, settings, run_blocking=run_blocking),
    )


def lambda_handler(services: Services) -> LambdaHandler:
    """The MCP function's handler over `services`: API keys (or the OAuth tokens they consented to), and one request
    per execution environment, so blocking calls run inline (handlers.concurrency). The entrypoint builds it once, at
    init (handlers.aws.mcp); its endpoint starts on the first invocation (handlers.mcp.endpoint)."""
    settings = services.settings
    authenticate = key_authenticator(services.keys)
    return create_handler(
        mcp_server(services, authenticate=authenticate, run_blocking=inline),
        settings.mcp_allowed_origins,
        authenticate=authenticate,
        run_blocking=inline,
        oauth=oauth_server(services, settings, run_blocking=inline),
    )
