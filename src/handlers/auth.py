"""Authentication at the doors: the bearer key read from an `Authorization` header, and the authenticators both the
HTTP API and the MCP endpoint take (API keys in production, open access only for local experiments and tests)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Final

from starlette.datastructures import Headers

from core.access import DEFAULT_NAMESPACE, SCOPES, Principal, Scope, require, validate_namespace
from core.errors import AuthenticationError
from core.keys import KeyService

# Turns a request's `Authorization` header (None when absent) into the principal it proves, or raises
# AuthenticationError.
Authenticator = Callable[[str | None], Principal]

MISSING_KEY: Final = "send an API key as `Authorization: Bearer <key>`"


# Behind a function URL with AuthType AWS_IAM the caller's SigV4 signature occupies `Authorization`, so the key
# travels in this header instead, with the same `Bearer <key>` value.
SIGNED_KEY_HEADER: Final = "x-agent-memory-authorization"
# The SigV4 scheme token exactly (RFC 9110 auth-schemes are case-insensitive), followed by its parameters.
_SIGV4: Final = re.compile(r"\s*AWS4-HMAC-SHA256 ", re.IGNORECASE)
# An element of a comma-joined header that begins credentials of its own (`<scheme>` or `<scheme> ...`) rather than
# continuing the previous ones' `name=value` parameters (SigV4's `Credential=..., SignedHeaders=..., Signature=...`).
_NEW_CREDENTIALS: Final = re.compile(r"\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+\s*(?:$| [^=]*$| +[^= ]+ *=)")


def presented_credentials(headers: Mapping[str, str]) -> str | None:
    """The header value that carries the API key: `Authorization`, unless that holds an AWS SigV4 signature.

    A request presenting that header twice is refused: as two entries (a local server) or joined by commas (API
    Gateway payload 2.0 and function URLs join repeated headers so).
    """
    authorization = _single(headers, "authorization")
    if authorization is not None and _SIGV4.match(authorization):
        return _single(headers, SIGNED_KEY_HEADER)
    return authorization


def _single(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:
        return None
    repeated = len(headers.getlist(name)) > 1 if isinstance(headers, Headers) else False
    if repeated or ("," in value and any(_NEW_CREDENTIALS.match(part) for part in value.split(",")[1:])):
        raise AuthenticationError(
            f"send one `{name}` header, not several: which of the credentials counts would be a guess",
            credentials_given=False,
        )
    return value


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


def key_authenticator(keys: KeyService) -> Authenticator:
    """Authenticate by API key, against `keys`."""

    def authenticate(authorization: str | None) -> Principal:
        return keys.authenticate(bearer_token(authorization))

    return authenticate


def open_access(namespace: str = DEFAULT_NAMESPACE) -> Authenticator:
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
