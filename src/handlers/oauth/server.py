"""The MCP door as an OAuth 2.1 protected resource with its own authorization server, on the door's own origin.

The issuer is the origin a request reached: a function URL cannot know its own URL from the template (that would be
a cycle), so it is read from the request's `Host` (and the scheme the function URL or `serve` reports), or set once
for a custom domain (OAUTH_ISSUER). An origin over plain http is an issuer only on a loopback host (RFC 8414 asks
for https); on any other, the door serves API keys only. The routes themselves (handlers.oauth.routes) are built
on the first OAuth request for an issuer, so serving /mcp never imports them: it needs this module and
handlers.oauth.paths only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from starlette.datastructures import Headers
from starlette.types import Receive, Send
from starlette.types import Scope as AsgiScope

from core.access import Principal
from core.grants import GrantService
from core.hosts import is_loopback, parse_host
from handlers.auth import Authenticator, bearer_token
from handlers.concurrency import RunBlocking, inline
from handlers.oauth.paths import presents_access_token, resource_url
from handlers.problem import http_problem

if TYPE_CHECKING:
    from starlette.types import ASGIApp

# Issuers whose routes are kept built: one on a function URL; a few locally (localhost and 127.0.0.1).
_MAX_ISSUERS: Final = 8


class OAuthServer:
    """The authorization server for each issuer the door answers as, and the check of its access tokens."""

    def __init__(self, grants: GrantService, *, issuer: str | None = None, run_blocking: RunBlocking = inline) -> None:
        self._grants = grants
        self._issuer = issuer.rstrip("/") if issuer else None
        self._run = run_blocking
        self._apps: dict[str, ASGIApp] = {}

    def issuer_for(self, scope: AsgiScope) -> str | None:
        """The issuer a request reached: the configured one, else its own origin if that may be one; else None."""
        if self._issuer is not None:
            return self._issuer
        host = parse_host(Headers(scope=scope).get("host", ""))
        scheme = scope.get("scheme", "http")
        if host is None or scheme not in ("http", "https"):
            return None
        name, port = host
        if scheme == "http" and not is_loopback(name):
            return None
        # Rebuilt from the validated parts, never copied from the header.
        return f"{scheme}://{name}" + (f":{port}" if port is not None else "")

    def authenticate(self, keys: Authenticator, authorization: str | None, issuer: str) -> Principal:
        """The principal of an access token issued for this issuer's /mcp, or else of an API key (`keys`)."""
        if presents_access_token(authorization):
            return self._grants.verify(bearer_token(authorization), resource_url(issuer))
        return keys(authorization)

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        issuer = self.issuer_for(scope)
        if issuer is None:
            detail = (
                "OAuth is served over https (or http on a loopback host) only: reach this server by https, or use "
                "an API key (`Authorization: Bearer <key>`)"
            )
            await http_problem(404, detail)(scope, receive, send)
            return
        app = self._apps.get(issuer)
        if app is None:
            app = self._build(issuer)
        await app(scope, receive, send)

    def _build(self, issuer: str) -> ASGIApp:
        from handlers.oauth.routes import authorization_server

        if len(self._apps) >= _MAX_ISSUERS:
            self._apps.clear()
        app = authorization_server(self._grants, issuer, self._run)
        self._apps[issuer] = app
        return app
