"""HttpsDocumentFetcher: the DocumentFetcher over the network, with the standard library only (the MCP function ships
no HTTP client of its own). Anyone can name a URL as a client id, so the fetch is bounded as an SSRF-safe server's:

- https only, the certificate checked for the URL's host;
- every address the host resolves to must be globally routable unicast (core.hosts.is_public_address: in no range
  of IANA's special-purpose registries): one other address refuses the URL; the connection goes to an address so
  checked, never to the name resolved again (DNS rebinding);
- no redirect followed (a 3xx is refused), one GET with `Connection: close`, read to its end;
- at most MAX_DOCUMENT_BYTES of document, and TIMEOUT_SECONDS for everything from the name's resolution to the last
  byte (each wait is given what is left of it).

For tests only, `test_loopback_ca` trusts that CA (a PEM file) instead of the system's and admits loopback addresses,
so a test's own https server on 127.0.0.1 can serve documents; nothing in production sets it
(handlers.bootstrap.Settings: TEST_ONLY_CLIENT_METADATA_CA).
"""

from __future__ import annotations

import functools
import http.client
import io
import ipaddress
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Any, Final

from core.clientdocs.document import ClientDocumentError, DocumentUrl, Fetched
from core.hosts import is_public_address
from core.limits import MAX_DOCUMENT_BYTES

TIMEOUT_SECONDS: Final = 5.0
# The status line and headers of an answer; a document's chunked framing fits in the slack beyond it.
_MAX_HEAD_BYTES: Final = 8 * 1024
_READ_BYTES: Final = 16 * 1024

_Address = tuple[socket.AddressFamily, Any]


@dataclass
class HttpsDocumentFetcher:
    timeout_seconds: float = TIMEOUT_SECONDS
    max_bytes: int = MAX_DOCUMENT_BYTES
    test_loopback_ca: str | None = None

    def __post_init__(self) -> None:
        if self.test_loopback_ca is not None:
            _ = self._tls  # a CA file that cannot be read fails the start, not a fetch

    @functools.cached_property
    def _tls(self) -> ssl.SSLContext:
        # Made on the first fetch: loading the system's certificates is no cold start's business.
        return ssl.create_default_context(cafile=self.test_loopback_ca)

    def __call__(self, url: DocumentUrl) -> Fetched:
        deadline = time.monotonic() + self.timeout_seconds
        addresses = self._addresses(url, deadline)
        answer = self._exchange(url, addresses, deadline)
        return self._document(url, answer)

    def _addresses(self, url: DocumentUrl, deadline: float) -> list[_Address]:
        """Every address of the URL's host, each one allowed; ClientDocumentError otherwise."""
        found = _resolve(url, deadline)
        for _, sockaddr in found:
            if not self._allowed(str(sockaddr[0])):
                raise ClientDocumentError(url.url, f"its host resolves to {sockaddr[0]}, which is not a public address")
        return found

    def _allowed(self, address: str) -> bool:
        if self.test_loopback_ca is not None and ipaddress.ip_address(address.partition("%")[0]).is_loopback:
            return True
        return is_public_address(address)

    def _exchange(self, url: DocumentUrl, addresses: list[_Address], deadline: float) -> bytes:
        """The whole answer to one GET of the URL, sent to the first of `addresses` that accepts a connection."""
        request = (
            f"GET {url.target} HTTP/1.1\r\nHost: {url.authority}\r\nAccept: application/json\r\n"
            "Accept-Encoding: identity\r\nUser-Agent: agent-memory (client metadata)\r\nConnection: close\r\n\r\n"
        ).encode("ascii")
        try:
            with self._connect(url, addresses, deadline) as stream:
                stream.settimeout(_left(deadline))
                stream.sendall(request)
                return self._read_all(url, stream, deadline)
        except TimeoutError:
            raise ClientDocumentError(url.url, f"it was not served within {self.timeout_seconds:g} s") from None
        except ssl.SSLError as exc:
            raise ClientDocumentError(url.url, f"its TLS failed ({exc.reason or exc})") from None
        except OSError as exc:
            raise ClientDocumentError(url.url, f"it could not be fetched ({exc.strerror or exc})") from None

    def _connect(self, url: DocumentUrl, addresses: list[_Address], deadline: float) -> ssl.SSLSocket:
        failure: OSError | None = None
        for family, sockaddr in addresses:
            raw = socket.socket(family, socket.SOCK_STREAM)
            try:
                raw.settimeout(_left(deadline))
                raw.connect(sockaddr)
                raw.settimeout(_left(deadline))  # the handshake gets what the connection left, not a fresh wait
                return self._tls.wrap_socket(raw, server_hostname=url.host.strip("[]"))
            except OSError as exc:  # TimeoutError and ssl.SSLError among them
                raw.close()
                if isinstance(exc, TimeoutError | ssl.SSLError):
                    raise
                failure = exc
        raise failure or OSError("no address to connect to")

    def _read_all(self, url: DocumentUrl, stream: ssl.SSLSocket, deadline: float) -> bytes:
        limit = self.max_bytes + _MAX_HEAD_BYTES
        received = bytearray()
        while True:
            stream.settimeout(_left(deadline))
            try:
                chunk = stream.recv(_READ_BYTES)
            except ssl.SSLEOFError:
                chunk = b""  # closed without TLS's close_notify: the HTTP framing below tells a cut answer
            if not chunk:
                return bytes(received)
            received += chunk
            if len(received) > limit:
                raise ClientDocumentError(url.url, f"it is larger than {self.max_bytes} bytes")

    def _document(self, url: DocumentUrl, answer: bytes) -> Fetched:
        response = http.client.HTTPResponse(_Replayed(answer), method="GET")  # type: ignore[arg-type]  # a socket's makefile only
        try:
            response.begin()
            body = response.read()
        except (http.client.HTTPException, ValueError, OverflowError):  # Overflow: a chunk size past any int's
            raise ClientDocumentError(url.url, "its server did not answer a whole HTTP response") from None
        if 300 <= response.status < 400:
            raise ClientDocumentError(url.url, f"it answered a redirect ({response.status}): none is followed")
        if response.status != 200:
            raise ClientDocumentError(url.url, f"it answered {response.status}, not 200")
        if len(body) > self.max_bytes:
            raise ClientDocumentError(url.url, f"it is larger than {self.max_bytes} bytes")
        return Fetched(body, response.getheader("cache-control"))


@dataclass(frozen=True)
class _Replayed:
    """An answer already read whole, for http.client to parse (status line, headers, chunked or sized body)."""

    answer: bytes

    def makefile(self, *_: object, **__: object) -> io.BytesIO:
        return io.BytesIO(self.answer)


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left


def _resolve(url: DocumentUrl, deadline: float) -> list[_Address]:
    """The URL's host's addresses, resolved in a thread so the wait ends at the deadline (the resolver has none)."""
    found: list[_Address] = []
    failure: list[OSError] = []

    def resolve() -> None:
        try:
            answers = socket.getaddrinfo(url.host.strip("[]"), url.port, type=socket.SOCK_STREAM)
            found.extend((family, sockaddr) for family, _, _, _, sockaddr in answers)
        except OSError as exc:
            failure.append(exc)

    resolver = threading.Thread(target=resolve, name="client-document-resolve", daemon=True)
    resolver.start()
    resolver.join(max(deadline - time.monotonic(), 0))
    if resolver.is_alive():
        raise ClientDocumentError(url.url, "its host did not resolve in time")
    if failure or not found:
        raise ClientDocumentError(url.url, "its host does not resolve")
    return found
