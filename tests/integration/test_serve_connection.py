"""Bad input to a real `agent-memory serve` (over DynamoDB Local) is answered on a connection that stays open: an
unexpected error used to be a 500 after which the server dropped the client's keep-alive connection."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from urllib.parse import quote, urlsplit

import pytest

# About 2,040 bytes and up a tag no longer fits in a DynamoDB key (2,048 bytes); q is never part of a key.
QUERIES = [
    "tag=" + "a" * 2040,
    "tag=" + "a" * 3000,
    "tag=" + quote("é" * 1500),
    "tag=two%20words",
    "q=" + "a" * 256,
    "tag=travel&q=" + quote("ü" * 256),
]


@pytest.fixture
def connection(shared_serve: tuple[str, str]) -> Iterator[http.client.HTTPConnection]:
    base = urlsplit(shared_serve[0])
    assert base.hostname is not None
    opened = http.client.HTTPConnection(base.hostname, base.port, timeout=30)
    yield opened
    opened.close()


def test_every_search_on_one_keep_alive_connection_is_answered_on_it(
    shared_serve: tuple[str, str], connection: http.client.HTTPConnection
) -> None:
    _, key = shared_serve
    headers = {"Authorization": f"Bearer {key}"}
    sockets = []

    for query in [*QUERIES, "tag=travel"]:
        connection.request("GET", f"/memories?{query}", headers=headers)
        response = connection.getresponse()
        body = response.read()
        sockets.append(connection.sock)

        assert response.status == 200, (query[:40], body[:300])
        assert response.getheader("connection") != "close", query[:40]
    # http.client opens another connection when the server closed the last one.
    assert all(sock is sockets[0] for sock in sockets)
