"""`serve` while storage stalls: the app serve runs, behind a real uvicorn, over a DynamoDB endpoint that accepts
connections and never answers, so botocore's read timeout ends each attempt. Every concurrent request gets its 503
problem+json after the documented 3 attempts, and /healthz answers while they are all still waiting, then says it is
degraded once they have failed."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import pytest
import uvicorn

from adapters.dynamodb import POOL_CONNECTIONS, STAMP_CONCURRENCY, make_client
from handlers import bootstrap
from handlers.auth import Authenticator, key_authenticator, open_access
from local import serve as cli
from tests.conftest import EVENT_API_KEY, REGION, free_port

# Within botocore's retry quota: a client's 500 tokens pay for 35 retries (14 each) before it stops retrying, as a
# circuit breaker does; here at most 5 x 2 x 2 + 5 x 2 = 30 (a read that stamps makes two calls at once).
CONCURRENT = 10
# Short timeouts keep the test short; the bound is the same: 3 attempts, then a 503.
READ_TIMEOUT = 2
ATTEMPTS = 3
WAIT = 120  # seconds: a generous ceiling on every wait, never a speed claim


class StalledStorage:
    """A TCP endpoint that accepts every connection and never answers, as a stalled DynamoDB looks to a client."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=256)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._lock = threading.Lock()
        self._accepted: list[socket.socket] = []
        threading.Thread(target=self._accept, name="stalled-storage", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return  # closed
            with self._lock:
                self._accepted.append(connection)

    @property
    def accepted(self) -> int:
        with self._lock:
            return len(self._accepted)

    def close(self) -> None:
        self._listener.close()
        with self._lock:
            for connection in self._accepted:
                connection.close()


@pytest.fixture
def storage() -> Iterator[StalledStorage]:
    stalled = StalledStorage()
    yield stalled
    stalled.close()


def running(app: Any) -> tuple[uvicorn.Server, threading.Thread, str]:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, name="serve", daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT
    while not server.started:
        assert thread.is_alive(), "uvicorn stopped before it started"
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    return server, thread, f"http://127.0.0.1:{port}"


def wait_for(condition: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.05)


def send(base: str, method: str, path: str, **options: Any) -> httpx2.Response:
    with httpx2.Client(base_url=base, timeout=WAIT) as http:
        return http.request(method, path, **options)


KEY = {"authorization": f"Bearer {EVENT_API_KEY}"}
MCP = {"accept": "application/json, text/event-stream", "content-type": "application/json", **KEY}
SEARCH = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search_memories", "arguments": {}}}
# Each request, with the number of storage calls it makes at once before it fails: a key lookup, or the route's
# first calls (a read that stamps writes the access item while it reads the record).
REQUESTS: dict[str, list[tuple[str, str, dict[str, Any], int]]] = {
    "key lookups on both doors": [
        ("GET", "/memories", {"headers": KEY}, 1),
        ("POST", "/mcp", {"json": SEARCH, "headers": MCP}, 1),
    ],
    "route calls (--no-auth)": [
        ("GET", "/memories/1", {}, 2),
        ("POST", "/memories", {"json": {"content": "The user keeps bees"}}, 1),
    ],
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(REQUESTS))
def test_while_storage_stalls_every_concurrent_request_gets_its_503_after_three_attempts_and_healthz_answers(
    kind: str, storage: StalledStorage
) -> None:
    client = make_client(storage.url, REGION, connect_timeout=1, read_timeout=READ_TIMEOUT)
    services = bootstrap.build_services(bootstrap.Settings(endpoint_url=storage.url), client)
    authenticate: Authenticator = open_access() if kind.endswith("(--no-auth)") else key_authenticator(services.keys)
    server, thread, base = running(cli.serve_app(services, authenticate))
    calls = [REQUESTS[kind][i % len(REQUESTS[kind])] for i in range(CONCURRENT)]
    try:
        with ThreadPoolExecutor(max_workers=CONCURRENT) as pool:
            stalled: list[Future[httpx2.Response]] = [
                pool.submit(send, base, method, path, **options) for method, path, options, _ in calls
            ]
            wait_for(lambda: storage.accepted >= CONCURRENT, f"{CONCURRENT} requests waiting on storage at once")

            health = send(base, "GET", "/healthz")
            still_waiting = sum(not future.done() for future in stalled)

            answers = [future.result(timeout=WAIT) for future in stalled]
            after = send(base, "GET", "/healthz")
    finally:
        server.should_exit = True
        thread.join(timeout=WAIT)

    assert (health.status_code, health.json()) == (200, {"status": "ok"})
    assert still_waiting == CONCURRENT  # /healthz answered while every stalled request was still waiting
    # Once storage calls have failed (and none succeeded since), /healthz says so.
    assert after.status_code == 503
    assert after.json()["status"] == "degraded"
    assert "(no answer in time); none has succeeded since" in after.json()["reason"]
    for answer in answers:
        assert answer.status_code == 503, answer.text
        assert answer.headers["content-type"] == "application/problem+json"
        assert answer.headers["retry-after"] == "1"
        assert answer.json()["type"] == "urn:agent-memory:problem:storage-unavailable"
    # Each call of each request: exactly 3 attempts, none skipped or added (and none left running after its answer).
    assert storage.accepted == ATTEMPTS * sum(made for *_, made in calls)


def test_the_connection_pool_holds_one_connection_per_thread_that_can_call_storage_at_once() -> None:
    async def worker_threads() -> int:
        return int(anyio.to_thread.current_default_thread_limiter().total_tokens)

    config: Any = make_client("http://127.0.0.1:9", REGION).meta.config  # botocore-stubs omit the options

    assert config.max_pool_connections == POOL_CONNECTIONS
    assert anyio.run(worker_threads) + STAMP_CONCURRENCY <= POOL_CONNECTIONS
