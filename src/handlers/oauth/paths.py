"""What the MCP endpoint knows of its OAuth authorization server, and all it imports of it besides OAuthServer: the
paths the server answers, whether a request presents one of its access tokens, and the Bearer challenge pointing at
the resource metadata (RFC 9728 §5.1). A leaf: it imports nothing of ours but the core, so the endpoint's cold start
loads none of the routes.
"""

from __future__ import annotations

from typing import Final

from starlette.types import Message, Send

from core.access import SCOPES
from core.tokens import is_access_token

# The protected resource: the MCP door's own path (handlers.mcp.http.MCP_PATH).
RESOURCE_PATH: Final = "/mcp"
# RFC 9728's document, at the root (some clients probe it) and under the resource's path (§3.1); RFC 8414's.
PROTECTED_RESOURCE_METADATA: Final = "/.well-known/oauth-protected-resource"
RESOURCE_METADATA: Final = f"{PROTECTED_RESOURCE_METADATA}{RESOURCE_PATH}"
AUTHORIZATION_SERVER_METADATA: Final = "/.well-known/oauth-authorization-server"
# The endpoints (the SDK's paths for the first four: mcp.server.auth.routes).
AUTHORIZE: Final = "/authorize"
TOKEN: Final = "/token"  # noqa: S105 (a path, not a secret)
REGISTER: Final = "/register"
REVOKE: Final = "/revoke"
CONSENT: Final = "/consent"
# Every scope a token may carry, as RFC 6750 §3 spells a challenge's `scope`.
_SCOPES_NEEDED: Final = f', scope="{" ".join(SCOPES)}"'.encode()
# Every path the authorization server answers (handlers.oauth.routes builds one route for each).
PATHS: Final = frozenset(
    {
        AUTHORIZATION_SERVER_METADATA,
        PROTECTED_RESOURCE_METADATA,
        RESOURCE_METADATA,
        AUTHORIZE,
        TOKEN,
        REGISTER,
        REVOKE,
        CONSENT,
    }
)


def resource_url(issuer: str) -> str:
    """The URL of the protected resource (this server's /mcp) for `issuer`: what its tokens are bound to."""
    return f"{issuer}{RESOURCE_PATH}"


def names_resource(given: str, resource: str) -> bool:
    """Whether a request's RFC 8707 `resource` names `resource` (this server's /mcp URL), a trailing "/" aside."""
    return given.rstrip("/") == resource


def resource_metadata_url(issuer: str) -> str:
    """Where `issuer`'s protected resource metadata is (RFC 9728 §3.1)."""
    return f"{issuer}{RESOURCE_METADATA}"


def presents_access_token(authorization: str | None) -> bool:
    """Whether an `Authorization` header carries one of our access tokens (rather than an API key)."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    return scheme.lower() == "bearer" and is_access_token(token.strip())


def with_resource_metadata(send: Send, url: str) -> Send:
    """`send` pointing every Bearer challenge that goes out at the resource metadata `url` (RFC 9728 §5.1), and
    naming the scopes to ask for where it names none (MCP 2025-11-25: a 401's challenge says which scopes access
    needs, so a client asks for them; a 403 `insufficient_scope` names the one it lacks already)."""
    pointer = f'resource_metadata="{url}"'.encode()

    def challenge(value: bytes) -> bytes:
        scopes = b"" if b' scope="' in value else _SCOPES_NEEDED
        return value + scopes + b", " + pointer

    async def send_pointing(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [
                (name, challenge(value) if name.lower() == b"www-authenticate" else value)
                for name, value in message.get("headers", [])
            ]
        await send(message)

    return send_pointing
