"""`serve` answers its health probes in the listener (local.listener), off the path every other request takes: a probe
is answered while the app holds every worker thread and every request it was given, and never reaches the app; it
says what the app's /healthz says (degraded with the reason, from the process's storage health). Whatever the
listener leaves alone (anything but a lone `GET /healthz` between requests, or every probe once health steps aside)
is the app's, as before. The server runs in a thread on a free port; nothing waits a while to see nothing happen."""

from __future__ import annotations

import http.client
import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import anyio.to_thread
import pytest
import uvicorn
from starlette.types import Receive, Scope, Send

from core.health import StorageHealth
from local.engine_watch import probe_answer
from local.listener import Health, server_config
from tests.conftest import free_port

WAIT = 60  # seconds: a generous ceiling on every wait, never a speed claim
# anyio's default limiter: every blocking call `serve` runs takes one of its worker threads.
WORKER_THREADS = 40


class HoldingApp:
    """An ASGI app standing in for serve's doors: a request for /held takes a worker thread and holds it until
    `release` is set; any other is answered 200 with the path it was given. `seen` lists every path it was given."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.seen: list[str] = []
        self.holding = 0
        self._lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        with self._lock:
            self.seen.append(scope["path"])
        if scope["path"] == "/held":
            await anyio.to_thread.run_sync(self._hold)
        body = json.dumps({"app": scope["path"]}).encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})

    def _hold(self) -> None:
        with self._lock:
            self.holding += 1
        self.release.wait()


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.01)


@contextmanager
def listening(app: HoldingApp, health: Health | None) -> Iterator[int]:
    """The app behind serve's listener (as `serve` configures uvicorn), answering probes with `health`; its port."""
    port = free_port()
    server = uvicorn.Server(server_config(app, "127.0.0.1", port, health=health))
    thread = threading.Thread(target=server.run, name="serve", daemon=True)
    thread.start()
    wait_for(lambda: server.started or not thread.is_alive(), "uvicorn started")
    assert server.started
    try:
        yield port
    finally:
        app.release.set()
        server.should_exit = True
        thread.join(timeout=WAIT)


def get(port: int, path: str, method: str = "GET", **options: Any) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    try:
        connection.request(method, path, **options)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def exchange(port: int, raw: bytes) -> bytes:
    """What the server answers to `raw`, written in one piece, up to its closing the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as sock:
        sock.sendall(raw)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def test_a_probe_is_answered_by_the_listener_while_the_app_holds_every_worker_thread() -> None:
    app = HoldingApp()
    with (
        listening(app, probe_answer(StorageHealth(), None)) as port,
        ThreadPoolExecutor(max_workers=WORKER_THREADS) as clients,
    ):
        try:
            held = [clients.submit(get, port, "/held") for _ in range(WORKER_THREADS)]
            wait_for(lambda: app.holding == WORKER_THREADS, "every worker thread held by the app")

            status, headers, body = get(port, "/healthz")
            still_held = sum(not request.done() for request in held)
        finally:
            app.release.set()
        answers = [request.result(timeout=WAIT) for request in held]

    assert (status, json.loads(body)) == (200, {"status": "ok"})
    assert headers["content-type"] == "application/json"
    assert still_held == WORKER_THREADS  # answered while every held request was still waiting
    assert "/healthz" not in app.seen
    assert [answer[0] for answer in answers] == [200] * WORKER_THREADS


def test_a_probe_while_storage_calls_fail_says_degraded_with_the_reason_as_the_app_would() -> None:
    health = StorageHealth()
    health.failed("ThrottlingException")
    app = HoldingApp()
    with listening(app, probe_answer(health, None)) as port:
        status, headers, body = get(port, "/healthz")

    assert status == 503
    assert headers["content-type"] == "application/json"
    assert json.loads(body)["status"] == "degraded"
    assert "(ThrottlingException); none has succeeded since" in json.loads(body)["reason"]
    assert app.seen == []


@pytest.mark.parametrize(
    ("method", "path", "options"),
    [
        ("HEAD", "/healthz", {}),
        ("GET", "/healthz?verbose=1", {}),
        ("POST", "/healthz", {"body": b"{}"}),
        ("GET", "/healthz", {"headers": {"Content-Length": "0"}}),
        ("GET", "/healthz/", {}),
    ],
)
def test_a_request_that_is_not_a_lone_plain_probe_goes_to_the_app(method: str, path: str, options: Any) -> None:
    app = HoldingApp()
    with listening(app, probe_answer(StorageHealth(), None)) as port:
        status, _, _ = get(port, path, method, **options)

    assert status == 200
    assert app.seen == [path.partition("?")[0]]


def test_a_probe_pipelined_with_another_request_goes_to_the_app_with_it() -> None:
    app = HoldingApp()
    probe = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    with listening(app, probe_answer(StorageHealth(), None)) as port:
        answer = exchange(port, probe + b"GET /other HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")

    assert answer.count(b"HTTP/1.1 200 OK") == 2
    assert app.seen == ["/healthz", "/other"]


def test_once_health_steps_aside_probes_go_to_the_app() -> None:
    app = HoldingApp()
    with listening(app, lambda: None) as port:
        status, _, body = get(port, "/healthz")

    assert (status, json.loads(body)) == (200, {"app": "/healthz"})
    assert app.seen == ["/healthz"]


def test_probes_and_requests_share_a_kept_alive_connection_until_a_probe_asks_to_close_it() -> None:
    app = HoldingApp()
    with listening(app, probe_answer(StorageHealth(), None)) as port:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
        answers = []
        for path in ("/healthz", "/other", "/healthz", "/healthz"):
            connection.request("GET", path)
            response = connection.getresponse()
            answers.append((response.status, json.loads(response.read())))
        connection.request("GET", "/healthz", headers={"Connection": "close"})
        last = connection.getresponse()
        closing = (last.status, last.getheader("connection"), json.loads(last.read()))
        left = connection.sock.recv(1) if connection.sock is not None else b""
        connection.close()

    ok = (200, {"status": "ok"})
    assert answers == [ok, (200, {"app": "/other"}), ok, ok]
    assert closing == (200, "close", {"status": "ok"})
    assert left == b""  # the server closed the connection
    assert app.seen == ["/other"]


def test_a_probe_the_server_cannot_read_gets_its_400_problem() -> None:
    app = HoldingApp()
    with listening(app, probe_answer(StorageHealth(), None)) as port:
        answer = exchange(port, b"GET /healthz HTTP/1.1\r\n\r\n")  # no Host: not HTTP/1.1

    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ")
    assert b"content-type: application/problem+json" in head.lower()
    assert json.loads(body)["status"] == 400
    assert app.seen == []


def test_a_probe_answered_by_the_listener_has_its_access_line_like_any_request() -> None:
    lines: list[str] = []

    class Lines(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    app = HoldingApp()
    handler = Lines()
    with listening(app, probe_answer(StorageHealth(), None)) as port:
        logging.getLogger("uvicorn.access").addHandler(handler)
        try:
            get(port, "/healthz")
            get(port, "/other")
        finally:
            logging.getLogger("uvicorn.access").removeHandler(handler)

    assert [line.partition(" - ")[2] for line in lines] == ['"GET /healthz HTTP/1.1" 200', '"GET /other HTTP/1.1" 200']
