"""Who may do what: API keys, the principal a key proves, scopes and namespaces. Rules only, no storage.

A key reads `am_<key_id>_<secret>`: the key id is public (it names the key for listing and revoking), the secret
is 256 random bits. The store keeps only the SHA-256 of the whole key, so a leaked table leaks no usable key.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, Literal, get_args

from core.clock import format_timestamp
from core.errors import AuthenticationError, FieldError, InvalidInputError, PermissionDeniedError
from core.limits import KEY_NAME_MAX_CHARS

Scope = Literal["read", "write", "keys"]
# Canonical order: scopes are stored and shown in this order.
ALL_SCOPES: Final[tuple[Scope, ...]] = get_args(Scope)
# The memory scopes: what a key gets unless told otherwise, and all an OAuth grant may ever be given. `keys` (list
# and revoke the namespace's other keys) is a person's, granted only when asked for by name (`--scopes`).
SCOPES: Final[tuple[Scope, ...]] = ("read", "write")
# The namespace of the first key a local `serve` creates, and of an open (keyless) local server.
DEFAULT_NAMESPACE: Final = "default"

KEY_PREFIX: Final = "am_"
KEY_ID_HEX_CHARS: Final = 12
SECRET_BYTES: Final = 32
_KEY_ID = re.compile(rf"[0-9a-f]{{{KEY_ID_HEX_CHARS}}}")
# token_urlsafe(32) is always 43 characters of the URL-safe base64 alphabet (which includes "_").
_KEY = re.compile(rf"{KEY_PREFIX}([0-9a-f]{{{KEY_ID_HEX_CHARS}}})_[A-Za-z0-9_-]{{43}}")

NAMESPACE_RULE: Final = "must be 1 to 64 characters of a-z 0-9 . _ - starting with a letter or digit"
_NAMESPACE = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")

INVALID_KEY: Final = "the API key is not valid"
KEY_NAME_RULE: Final = f"must be 1 to {KEY_NAME_MAX_CHARS} printable characters after trimming"


@dataclass(frozen=True)
class Principal:
    """The caller a request proved to be: whose memories it reaches and what it may do with them."""

    namespace: str
    scopes: frozenset[Scope]
    key_id: str | None = None
    # What a person called the key (ApiKey.name), so a caller can be told whose key it is using.
    key_name: str | None = None
    # Proved by an OAuth access token the key consented to, not by the key itself: its refusals speak of the token.
    by_token: bool = False


@dataclass(frozen=True)
class ApiKey:
    """A stored API key. The plaintext is never stored: `secret_hash` is the SHA-256 (hex) of the whole key."""

    key_id: str
    namespace: str
    scopes: tuple[Scope, ...]
    created_at: str
    expires_at: str | None
    revoked: bool
    secret_hash: str = field(repr=False)
    # What a person calls the key ("Ana's laptop"), for listings and the console; never used to find it.
    name: str | None = None
    # When the key last proved a request, to within LAST_USED_EVERY (core.keys); None: not since it was created.
    last_used_at: str | None = None

    def principal(self) -> Principal:
        """The caller this key proves to be."""
        return Principal(self.namespace, frozenset(self.scopes), self.key_id, self.name)

    def is_expired(self, now: datetime) -> bool:
        return expired(self.expires_at, now)

    def state(self, now: datetime) -> Literal["active", "revoked", "expired"]:
        if self.revoked:
            return "revoked"
        return "expired" if self.is_expired(now) else "active"


def expired(expires_at: str | None, now: datetime) -> bool:
    """Whether a key that expires at `expires_at` (as stored; None: never) has expired by `now`."""
    return expires_at is not None and format_timestamp(now) >= expires_at


def require(principal: Principal, scope: Scope) -> None:
    """Refuse a principal that lacks `scope`."""
    if scope not in principal.scopes:
        raise PermissionDeniedError(scope, by_token=principal.by_token)


def may_revoke(principal: Principal, key_id: str) -> None:
    """Refuse a principal that may not revoke the key `key_id`: a key may always revoke itself; any other key only
    with the `keys` scope (an agent's read/write key never revokes the person's). Whether `key_id` is of the
    principal's namespace is the caller's to check after this, so a refusal never tells whether the key exists."""
    if key_id != principal.key_id:
        require(principal, "keys")


def sees_records(principal: Principal) -> bool:
    """Whether an answer may carry a record: a key without `read` never receives one it did not just send."""
    return "read" in principal.scopes


def validate_namespace(value: str) -> str:
    if not _NAMESPACE.fullmatch(value):
        raise InvalidInputError([FieldError("namespace", NAMESPACE_RULE)])
    return value


def validate_key_name(value: str) -> str:
    """A key's name, trimmed: printable characters only (no line breaks or control characters in a listing)."""
    name = value.strip()
    if not 1 <= len(name) <= KEY_NAME_MAX_CHARS or not name.isprintable():
        raise InvalidInputError([FieldError("name", KEY_NAME_RULE)])
    return name


def parse_scopes(values: Iterable[str]) -> tuple[Scope, ...]:
    """Scopes in canonical order without duplicates; at least one, each a known scope."""
    given = {value.strip() for value in values}
    unknown = sorted(given - set(ALL_SCOPES))
    if unknown or not given:
        raise InvalidInputError([FieldError("scopes", f"must be one or more of {', '.join(ALL_SCOPES)}")])
    return tuple(scope for scope in ALL_SCOPES if scope in given)


def new_key() -> tuple[str, str]:
    """A fresh (key id, plaintext key)."""
    key_id = secrets.token_hex(KEY_ID_HEX_CHARS // 2)
    return key_id, f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(SECRET_BYTES)}"


def key_id_of(token: str) -> str:
    """The key id a presented key names; a token that cannot be a key is refused before any lookup."""
    match = _KEY.fullmatch(token)
    if match is None:
        raise AuthenticationError(INVALID_KEY)
    return match.group(1)


def is_key_id(value: str) -> bool:
    return _KEY_ID.fullmatch(value) is not None


def hash_key(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
