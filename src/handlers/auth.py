"""Authentication at the doors: the bearer key read from an `Authorization` header, and the authenticators both the
HTTP API and the MCP endpoint take (API keys in production, open access only for local experiments and tests)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from core.access import SCOPES, Principal, Scope, require, validate_namespace
from core.errors import AuthenticationError
from core.keys import KeyService
from handlers import bootstrap

# Turns a request's `Authorization` header (None when absent) into the principal it proves, or raises
# AuthenticationError.
Authenticator = Callable[[str | None], Principal]

MISSING_KEY: Final = "send an API key as `Authorization: Bearer <key>`"


# Behind a function URL with AuthType AWS_IAM the caller's SigV4 signature occupies `Authorization`, so the key
# travels in this header instead, with the same `Bearer <key>` value.
SIGNED_KEY_HEADER: Final = "x-agent-memory-authorization"
_SIGV4_SCHEME: Final = "aws4-hmac-sha256"


def presented_credentials(headers: Mapping[str, str]) -> str | None:
    """The header value that carries the API key: `Authorization`, unless that holds an AWS SigV4 signature."""
    authorization = headers.get("authorization")
    if authorization is not None and authorization.strip().lower().startswith(_SIGV4_SCHEME):
        return headers.get(SIGNED_KEY_HEADER)
    return authorization


def bearer_token(authorization: str | None) -> str:
    """The credentials of a `Bearer` authorization header (the scheme is case-insensitive, RFC 9110)."""
    if authorization is None or not authorization.strip():
        raise AuthenticationError(MISSING_KEY, credentials_given=False)
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        raise AuthenticationError(
            "the Authorization header must use the Bearer scheme: `Authorization: Bearer <key>`",
            credentials_given=False,
        )
    token = token.strip()
    if not token:
        raise AuthenticationError(MISSING_KEY, credentials_given=False)
    return token


def key_authenticator(provide_keys: Callable[[], KeyService]) -> Authenticator:
    """Authenticate by API key; `provide_keys` is called per request, so the key service can be built lazily."""

    def authenticate(authorization: str | None) -> Principal:
        return provide_keys().authenticate(bearer_token(authorization))

    return authenticate


def open_access(namespace: str = bootstrap.DEFAULT_NAMESPACE) -> Authenticator:
    """Let every request in, as a principal of `namespace` with every scope, with or without a key.

    For tests and `agent-memory serve --no-auth` on loopback only; a deployed function never uses it.
    """
    principal = Principal(validate_namespace(namespace), frozenset(SCOPES))

    def authenticate(authorization: str | None) -> Principal:
        return principal

    return authenticate


def authorize(authenticate: Authenticator, authorization: str | None, scope: Scope) -> Principal:
    """The principal of a request that must be allowed `scope`: 401 first, then 403."""
    principal = authenticate(authorization)
    require(principal, scope)
    return principal


DEFAULT_AUTHENTICATOR: Final = key_authenticator(bootstrap.default_key_service)
