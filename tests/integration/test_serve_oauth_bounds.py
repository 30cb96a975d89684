"""Bounds a real `agent-memory serve` (over a table of its own in the session's DynamoDB Local) keeps for callers it
does not trust: client documents that stall are fetched only a few at a time, so they never hold up the worker
threads another caller's storage calls need; a forwarded address is trusted only when serve is told to (so the
registration bound per address holds from loopback); a request line or header too long to read is answered 414 or
431, not a reset connection."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
import pytest

from core.limits import MAX_DOCUMENT_FETCHES_PER_HOST, REGISTRATIONS_PER_CALLER
from tests.conftest import serving
from tests.document_server import Answer, DocumentServer, document_server

WAIT = 120  # seconds: a generous ceiling on every wait, never a speed claim
# More stalling documents at once than serve has worker threads (anyio's 40), which storage calls share.
STALLS = 50
REDIRECT_URI = "http://127.0.0.1:53682/callback"


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DocumentServer]:
    with document_server(tmp_path_factory.mktemp("serve-documents")) as server:
        yield server


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, documents: DocumentServer, dynamodb_local_endpoint: str
) -> Iterator[tuple[str, str]]:
    """A serve that trusts the document server's CA (the test-only setting), and its first key. Its store is a fresh
    table in the session's DynamoDB Local: no engine of its own to start, and none on serve's default port, which
    another test run on the machine may hold."""
    store = ["--endpoint-url", dynamodb_local_endpoint, "--table", f"oauth-bounds-{uuid.uuid4().hex[:12]}"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TEST_ONLY_CLIENT_METADATA_CA", documents.ca_file)
        with serving(Path(tmp_path_factory.mktemp("serve-oauth-bounds")), *store) as (base, key):
            yield base, key


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.05)


def authorize(client: httpx2.Client, client_id: str) -> httpx2.Response:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "code_challenge": "c" * 43,
        "code_challenge_method": "S256",
    }
    return client.get("/authorize", params=params)


def list_memories(base: str, key: str) -> httpx2.Response:
    with httpx2.Client(base_url=base, timeout=WAIT) as client:
        return client.get("/memories", headers={"Authorization": f"Bearer {key}"})


def test_client_documents_that_stall_never_hold_up_another_callers_storage_calls(
    served: tuple[str, str], documents: DocumentServer
) -> None:
    base, key = served
    assert list_memories(base, key).status_code == 200  # the key verified and cached, as for any caller in session
    release = threading.Event()
    urls = [documents.serve(f"/stall/{number}.json", Answer(b"gone", 404, hold=release)) for number in range(STALLS)]
    # One client for every request (one connection each): its making, not serve, would otherwise take the time.
    client = httpx2.Client(base_url=base, timeout=WAIT, limits=httpx2.Limits(max_connections=STALLS))
    try:
        with client, ThreadPoolExecutor(max_workers=STALLS) as pool:
            asked = [pool.submit(authorize, client, url) for url in urls]
            # Each request answered or its fetch held open by the document server: every one has had its turn.
            wait_for(lambda: sum(f.done() for f in asked) + documents.holding >= STALLS, "every /authorize underway")

            listed = list_memories(base, key)
            answered_meanwhile = [future.result() for future in asked if future.done()]
            held_meanwhile = documents.holding

            release.set()
            answers = [future.result(timeout=WAIT) for future in asked]
    finally:
        release.set()

    assert listed.status_code == 200, listed.text
    # No fetch had reached its deadline: the list was answered while the stalls were still being waited for.
    assert not [answer.text for answer in answered_meanwhile if "not served within" in answer.text]
    assert 1 <= held_meanwhile <= MAX_DOCUMENT_FETCHES_PER_HOST  # the stalls were still held open
    for answer in answers:
        assert (answer.status_code, answer.headers["content-type"]) == (400, "application/json"), answer.text
        assert answer.json()["error"] == "invalid_client"
    refused = [answer for answer in answers if "too many client documents are being fetched" in answer.text]
    assert len(refused) >= STALLS - MAX_DOCUMENT_FETCHES_PER_HOST


def test_registrations_from_loopback_count_against_one_address_whatever_x_forwarded_for_says(
    served: tuple[str, str],
) -> None:
    base, _ = served
    metadata = {"client_name": "Forwarded", "redirect_uris": [REDIRECT_URI]}

    with httpx2.Client(base_url=base, timeout=WAIT) as client:
        statuses = [
            client.post("/register", json=metadata, headers={"X-Forwarded-For": f"198.51.100.{number}"}).status_code
            for number in range(REGISTRATIONS_PER_CALLER + 1)
        ]

    assert statuses == [201] * REGISTRATIONS_PER_CALLER + [429]


@pytest.mark.parametrize(
    ("target", "headers", "status"),
    [
        ("/recall?query=" + "a" * 1_000_000, {}, 414),
        ("/memories", {"X-Padding": "a" * 1_000_000}, 431),
    ],
    ids=["request line", "header"],
)
def test_a_request_line_or_header_too_long_to_read_is_answered_as_a_problem_not_a_reset_connection(
    served: tuple[str, str], target: str, headers: dict[str, str], status: int
) -> None:
    base, key = served
    where = urlsplit(base)
    assert where.hostname is not None
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=WAIT)
    try:
        connection.request("GET", target, headers={"Authorization": f"Bearer {key}", **headers})
        response = connection.getresponse()
        body = response.read()
    finally:
        connection.close()

    assert response.status == status, body[:300]
    assert response.getheader("content-type") == "application/problem+json"
    assert response.getheader("connection") == "close"
    problem = json.loads(body)
    assert (problem["status"], problem["type"]) == (status, "urn:agent-memory:problem:http-error")


def test_a_request_that_is_not_http_is_answered_400_as_a_problem(served: tuple[str, str]) -> None:
    where = urlsplit(served[0])
    assert where.hostname is not None
    assert where.port is not None

    with socket.create_connection((where.hostname, where.port), timeout=WAIT) as connection:
        connection.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        answer = b"".join(iter(lambda: connection.recv(65536), b""))

    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 "), answer[:300]
    assert b"content-type: application/problem+json" in head.lower()
    assert json.loads(body)["status"] == 400
