"""How `serve`'s uvicorn listens: which forwarded headers it trusts (none unless told), and its HTTP/1.1 protocol,
uvicorn's own except for two requests. One it cannot read is answered with a problem document that reaches the client
(414 or 431 for a head too long, 400 otherwise), where uvicorn closed the connection on the unread rest of the
request, which reset it, so the client saw no answer at all. A health probe (`GET /healthz`) is answered by the
protocol itself, off the request path every other request takes (a task, the app, worker threads): under searches
and recalls that hold the GIL in worker threads, each step the event loop takes waits to get it back, and a probe
answered where it is read takes 3 such steps (read, answer, write) where one through the app takes 6."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from http import HTTPStatus
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
# The probe the protocol answers itself: its request line exactly (no query, HTTP/1.1).
HEALTH_PROBE: Final = b"GET /healthz HTTP/1.1\r\n"
# A probe with any of these headers is the app's to answer: a body, an upgrade or an expectation is beyond a probe.
_BEYOND_A_PROBE: Final = (b"\r\ncontent-length:", b"\r\ntransfer-encoding:", b"\r\nupgrade:", b"\r\nexpect:")

# /healthz's status and JSON body as the app would answer it now, or None to leave the probe to the app.
Health = Callable[[], tuple[int, bytes] | None]


def server_config(
    app: ASGIApp, host: str, port: int, forwarded_allow_ips: str | None = None, health: Health | None = None
) -> uvicorn.Config:
    """uvicorn's configuration for `serve`: X-Forwarded-For and X-Forwarded-Proto are trusted only from the proxies
    `forwarded_allow_ips` names (uvicorn's syntax: addresses or networks, comma-separated, `*` for any), else from
    nobody: a caller's address is the peer's (the registration bound counts it), however it labels itself. With
    `health`, the protocol answers health probes with it (ReadableOrAnswered.answered_probe)."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="info",
        log_config=log_config(),
        http=ReadableOrAnswered if health is None else _answering(health),
        h11_max_incomplete_event_size=REQUEST_HEAD_BYTES,
        proxy_headers=forwarded_allow_ips is not None,
        forwarded_allow_ips=forwarded_allow_ips,
    )


class ReadableOrAnswered(H11Protocol):
    """uvicorn's h11 protocol, answering a request it cannot read with a problem document (414 for a request line
    too long, 431 for headers, 400 for anything else h11 refuses), then lingering: it shuts its side, and reads and
    drops what the client still sends until the client closes (LINGER_SECONDS, LINGER_BYTES). A health probe is
    answered where it is read when `health` answers it (answered_probe).

    It overrides methods of uvicorn's protocol class and reads its connection, transport, server state and access
    logger, none of them uvicorn's public API: core.reaches lists the uvicorn and h11 it was checked against, and an
    upgrade of either fails the tests until the overrides are checked again."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lingered: int | None = None  # bytes dropped since the answer; None until then
        self._linger_end: asyncio.TimerHandle | None = None

    def health(self) -> tuple[int, bytes] | None:
        """/healthz's answer now, or None to leave probes to the app: always None here (server_config's `health`
        answers them)."""
        return None

    def data_received(self, data: bytes) -> None:
        if self._lingered is None:
            if not self.answered_probe(data):
                super().data_received(data)
            return
        self._lingered += len(data)
        if self._lingered > LINGER_BYTES:
            self.transport.close()

    def answered_probe(self, data: bytes) -> bool:
        """Whether `data` was one whole health probe on a connection between requests, and is answered: one write,
        no task and no app, its access line written after it. Anything else (another request, a probe with a query,
        a body or a pipelined request behind it, a connection mid-request) goes the usual way, to the app."""
        lone = data.startswith(HEALTH_PROBE) and data.endswith(b"\r\n\r\n") and data.count(b"\r\n\r\n") == 1
        between_requests = self.conn.our_state is h11.IDLE and self.conn.their_state is h11.IDLE
        if not lone or not between_requests or self.conn.trailing_data[0]:
            return False
        head = data.lower()
        answer = None if any(field in head for field in _BEYOND_A_PROBE) else self.health()
        if answer is None:
            return False
        self.conn.receive_data(data)
        try:
            events = [self.conn.next_event(), self.conn.next_event()]  # the request, then its end (it has no body)
        except h11.RemoteProtocolError:
            self.handle_events()  # h11 refuses it again there, and uvicorn answers it (send_400_response)
            return True
        if not isinstance(events[-1], h11.EndOfMessage):  # unreachable with the checks above; never answer half
            self.transport.close()
            return True
        status, body = answer
        self._answer(status, body)
        return True

    def _answer(self, status: int, body: bytes) -> None:
        """Write a complete JSON answer to the request h11 has just read, as uvicorn would (its date and server
        headers, its access line), then end the cycle as uvicorn does (keep-alive timer, the next request)."""
        headers = [
            *self.server_state.default_headers,
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ]
        response = h11.Response(status_code=status, headers=headers, reason=HTTPStatus(status).phrase.encode())
        events = (response, h11.Data(data=body), h11.EndOfMessage())
        self.transport.write(b"".join(self.conn.send(event) or b"" for event in events))
        if self.access_log:
            client = f"{self.client[0]}:{self.client[1]}" if self.client else ""  # as uvicorn's own access line
            self.access_logger.info('%s - "%s %s HTTP/%s" %d', client, "GET", "/healthz", "1.1", status)
        if self.conn.our_state is h11.MUST_CLOSE:
            self.conn.send(h11.ConnectionClosed())
            self.transport.close()
        self.on_response_complete()

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


def _answering(health: Health) -> type[ReadableOrAnswered]:
    """The protocol, answering health probes with `health` (uvicorn builds one protocol per connection)."""

    class AnsweringProbes(ReadableOrAnswered):
        def health(self) -> tuple[int, bytes] | None:
            return health()

    return AnsweringProbes


def _refusal(unread: bytes) -> tuple[int, str]:
    """The status and detail for a request h11 refused, from what it had not read of it."""
    if len(unread) <= REQUEST_HEAD_BYTES:
        return 400, "the request is not HTTP/1.1 this server can read"
    if b"\n" not in unread:
        return 414, f"the request line must fit in {REQUEST_HEAD_BYTES} bytes: send a shorter URL"
    return 431, f"the request line and headers must fit in {REQUEST_HEAD_BYTES} bytes"
