"""The MCP door's transport: the guarded, stateless Streamable HTTP app serving the tools, and the Lambda
`handler` for a function URL (payload 2.0), JSON-only."""

from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any, Final

from aws_lambda_powertools import Logger
from aws_lambda_powertools.logging import correlation_paths
from mcp.server import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Send
from starlette.types import Scope as AsgiScope

from core.errors import (
    AuthenticationError,
    StorageUnavailableError,
)
from handlers import bootstrap
from handlers.auth import DEFAULT_AUTHENTICATOR, Authenticator, presented_credentials
from handlers.lambda_asgi import invoke
from handlers.mcp_tools import PRINCIPAL_SCOPE_KEY, create_server
from handlers.problem import domain_problem

logger = Logger()

MCP_PATH: Final = "/mcp"
# The HTTP door's body bound; the largest tool call (a full-size create) is far below it.
MAX_REQUEST_BYTES: Final = 128 * 1024


class MCPEndpoint:
    """The SDK's Streamable HTTP app (stateless, JSON responses) behind a guard for what the SDK leaves open.

    - GET, HEAD and DELETE on /mcp get 405 with `Allow: POST`: a stateless GET would open an event stream that
      never ends, billing a Lambda function until its timeout; there is no session to DELETE.
    - A present Origin outside `allowed_origins` gets 403, as the MCP spec requires. The SDK's own Host/Origin
      check stays off: it admits only localhost hosts by default (a function URL host would get 421), and this
      Origin check is what stops DNS rebinding, since a browser always sends Origin on a cross-origin POST.
    - A request without a valid API key gets 401 (problem+json, `WWW-Authenticate: Bearer`) before any tool runs;
      the verified principal travels to the tools in the request's ASGI scope (`PRINCIPAL_SCOPE_KEY`).

    `session_manager` is the manager of this very app: building another app repoints the server's attribute.
    """

    def __init__(
        self,
        server: MCPServer,
        allowed_origins: Iterable[str] = (),
        authenticate: Authenticator = DEFAULT_AUTHENTICATOR,
    ) -> None:
        self._app = server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            stateless_http=True,
            json_response=True,
            max_request_body_size=MAX_REQUEST_BYTES,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self.session_manager: StreamableHTTPSessionManager = server.session_manager
        self.allowed_origins = frozenset(allowed_origins)
        self._authenticate = authenticate

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = self._refusal(scope)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
            authorization = presented_credentials(Headers(scope=scope))
            try:
                # A key lookup is a blocking DynamoDB call: keep it off the event loop.
                principal = await run_in_threadpool(self._authenticate, authorization)
            except (AuthenticationError, StorageUnavailableError) as exc:
                await domain_problem(exc)(scope, receive, send)
                return
            scope = {**scope, PRINCIPAL_SCOPE_KEY: principal}
        await self._app(scope, receive, send)

    def _refusal(self, scope: AsgiScope) -> Response | None:
        if scope["path"].rstrip("/") == MCP_PATH and scope["method"] in ("GET", "HEAD", "DELETE"):
            return PlainTextResponse(
                "Method Not Allowed: this stateless server answers POST only", 405, headers={"Allow": "POST"}
            )
        origin = Headers(scope=scope).get("origin")
        if origin is not None and origin not in self.allowed_origins:
            return PlainTextResponse("Forbidden: Origin not allowed", 403)
        return None


def create_mcp_asgi_app(
    server: MCPServer, allowed_origins: Iterable[str] = (), authenticate: Authenticator = DEFAULT_AUTHENTICATOR
) -> MCPEndpoint:
    """The guarded ASGI app serving `server` at /mcp; its lifespan runs the SDK session manager."""
    return MCPEndpoint(server, allowed_origins, authenticate)


def with_mcp_endpoint(app: ASGIApp, endpoint: MCPEndpoint) -> Starlette:
    """`app` with the MCP endpoint beside it at /mcp, in one process, running the endpoint's session manager."""

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with endpoint.session_manager.run():
            yield

    combined = Starlette(routes=[Route(MCP_PATH, endpoint)], lifespan=lifespan)
    # Every other request goes to `app`, whatever its path. A Mount("/") would not: its `.*` stops at a newline, so
    # a path holding an encoded one (`/memories/1%0A2`) got Starlette's plain-text 404 instead of the API's problem.
    combined.router.default = app
    combined.router.redirect_slashes = False  # `/mcp/` is the API's 404, as before, not a redirect to `/mcp`
    return combined


LambdaHandler = Callable[[dict[str, Any], Any], dict[str, Any]]


def create_handler(
    server: MCPServer, allowed_origins: Iterable[str] = (), authenticate: Authenticator = DEFAULT_AUTHENTICATOR
) -> LambdaHandler:
    """A Lambda handler serving `server` for function URL (and API Gateway) events.

    The ASGI app is built per invocation with its lifespan on: the SDK session manager can run only once per
    instance, so an app built once at import fails from the second warm invocation. A warm tools/list, app
    included, takes about a millisecond; the server, its tools and the DynamoDB client stay warm.
    """
    origins = frozenset(allowed_origins)

    def handle(event: dict[str, Any], context: Any) -> dict[str, Any]:
        endpoint = create_mcp_asgi_app(server, origins, authenticate)
        return invoke(endpoint, event, context, lifespan="on")

    return handle


# log_event=False whatever POWERTOOLS_LOGGER_LOG_EVENT says: the event carries the caller's API key.
handler = logger.inject_lambda_context(correlation_id_path=correlation_paths.LAMBDA_FUNCTION_URL, log_event=False)(
    create_handler(create_server(), bootstrap.settings_from_env().mcp_allowed_origins)
)
