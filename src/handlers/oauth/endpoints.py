"""The `mcp` SDK's /authorize and /token, served as the SDK serves them (a bounded body; /token open to any origin,
for browser clients), with what this server adds before either reads a request:

- /token refuses a `resource` (RFC 8707) that names another server: `invalid_target`, for the code and the refresh
  grants alike (the SDK passes it on for neither), compared as /authorize compares it (paths.names_resource);
- /authorize reads the client of a URL `client_id` (a Client ID Metadata Document) first, outside the SDK's
  catch-all: a document refused is then answered by the guard, not logged as the handler's unexpected error.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

from mcp.server.auth.handlers.authorize import AuthorizationHandler
from mcp.server.auth.handlers.token import TokenHandler
from mcp.server.auth.middleware.client_auth import ClientAuthenticator
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, RequestBodyLimitMiddleware
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, request_response
from starlette.types import ASGIApp

from core.clientdocs.document import is_client_id_url
from handlers.oauth.guard import error_response
from handlers.oauth.paths import AUTHORIZE, TOKEN, names_resource
from handlers.oauth.provider import GrantProvider

_TOKEN_METHODS: Final = ["POST", "OPTIONS"]
_NO_CACHE: Final = {"Pragma": "no-cache"}  # besides `Cache-Control: no-store`, as the SDK's token answers


@dataclass
class _Token(TokenHandler):
    resource: str = ""

    async def handle(self, request: Request) -> Response:
        # The form is read once: Starlette keeps it for the SDK's handler and its client authenticator.
        resource = (await request.form()).get("resource")
        if isinstance(resource, str) and not names_resource(resource, self.resource):
            detail = f"this server issues tokens for {self.resource} only"
            return error_response(400, "invalid_target", detail, **_NO_CACHE)
        answer: Response = await super().handle(request)
        return answer


@dataclass
class _Authorization(AuthorizationHandler):
    async def handle(self, request: Request) -> Response:
        params = request.query_params if request.method == "GET" else await request.form()
        client_id = params.get("client_id")
        if isinstance(client_id, str) and is_client_id_url(client_id):
            await self.provider.get_client(client_id)  # cached for the SDK's own read below
        answer: Response = await super().handle(request)
        return answer


def endpoint_routes(provider: GrantProvider, resource: str) -> list[Route]:
    """/authorize and /token over `provider`, for the protected resource `resource` (this server's /mcp URL)."""
    token = _Token(provider, ClientAuthenticator(provider), resource=resource)
    token_app = CORSMiddleware(
        _bounded(token.handle),
        allow_origins=["*"],
        allow_methods=_TOKEN_METHODS,
        allow_headers=[MCP_PROTOCOL_VERSION_HEADER],
    )
    return [
        Route(AUTHORIZE, _bounded(_Authorization(provider).handle), methods=["GET", "POST"]),
        Route(TOKEN, token_app, methods=_TOKEN_METHODS),
    ]


def _bounded(handle: Callable[[Request], Awaitable[Response]]) -> ASGIApp:
    return RequestBodyLimitMiddleware(request_response(handle), DEFAULT_MAX_REQUEST_BODY_SIZE)
