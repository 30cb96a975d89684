"""RFC 7009 token revocation for public clients, in place of the SDK's handler: that one requires a
`client_secret` field, which a public client never sends (its form cannot carry the None it would accept), so every
public client's revocation got 400. This one authenticates the client as the SDK does and takes `token` (and
ignores `token_type_hint`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from mcp.server.auth.middleware.client_auth import AuthenticationError as ClientAuthenticationError
from mcp.server.auth.middleware.client_auth import ClientAuthenticator
from starlette.requests import Request
from starlette.responses import Response

from handlers.oauth.guard import error_response
from handlers.oauth.provider import GrantProvider

_NO_CACHE: Final = {"Pragma": "no-cache"}  # besides `Cache-Control: no-store`, as the SDK's handlers answer


@dataclass(frozen=True)
class Revocation:
    provider: GrantProvider
    clients: ClientAuthenticator

    async def handle(self, request: Request) -> Response:
        try:
            client = await self.clients.authenticate_request(request)
        except ClientAuthenticationError as exc:
            return error_response(401, "invalid_client", exc.message, **_NO_CACHE)
        token = (await request.form()).get("token")
        if not isinstance(token, str) or not token:
            return error_response(400, "invalid_request", "send the token to revoke as `token`", **_NO_CACHE)
        # Revoked if this client holds it; nothing otherwise, and the same answer either way (RFC 7009 §2.2).
        await self.provider.revoke(token, client.client_id or "")
        return Response(status_code=200, headers={"Cache-Control": "no-store"} | _NO_CACHE)
