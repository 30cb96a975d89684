"""HttpsDocumentFetcher (adapters.https) against a real https server on 127.0.0.1 (tests.document_server),
which only the test-only CA setting lets through: it reads a document, and refuses what an SSRF-safe fetch must
(an address that is not public, every resolved address checked and the checked one connected to, a redirect, an
answer too large, too slow or trickled past the deadline, a certificate it cannot trust)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.https import HttpsDocumentFetcher
from core.clientdocs.document import ClientDocumentError, document_url
from tests.document_server import Answer, DocumentServer, document_server, new_authority


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DocumentServer]:
    with document_server(tmp_path_factory.mktemp("documents")) as server:
        yield server


def fetch(server: DocumentServer, path: str, **bounds: Any) -> bytes:
    fetcher = HttpsDocumentFetcher(test_loopback_ca=server.ca_file, **bounds)
    return fetcher(document_url(f"{server.base}{path}")).body


def refusal(server: DocumentServer, path: str, **bounds: Any) -> str:
    with pytest.raises(ClientDocumentError) as refused:
        fetch(server, path, **bounds)
    return refused.value.reason


def test_a_document_is_read_with_its_cache_control(server: DocumentServer) -> None:
    url = server.document(
        "/read.json", headers={"Cache-Control": "max-age=900"}, redirect_uris=["https://a.example/cb"]
    )
    fetcher = HttpsDocumentFetcher(test_loopback_ca=server.ca_file)

    fetched = fetcher(document_url(url))

    assert fetched.body.startswith(b'{"client_id": "https://127.0.0.1:')
    assert fetched.cache_control == "max-age=900"


def test_without_the_test_only_ca_setting_a_loopback_server_is_refused_before_any_connection(
    server: DocumentServer,
) -> None:
    url = server.document("/loopback.json")
    requests_before = len(server.requested)

    with pytest.raises(ClientDocumentError) as refused:
        HttpsDocumentFetcher()(document_url(url))

    assert "resolves to 127.0.0.1, which is not a public address" in refused.value.reason
    assert len(server.requested) == requests_before


@pytest.mark.parametrize("host", ["10.0.0.1", "169.254.169.254", "[::1]", "[fd00::1]", "localhost"])
def test_a_host_that_is_or_names_no_public_address_is_refused(host: str) -> None:
    with pytest.raises(ClientDocumentError) as refused:
        HttpsDocumentFetcher(timeout_seconds=1)(document_url(f"https://{host}/client.json"))

    assert "which is not a public address" in refused.value.reason


def test_every_address_a_name_resolves_to_must_be_public_and_the_checked_one_is_the_one_connected_to(
    server: DocumentServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = int(server.base.rsplit(":", 1)[1])
    lookups: list[str] = []

    def resolve(host: str, *_: Any, **__: Any) -> list[Any]:
        lookups.append(host)
        loopback = (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))
        private = (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.1.2.3", port))
        return [loopback] if host == "rebinding.test" else [loopback, private]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    server.document("/rebinding.json")
    fetcher = HttpsDocumentFetcher(test_loopback_ca=server.ca_file)

    with pytest.raises(ClientDocumentError) as mixed:
        fetcher(document_url("https://mixed.test/rebinding.json"))
    with pytest.raises(ClientDocumentError) as named:  # connected to 127.0.0.1, checked for the name
        fetcher(document_url(f"https://rebinding.test:{port}/rebinding.json"))

    assert "resolves to 10.1.2.3" in mixed.value.reason
    assert "TLS failed" in named.value.reason  # the certificate is for 127.0.0.1, not for the name
    assert lookups == ["mixed.test", "rebinding.test"]  # one resolution each: nothing resolved again to connect


def test_a_redirect_is_refused_not_followed(server: DocumentServer) -> None:
    target = server.document("/target.json")
    server.serve("/moved.json", Answer(status=302, headers={"Location": target}))
    requests_before = len(server.requested)

    reason = refusal(server, "/moved.json")

    assert reason == "it answered a redirect (302): none is followed"
    assert server.requested[requests_before:] == ["/moved.json"]


def test_an_answer_other_than_200_is_refused(server: DocumentServer) -> None:
    assert refusal(server, "/missing.json") == "it answered 404, not 200"


def test_a_document_over_the_size_bound_is_refused(server: DocumentServer) -> None:
    server.serve("/exact.json", Answer(b" " * 1000))
    server.serve("/large.json", Answer(b" " * 1001))

    assert fetch(server, "/exact.json", max_bytes=1000) == b" " * 1000
    assert refusal(server, "/large.json", max_bytes=1000) == "it is larger than 1000 bytes"


@pytest.mark.parametrize("size", [b"f" * 40, b"7fffffffffffffff", b"-1", b"x"])
def test_a_chunked_answer_with_a_chunk_size_that_cannot_be_read_is_refused_as_no_whole_response(
    server: DocumentServer, size: bytes
) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    server.serve(f"/chunked-{size[:8].decode()}.json", Answer(raw=head + size + b"\r\n{}\r\n0\r\n\r\n"))

    assert refusal(server, f"/chunked-{size[:8].decode()}.json") == "its server did not answer a whole HTTP response"


def test_a_server_that_does_not_answer_in_time_is_refused(server: DocumentServer) -> None:
    server.serve("/slow.json", Answer(b"{}", delay=3))

    assert refusal(server, "/slow.json", timeout_seconds=0.5) == "it was not served within 0.5 s"


def test_a_body_trickled_byte_by_byte_past_the_deadline_is_refused_though_each_byte_comes_soon(
    server: DocumentServer,
) -> None:
    server.serve("/trickle.json", Answer(b"x" * 100, trickle=0.05))

    assert refusal(server, "/trickle.json", timeout_seconds=1) == "it was not served within 1 s"


def test_a_certificate_of_another_authority_is_refused(server: DocumentServer, tmp_path: Path) -> None:
    server.document("/untrusted.json")
    stranger = new_authority("a stranger").write(tmp_path / "stranger.pem")

    with pytest.raises(ClientDocumentError) as refused:
        HttpsDocumentFetcher(test_loopback_ca=stranger)(document_url(f"{server.base}/untrusted.json"))

    assert "TLS failed (CERTIFICATE_VERIFY_FAILED)" in refused.value.reason
