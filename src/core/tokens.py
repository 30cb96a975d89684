"""OAuth's shapes here: the tokens a grant issues (`amc_`/`amr_`/`amt_<grant id>_<secret>`, the secret 256 random
bits, so each names the one item to read), the redirect URIs a client may register, and the consent form's
anti-forgery token. Rules only."""

from __future__ import annotations

import base64
import hmac
import json
import re
import secrets
from collections.abc import Iterable, Mapping
from typing import Final, Literal
from urllib.parse import SplitResult, urlsplit

from core.errors import FieldError, InvalidInputError
from core.hosts import is_host, is_loopback, is_port, split_authority
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
    (RFC 6749 §3.1.2), no user information, a host that is a DNS name or an IP address, and a port of 1-65535.
    Custom schemes are refused: any app could claim one."""
    redirect_origin(uri)
    return uri


def redirect_origin(uri: str) -> str:
    """The origin (`scheme://host[:port]`) of a redirect URI check_redirect_uri admits, rebuilt from its validated
    parts, never copied from the URI; InvalidInputError when it admits none."""
    if len(uri) > MAX_REDIRECT_URI_CHARS:
        raise _refused(f"each must be at most {MAX_REDIRECT_URI_CHARS} chars")
    try:
        parts = urlsplit(uri)
    except ValueError:  # brackets around no IPv6 address
        raise _refused(f"{uri!r} is not a URI") from None
    https_or_loopback = _refused(f"{uri!r} must be https, or http on a loopback host")
    if parts.scheme not in ("https", "http"):
        raise https_or_loopback
    host, port = _authority(parts, uri)
    if parts.scheme == "http" and not is_loopback(host):
        raise https_or_loopback
    if parts.fragment:
        raise _refused(f"{uri!r} must not have a fragment")
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")


def redirect_uri_registered(requested: str, registered: Iterable[str]) -> bool:
    """Whether a redirect URI asked for at /authorize is one of the `registered` ones (each spelt as the caller
    normalises URLs): the same string, or for an http URI on a loopback host the same but for the port, either side
    (RFC 8252 §7.3: a native app registers `http://127.0.0.1/callback` and listens on whatever port it gets). A
    loopback host is an IP literal or `localhost`, as registration takes them (core.hosts.is_loopback)."""
    candidates = list(registered)
    if requested in candidates:
        return True
    portless = _without_port(requested)
    return portless is not None and any(_without_port(uri) == portless for uri in candidates)


def _without_port(uri: str) -> tuple[str, str, str] | None:
    """The host, path and query of an http URI on a loopback host; None for any other URI."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return None
    authority = split_authority(parts.netloc) if "@" not in parts.netloc else None
    if parts.scheme != "http" or authority is None or not is_loopback(authority[0]) or parts.fragment:
        return None
    return authority[0].lower(), parts.path or "/", parts.query


def _authority(parts: SplitResult, uri: str) -> tuple[str, str | None]:
    """The host (lower-cased; an IPv6 address in its brackets) and port of a URI, each validated by core.hosts."""
    if "@" in parts.netloc:
        raise _refused(f"{uri!r} must not carry user information")
    authority = split_authority(parts.netloc)
    if authority is None or not is_host(authority[0]):
        raise _refused(f"{uri!r} must name its host as a DNS name, an IPv4 address or a bracketed IPv6 address")
    host, port = authority
    if port is not None and not is_port(port):
        raise _refused(f"{uri!r} must have a port of 1-65535, if any")
    return host.lower(), port


def _refused(message: str) -> InvalidInputError:
    return InvalidInputError([FieldError("redirect_uris", message)])


# What the consent form's anti-forgery token is bound to: every parameter of the authorization request it carries.
CONSENT_BOUND: Final = ("client_id", "redirect_uri", "code_challenge", "scope", "state", "resource")


def consent_proof(secret: bytes, nonce: str, request: Mapping[str, str | None]) -> str:
    """The consent form's token: an HMAC-SHA256 under the server's `secret` of the browser's cookie `nonce` and the
    authorization request the form carries (CONSENT_BOUND), so it proves that this server's page gave that browser
    that form for that request. Neither an attacker's own cookie and field nor another request's pair match."""
    message = json.dumps([nonce, *(request.get(name) for name in CONSENT_BOUND)], separators=(",", ":"))
    digest = hmac.digest(secret, message.encode(), "sha256")
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def consent_proven(secret: bytes, nonce: str, request: Mapping[str, str | None], proof: str) -> bool:
    """Whether `proof` is the consent_proof of `nonce` and `request`, compared in constant time."""
    expected = consent_proof(secret, nonce, request)
    return bool(nonce) and hmac.compare_digest(expected.encode(), proof.encode())
