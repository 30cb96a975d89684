"""OAuth's shapes here: the tokens a grant issues (`amc_`/`amr_`/`amt_<grant id>_<secret>`, the secret 256 random
bits, so each names the one item to read) and the redirect URIs a client may register. Rules only."""

from __future__ import annotations

import ipaddress
import re
import secrets
from typing import Final, Literal
from urllib.parse import urlsplit

from core.errors import FieldError, InvalidInputError
from core.limits import MAX_REDIRECT_URI_CHARS

GRANT_ID_HEX_CHARS: Final = 16
_SECRET_BYTES: Final = 32

TokenKind = Literal["code", "refresh", "access"]
_PREFIXES: Final[dict[TokenKind, str]] = {"code": "amc_", "refresh": "amr_", "access": "amt_"}
_TOKEN: Final = re.compile(rf"(am[crt])_([0-9a-f]{{{GRANT_ID_HEX_CHARS}}})_[A-Za-z0-9_-]{{43}}")


def new_token(kind: TokenKind, grant_id: str) -> str:
    return f"{_PREFIXES[kind]}{grant_id}_{secrets.token_urlsafe(_SECRET_BYTES)}"


def grant_of(token: str, kind: TokenKind) -> str | None:
    """The grant id a token of `kind` names; None when it cannot be such a token."""
    match = _TOKEN.fullmatch(token)
    if match is None or f"{match.group(1)}_" != _PREFIXES[kind]:
        return None
    return match.group(2)


def is_access_token(token: str) -> bool:
    return token.startswith(_PREFIXES["access"])


def check_redirect_uri(uri: str) -> str:
    """A redirect URI a client may register: `https`, or `http` to a loopback address (a native app), no fragment
    (RFC 6749 §3.1.2). Custom schemes are refused: any app could claim one."""
    if len(uri) > MAX_REDIRECT_URI_CHARS:
        raise InvalidInputError([FieldError("redirect_uris", f"each must be at most {MAX_REDIRECT_URI_CHARS} chars")])
    parts = urlsplit(uri)
    loopback = parts.scheme == "http" and is_loopback(parts.hostname or "")
    if not (parts.scheme == "https" and parts.hostname) and not loopback:
        raise InvalidInputError([FieldError("redirect_uris", f"{uri!r} must be https, or http on a loopback host")])
    if parts.fragment:
        raise InvalidInputError([FieldError("redirect_uris", f"{uri!r} must not have a fragment")])
    return uri


def is_loopback(host: str) -> bool:
    """Whether a host name or address (IPv6 with or without brackets) is this machine's loopback."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
