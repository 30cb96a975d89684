"""The MCP door's transport: the guarded, stateless Streamable HTTP app serving the tools, and the Lambda handler
factory for a function URL (payload 2.0), JSON-only (handlers.aws.mcp is the function's entrypoint)."""

import asyncio
import functools
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any

from aws_lambda_powertools import Logger
from mcp.server import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Send
from starlette.types import Scope as AsgiScope

from core.access import Principal, Scope
from core.budget import storage_budget
from core.errors import AuthenticationError, InvalidInputError, PermissionDeniedError, StorageUnavailableError
from core.hosts import is_loopback, parse_host
from core.limits import MAX_REQUEST_BYTES
from handlers.auth import Authenticator, presented_credentials
from handlers.aws.events import invocation_loop, invoke
from handlers.concurrency import RunBlocking, inline
from handlers.json_body import parse_json_or_none
from handlers.mcp.http import (
    MCP_PATH,
    as_json,
    errors_as_problems,
    refusal,
    too_large,
    unreadable,
    whole_body,
    with_cors,
)
from handlers.mcp.principal import PRINCIPAL_SCOPE_KEY
from handlers.oauth.paths import PATHS as OAUTH_PATHS
from handlers.oauth.paths import presents_access_token, resource_metadata_url, with_resource_metadata
from handlers.oauth.server import OAuthServer
from handlers.problem import domain_problem, http_problem

logger = Logger()


class MCPEndpoint:
    """The SDK's Streamable HTTP app (stateless, JSON responses) behind a guard for what the SDK leaves open.

    - A present Origin that is neither in `allowed_origins` nor this server's own loopback origin gets 403, as the
      MCP spec requires. The SDK's own Host/Origin check stays off: it admits only localhost hosts by default (a
      function URL host would get 421), and this Origin check is what stops DNS rebinding, since a browser always
      sends Origin on a cross-origin POST.
    - An admitted Origin gets CORS: a preflight is answered 204 without a key, and every response (errors included)
      carries `Access-Control-Allow-Origin`, so a browser page can read it.
    - Any other path (`/mcp/` too) is a 404 problem, locally and on Lambda alike. On /mcp, OPTIONS is 204 with
      `Allow: POST, OPTIONS`, and every other method but POST is 405 with that same `Allow`: a stateless GET would
      open an event stream that never ends, billing a Lambda function until its timeout, and there is no session
      to DELETE.
    - A request without a valid API key (or, with `oauth`, access token) gets 401 (problem+json, `WWW-Authenticate:
      Bearer`, naming the resource metadata when `oauth` serves this origin) before any tool runs; the verified
      principal travels to the tools in the request's ASGI scope (`PRINCIPAL_SCOPE_KEY`). An access token calling a
      tool beyond its scopes gets 403 `insufficient_scope` naming the scope, so its client can ask for it (an API
      key gets the tool's own error, as always).
    - With `oauth`, the authorization server's paths (handlers.oauth.paths.PATHS) go to it.
    - Every refusal is a problem document, also where the SDK's transport answers in plain text or with a bare
      status (handlers.mcp.http): a body not declared as JSON is 415 (JSON as the HTTP API reads it), a client that
      does not accept JSON 406, a body over MAX_REQUEST_BYTES 413. Its JSON-RPC errors stay JSON-RPC.
    - A client that goes away before its body is complete is logged at INFO and left unanswered.

    `session_manager` is the manager of this very app: building another app repoints the server's attribute.
    """

    def __init__(
        self,
        server: MCPServer,
        allowed_origins: Iterable[str] = (),
        *,
        authenticate: Authenticator,
        run_blocking: RunBlocking = inline,
        oauth: OAuthServer | None = None,
    ) -> None:
        self._server = server
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
        self._run_blocking = run_blocking
        self._oauth = oauth
        self._tool_scopes: dict[str, Scope] | None = None

    @property
    def paths(self) -> frozenset[str]:
        """Every path this endpoint answers (`/mcp/` only to refuse it)."""
        return frozenset({MCP_PATH, f"{MCP_PATH}/"}) | (OAUTH_PATHS if self._oauth is not None else frozenset())

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        with storage_budget():  # one budget per request for every call out it makes (core.budget)
            if self._oauth is not None and scope["path"] in OAUTH_PATHS:
                await self._oauth(scope, receive, send)
            else:
                await self._guard(scope, receive, send)

    async def _guard(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        """The Origin, then the route and method, then the credentials: each refused before the next is read."""
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if origin is not None and not self._admits(origin, scope, headers):
            detail = f"the Origin {origin!r} may not call {MCP_PATH}: it is not in MCP_ALLOWED_ORIGINS"
            await http_problem(403, detail)(scope, receive, send)
            return
        issuer = self._oauth.issuer_for(scope) if self._oauth is not None else None
        send = self._answering(send, origin, issuer)
        refused = refusal(scope, headers, origin)
        if refused is not None:
            await refused(scope, receive, send)
            return
        try:
            credentials = presented_credentials(headers)
            # A key lookup is a blocking DynamoDB call: run as the entrypoint's policy says (handlers.concurrency).
            principal = await self._run_blocking(self._authenticator(issuer), credentials)
        except (AuthenticationError, StorageUnavailableError) as exc:
            await domain_problem(exc)(scope, receive, send)
            return
        # An access token is held to its scopes here, where its client can ask for more (RFC 6750 step-up).
        step_up = issuer is not None and presents_access_token(credentials)
        await self._serve_post(scope, receive, send, principal, step_up=step_up)

    def _answering(self, send: Send, origin: str | None, issuer: str | None) -> Send:
        """`send` adding CORS for an admitted `origin`, and pointing Bearer challenges at `issuer`'s metadata."""
        if origin is not None:
            send = with_cors(send, origin)
        if issuer is not None:
            send = with_resource_metadata(send, resource_metadata_url(issuer))
        return send

    def _authenticator(self, issuer: str | None) -> Authenticator:
        """API keys, and with OAuth serving this request's origin, its access tokens too."""
        if self._oauth is None or issuer is None:
            return self._authenticate
        return functools.partial(self._oauth.authenticate, self._authenticate, issuer=issuer)

    async def _serve_post(
        self, scope: AsgiScope, receive: Receive, send: Send, principal: Principal, *, step_up: bool
    ) -> None:
        """An authenticated POST to /mcp: its body read whole and bounded, then handed to the SDK with `principal`."""
        headers = Headers(scope=scope)
        refused = unreadable(scope, headers)
        if refused is not None:
            await refused(scope, receive, send)
            return
        whole = await whole_body(receive)
        if whole is None:
            logger.info("client disconnected before its request body was complete; nothing was done")
            return
        body, content = whole
        if len(content) > MAX_REQUEST_BYTES:
            await too_large()(scope, receive, send)
            return
        try:  # as the HTTP door reads a body: a key given twice is refused, not taken last-wins by the SDK
            message = parse_json_or_none(content)
        except InvalidInputError as exc:
            await domain_problem(exc)(scope, receive, send)
            return
        missing = await self._missing_scope(principal, message) if step_up else None
        if missing is not None:
            await domain_problem(PermissionDeniedError(missing, by_token=principal.by_token))(scope, receive, send)
            return
        await self._app(
            {**scope, "headers": as_json(scope), PRINCIPAL_SCOPE_KEY: principal}, body, errors_as_problems(send)
        )

    async def _missing_scope(self, principal: Principal, message: object) -> Scope | None:
        """The scope a tool call (`message`, the body parsed) needs that `principal` lacks: `read` for a read-only
        tool (its annotations say so), `write` for any other; None for anything else."""
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            return None
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        scopes = await self._scopes_of_tools()
        needed = scopes.get(name) if isinstance(name, str) else None
        return needed if needed is not None and needed not in principal.scopes else None

    async def _scopes_of_tools(self) -> dict[str, Scope]:
        if self._tool_scopes is not None:
            return self._tool_scopes
        scopes: dict[str, Scope] = {
            tool.name: "read" if tool.annotations is not None and tool.annotations.read_only_hint else "write"
            for tool in await self._server.list_tools()
        }
        self._tool_scopes = scopes
        return scopes

    def _admits(self, origin: str, scope: AsgiScope, headers: Headers) -> bool:
        """An allow-listed origin, or the page of this very server reached by a loopback name or address: any other
        name could be an attacker's domain rebound to this address (DNS rebinding)."""
        if origin in self.allowed_origins:
            return True
        host = headers.get("host", "").lower()
        parsed = parse_host(host)
        return parsed is not None and is_loopback(parsed[0]) and origin.lower() == f"{scope['scheme']}://{host}"


def create_endpoint(
    server: MCPServer,
    allowed_origins: Iterable[str] = (),
    *,
    authenticate: Authenticator,
    run_blocking: RunBlocking = inline,
    oauth: OAuthServer | None = None,
) -> MCPEndpoint:
    """The guarded ASGI app serving `server` at /mcp (and `oauth` beside it); its lifespan runs the SDK session
    manager."""
    return MCPEndpoint(server, allowed_origins, authenticate=authenticate, run_blocking=run_blocking, oauth=oauth)


def with_mcp_endpoint(app: ASGIApp, endpoint: MCPEndpoint) -> Starlette:
    """`app` with the MCP endpoint beside it at /mcp, in one process, running the endpoint's session manager."""

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with endpoint.session_manager.run():
            yield

    # `/mcp/` goes to the endpoint too, so it gets the same 404 locally as on Lambda.
    combined = Starlette(routes=[Route(path, endpoint) for path in sorted(endpoint.paths)], lifespan=lifespan)
    # Every other request goes to `app`, whatever its path. A Mount("/") would not: its `.*` stops at a newline, so
    # a path holding an encoded one (`/memories/1%0A2`) got Starlette's plain-text 404 instead of the API's problem.
    combined.router.default = app
    combined.router.redirect_slashes = False  # a path with a stray slash is a 404, never a redirect
    return combined


LambdaHandler = Callable[[dict[str, Any], Any], dict[str, Any]]


def create_handler(
    server: MCPServer,
    allowed_origins: Iterable[str] = (),
    *,
    authenticate: Authenticator,
    run_blocking: RunBlocking = inline,
    oauth: OAuthServer | None = None,
) -> LambdaHandler:
    """A Lambda handler serving `server` for function URL (and API Gateway) events.

    The endpoint and its SDK session manager start on the first invocation and stay running across warm ones: a
    task on the invocation loop holds the session manager's `run()` open (it may be entered only once per
    instance, and Mangum's own lifespan would enter it on every invocation). Between invocations the loop does not
    run and Lambda freezes the process; nothing depends on running then. If something closed that loop (a test's
    asyncio.run), the next invocation starts a new endpoint on the new one.
    """
    origins = frozenset(allowed_origins)
    held: dict[asyncio.AbstractEventLoop, MCPEndpoint] = {}

    def running_endpoint() -> MCPEndpoint:
        loop = invocation_loop()
        if loop not in held:
            endpoint = create_endpoint(
                server, origins, authenticate=authenticate, run_blocking=run_blocking, oauth=oauth
            )
            _hold_lifespan(loop, endpoint)
            held.clear()
            held[loop] = endpoint
        return held[loop]

    def handle(event: dict[str, Any], context: Any) -> dict[str, Any]:
        return invoke(running_endpoint(), event, context)

    return handle


def _hold_lifespan(loop: asyncio.AbstractEventLoop, endpoint: MCPEndpoint) -> None:
    """Start `endpoint`'s session manager on `loop` and keep it running (a task waiting forever inside `run()`)."""
    started = asyncio.Event()

    async def hold() -> None:
        async with endpoint.session_manager.run():
            started.set()
            await asyncio.Event().wait()

    task = loop.create_task(hold(), name="mcp-session-manager")
    waiter = loop.create_task(started.wait())
    loop.run_until_complete(asyncio.wait([task, waiter], return_when=asyncio.FIRST_COMPLETED))
    if task.done():
        waiter.cancel()
        task.result()  # it ended before starting: raise its error
