"""How `serve`'s uvicorn listens: which forwarded headers it trusts (none unless told), and its HTTP/1.1 protocol,
uvicorn's own except for a request it cannot read: that one is answered with a problem document that reaches the
client (414 or 431 for a head too long, 400 otherwise), where uvicorn closed the connection on the unread rest of the
request, which reset it, so the client saw no answer at all."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Final

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from handlers.problem import PROBLEM_JSON, http_problem
from local.access_log import log_config

if TYPE_CHECKING:
    from starlette.types import ASGIApp

# The request line and headers of one request, in bytes (h11's own default): the longest recall (1,000 characters,
# each percent-encoded to at most 12) and a key fit with room to spare; API Gateway admits less (10,240).
REQUEST_HEAD_BYTES: Final = 16 * 1024
# After answering a request it cannot read, the server goes on reading (and dropping) what the client still sends,
# until the client closes, for at most this long and this much: a client writes its whole request before it reads,
# and a close with data unread would reset the connection and discard the answer.
LINGER_SECONDS: Final = 5.0
LINGER_BYTES: Final = 8 * 1024 * 1024


def server_config(app: ASGIApp, host: str, port: int, forwarded_allow_ips: str | None = None) -> uvicorn.Config:
    """uvicorn's configuration for `serve`: X-Forwarded-For and X-Forwarded-Proto are trusted only from the proxies
    `forwarded_allow_ips` names (uvicorn's syntax: addresses or networks, comma-separated, `*` for any), else from
    nobody: a caller's address is the peer's (the registration bound counts it), however it labels itself."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="info",
        log_config=log_config(),
        http=ReadableOrAnswered,
        h11_max_incomplete_event_size=REQUEST_HEAD_BYTES,
        proxy_headers=forwarded_allow_ips is not None,
        forwarded_allow_ips=forwarded_allow_ips,
    )


class ReadableOrAnswered(H11Protocol):
    """uvicorn's h11 protocol, answering a request it cannot read with a problem document (414 for a request line
    too long, 431 for headers, 400 for anything else h11 refuses), then lingering: it shuts its side, and reads and
    drops what the client still sends until the client closes (LINGER_SECONDS, LINGER_BYTES).

    It overrides a method of uvicorn's protocol class and reads its connection and transport, none of them uvicorn's
    public API: core.reaches lists the uvicorn and h11 it was checked against, and an upgrade of either fails the
    tests until the override is checked again."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lingered: int | None = None  # bytes dropped since the answer; None until then
        self._linger_end: asyncio.TimerHandle | None = None

    def data_received(self, data: bytes) -> None:
        if self._lingered is None:
            super().data_received(data)
            return
        self._lingered += len(data)
        if self._lingered > LINGER_BYTES:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._linger_end is not None:
            self._linger_end.cancel()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        unread, _ = self.conn.trailing_data
        status, detail = _refusal(unread)
        body = bytes(http_problem(status, detail).body)
        headers = [
            (b"content-type", PROBLEM_JSON.encode()),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        for event in (h11.Response(status_code=status, headers=headers), h11.Data(data=body), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event) or b"")
        self._lingered = 0
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self._linger_end = self.loop.call_later(LINGER_SECONDS, self.transport.close)


def _refusal(unread: bytes) -> tuple[int, str]:
    """The status and detail for a request h11 refused, from what it had not read of it."""
    if len(unread) <= REQUEST_HEAD_BYTES:
        return 400, "the request is not HTTP/1.1 this server can read"
    if b"\n" not in unread:
        return 414, f"the request line must fit in {REQUEST_HEAD_BYTES} bytes: send a shorter URL"
    return 431, f"the request line and headers must fit in {REQUEST_HEAD_BYTES} bytes"
