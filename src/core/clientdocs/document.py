"""The rules of a Client ID Metadata Document: which client ids are such URLs and which of those may be fetched, what
the document must hold to describe a client this server serves (the redirect URIs registration admits, no client
secret), and how long what it says is trusted."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final
from urllib.parse import urlsplit

from core.access import SCOPES
from core.errors import InvalidInputError
from core.hosts import is_host, is_port, split_authority
from core.limits import MAX_CLIENT_ID_URL_CHARS, MAX_DOCUMENT_BYTES, MAX_DOCUMENT_DEPTH, MAX_REDIRECT_URIS
from core.repository import Client
from core.tokens import check_redirect_uri

# How long a document is trusted without fetching it again: its Cache-Control max-age within these bounds, else an
# hour. The floor keeps one authorization (/authorize, the consent page, /token) on one fetch; the ceiling lets a
# client's change of its document reach this server within a day.
DEFAULT_LIFETIME: Final = timedelta(hours=1)
MIN_LIFETIME: Final = timedelta(minutes=5)
MAX_LIFETIME: Final = timedelta(hours=24)
# A document that could not be used is not fetched again for this long: a URL that is slow or refused costs one
# fetch a minute, however often it is named.
REFUSAL_LIFETIME: Final = timedelta(minutes=1)

# Printable ASCII but the space: nothing that could end the request line or a header of the fetch.
_URL_CHARS: Final = re.compile(r"[!-~]+")
_DOT_SEGMENTS: Final = frozenset({".", "..", "%2e", "%2e%2e", ".%2e", "%2e."})
# Client authentication by a shared secret, which a document published for anyone to read cannot carry (the draft's
# MUST NOT); any other method is served as `none`, as registration does: every client here proves itself by PKCE.
_SECRET_METHODS: Final = frozenset({"client_secret_basic", "client_secret_post", "client_secret_jwt"})
_MAX_AGE: Final = re.compile(r"max-age=([0-9]{1,10})")
_LIST_FIELDS: Final = ("grant_types", "response_types")
_TEXT_FIELDS: Final = ("client_name", "scope")


class ClientDocumentError(Exception):
    """A client id URL whose document cannot be used; the message says why, for the client's developer."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        super().__init__(f"the client metadata document at {url} cannot be used: {reason}")


@dataclass(frozen=True)
class DocumentUrl:
    """A client id URL that may be fetched: its host as written (lower-cased; an IPv6 address in brackets), port and
    request target (path and query)."""

    url: str
    host: str
    port: int
    explicit_port: bool
    target: str

    @property
    def authority(self) -> str:
        """The `Host` header's value."""
        return self.host + (f":{self.port}" if self.explicit_port else "")


@dataclass(frozen=True)
class Fetched:
    """A document as its server answered it: the body, and its Cache-Control header (None when absent)."""

    body: bytes
    cache_control: str | None


def is_client_id_url(client_id: str) -> bool:
    """Whether a client id is a URL (naming a document) rather than an id this server issued at registration."""
    return client_id[:8].lower() == "https://" or client_id[:7].lower() == "http://"


def document_url(url: str) -> DocumentUrl:
    """The fetchable parts of a client id URL: https, a host (DNS name, IPv4 or bracketed IPv6 address) and port, a
    path without dot segments, no user information or fragment, printable ASCII only, at most
    MAX_CLIENT_ID_URL_CHARS. ClientDocumentError otherwise."""
    if len(url) > MAX_CLIENT_ID_URL_CHARS or not _URL_CHARS.fullmatch(url):
        raise ClientDocumentError(url[:100], f"a client id URL is at most {MAX_CLIENT_ID_URL_CHARS} printable chars")
    try:
        parts = urlsplit(url)
    except ValueError:
        raise ClientDocumentError(url, "it is not a URL") from None
    if parts.scheme != "https":
        raise ClientDocumentError(url, "a client id URL must be https")
    authority = split_authority(parts.netloc) if "@" not in parts.netloc else None
    if authority is None or not is_host(authority[0]) or (authority[1] is not None and not is_port(authority[1])):
        raise ClientDocumentError(url, "its host must be a DNS name or an IP address, with a port of 1-65535 if any")
    if "#" in url or parts.path in ("", "/") or any(part.lower() in _DOT_SEGMENTS for part in parts.path.split("/")):
        raise ClientDocumentError(url, "a client id URL has a path (not just /), no . or .. segment, no fragment")
    host, port = authority
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    return DocumentUrl(url, host.lower(), int(port) if port else 443, port is not None, target)


def client_of(url: str, fetched: Fetched, now: int) -> Client:
    """The client the document fetched from `url` describes, trusted until the lifetime its Cache-Control gives
    (within bounds) from `now` (epoch seconds): its metadata as a registration would store it."""
    if len(fetched.body) > MAX_DOCUMENT_BYTES:
        raise ClientDocumentError(url, f"it is larger than {MAX_DOCUMENT_BYTES} bytes")
    try:
        text = fetched.body.decode(json.detect_encoding(fetched.body), "surrogatepass")  # as json.loads reads bytes
    except UnicodeDecodeError:
        raise ClientDocumentError(url, "it is not JSON") from None
    if _nesting(text) > MAX_DOCUMENT_DEPTH:  # counted before json, whose parser recurses once a level
        raise ClientDocumentError(url, f"it is nested deeper than {MAX_DOCUMENT_DEPTH} levels")
    try:
        document = json.loads(text)
    except ValueError:
        raise ClientDocumentError(url, "it is not JSON") from None
    if not isinstance(document, dict):
        raise ClientDocumentError(url, "it is not a JSON object")
    lifetime = int(document_lifetime(fetched.cache_control).total_seconds())
    return Client(url, json.dumps(_metadata(url, document)), now + lifetime)


def _nesting(text: str) -> int:
    """How deeply the arrays and objects of JSON text nest, read without recursion (brackets inside strings are
    text); it stops counting past MAX_DOCUMENT_DEPTH."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if escaped:
            escaped = False
        elif in_string:
            escaped, in_string = char == "\\", char != '"'
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > MAX_DOCUMENT_DEPTH:
                break
        elif char in "]}":
            depth -= 1
    return deepest


def _metadata(url: str, document: dict[str, Any]) -> dict[str, Any]:
    if document.get("client_id") != url:
        raise ClientDocumentError(url, "its client_id must be exactly the URL it is served at")
    if "client_secret" in document or "client_secret_expires_at" in document:
        raise ClientDocumentError(url, "a document is public: it must not carry a client secret")
    if document.get("token_endpoint_auth_method") in _SECRET_METHODS:
        raise ClientDocumentError(url, "a document cannot authenticate its client with a shared secret")
    metadata: dict[str, Any] = {
        "client_id": url,
        "redirect_uris": _redirect_uris(url, document.get("redirect_uris")),
        "token_endpoint_auth_method": "none",
        "scope": " ".join(SCOPES),
    }
    kept = metadata | _texts(url, document)
    for name, value in kept.items():
        # JSON's \ud800 escapes read as a lone surrogate, which no UTF-8 (the SDK's parser, a page) can carry.
        if not all(_is_unicode(text) for text in (value if isinstance(value, list) else [value])):
            raise ClientDocumentError(url, f"its {name} holds a lone surrogate, which is no Unicode character")
    return kept


def _texts(url: str, document: dict[str, Any]) -> dict[str, Any]:
    """The document's text fields and lists of texts this server keeps, each checked."""
    for name in _TEXT_FIELDS:
        if name in document and not isinstance(document[name], str):
            raise ClientDocumentError(url, f"its {name} must be a string")
    for name in _LIST_FIELDS:
        value = document.get(name, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ClientDocumentError(url, f"its {name} must be a list of strings")
    return {name: document[name] for name in (*_TEXT_FIELDS, *_LIST_FIELDS) if name in document}


def _is_unicode(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _redirect_uris(url: str, uris: object) -> list[str]:
    texts = uris if isinstance(uris, list) and all(isinstance(uri, str) for uri in uris) else []
    if not 1 <= len(texts) <= MAX_REDIRECT_URIS:
        raise ClientDocumentError(url, f"its redirect_uris must be a list of 1 to {MAX_REDIRECT_URIS} URI strings")
    try:
        return [check_redirect_uri(uri) for uri in texts]
    except InvalidInputError as exc:
        raise ClientDocumentError(url, f"its redirect_uris: {exc.errors[0].message}") from None


def document_lifetime(cache_control: str | None) -> timedelta:
    """How long a document is trusted: its `max-age` within MIN_LIFETIME and MAX_LIFETIME (`no-store` or `no-cache`:
    the floor), else DEFAULT_LIFETIME."""
    directives = [part.strip().lower() for part in (cache_control or "").split(",")]
    if "no-store" in directives or "no-cache" in directives:
        return MIN_LIFETIME
    ages = [_MAX_AGE.fullmatch(part) for part in directives]
    age = next((match[1] for match in ages if match is not None), None)
    if age is None:
        return DEFAULT_LIFETIME
    return min(max(timedelta(seconds=int(age)), MIN_LIFETIME), MAX_LIFETIME)
