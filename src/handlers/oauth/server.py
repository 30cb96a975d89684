"""The MCP door as an OAuth 2.1 protected resource with its own authorization server, on the door's own origin.

The issuer is the origin a request reached: a function URL cannot know its own URL from the template (that would be
a cycle), so it is read from the request's `Host` (and the scheme the function URL or `serve` reports), or set once
for a custom domain (OAUTH_ISSUER). An origin over plain http is an issuer only on a loopback host (RFC 8414 asks
for https); on any other, the door serves API keys only. The routes themselves (handlers.oauth.provider) are built
on the first OAuth request for an issuer, so serving /mcp never imports them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from starlette.datastructures import Headers
from starlette.types import Message, Receive, Send
from starlette.types import Scope as AsgiScope

from core.access import Principal
from core.grants import GrantService
from core.tokens import is_access_token, is_loopback
from handlers.auth import Authenticator, bearer_token
from handlers.concurrency import RunBlocking, inline
from handlers.problem import problem_response

if TYPE_CHECKING:
    from starlette.types import ASGIApp

RESOURCE_PATH: Final = "/mcp"
PROTECTED_RESOURCE_METADATA: Final = "/.well-known/oauth-protected-resource"
AUTHORIZATION_SERVER_METADATA: Final = "/.well-known/oauth-authorization-server"
# Every path the authorization server answers (handlers.oauth.provider builds them).
PATHS: Final = frozenset(
    {
        AUTHORIZATION_SERVER_METADATA,
        PROTECTED_RESOURCE_METADATA,
        f"{PROTECTED_RESOURCE_METADATA}{RESOURCE_PATH}",
        "/authorize",
        "/token",
        "/register",
        "/revoke",
        "/consent",
    }
)
_HOST: Final = re.compile(r"(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")
# Issuers whose routes are kept built: one on a function URL; a few locally (localhost and 127.0.0.1).
_MAX_ISSUERS: Final = 8


class OAuthServer:
    """The authorization server for each issuer the door answers as, and the check of its access tokens."""

    def __init__(
        self, grants: Callable[[], GrantService], *, issuer: str | None = None, run_blocking: RunBlocking = inline
    ) -> None:
        self._grants = grants
        self._issuer = issuer.rstrip("/") if issuer else None
        self._run = run_blocking
        self._apps: dict[str, ASGIApp] = {}

    def issuer_for(self, scope: AsgiScope) -> str | None:
        """The issuer a request reached: the configured one, else its own origin if that may be one; else None."""
        if self._issuer is not None:
            return self._issuer
        host = Headers(scope=scope).get("host", "")
        scheme = scope.get("scheme", "http")
        if not _HOST.fullmatch(host) or scheme not in ("http", "https"):
            return None
        hostname = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if scheme == "http" and not is_loopback(hostname):
            return None
        return f"{scheme}://{host.lower()}"

    @staticmethod
    def resource_metadata_url(issuer: str) -> str:
        return f"{issuer}{PROTECTED_RESOURCE_METADATA}{RESOURCE_PATH}"

    def authenticate(self, keys: Authenticator, authorization: str | None, issuer: str) -> Principal:
        """The principal of an access token issued for this issuer's /mcp, or else of an API key (`keys`)."""
        if presents_access_token(authorization):
            return self._grants().verify(bearer_token(authorization), f"{issuer}{RESOURCE_PATH}")
        return keys(authorization)

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        issuer = self.issuer_for(scope)
        if issuer is None:
            detail = (
                "OAuth is served over https (or http on a loopback host) only: reach this server by https, or use "
                "an API key (`Authorization: Bearer <key>`)"
            )
            await problem_response(404, "http-error", "Not found", detail)(scope, receive, send)
            return
        app = self._apps.get(issuer)
        if app is None:
            app = self._build(issuer)
        await app(scope, receive, send)

    def _build(self, issuer: str) -> ASGIApp:
        from handlers.oauth.provider import authorization_server

        if len(self._apps) >= _MAX_ISSUERS:
            self._apps.clear()
        app = authorization_server(self._grants, issuer, f"{issuer}{RESOURCE_PATH}", self._run)
        self._apps[issuer] = app
        return app


def presents_access_token(authorization: str | None) -> bool:
    """Whether an `Authorization` header carries one of our access tokens (rather than an API key)."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    return scheme.lower() == "bearer" and is_access_token(token.strip())


def with_resource_metadata(send: Send, url: str) -> Send:
    """`send` pointing every Bearer challenge that goes out at the resource metadata `url` (RFC 9728 §5.1)."""
    parameter = f'resource_metadata="{url}"'.encode()

    async def send_pointing(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [
                (name, value + b", " + parameter if name.lower() == b"www-authenticate" else value)
                for name, value in message.get("headers", [])
            ]
        await send(message)

    return send_pointing
