"""`serve` says on stderr, first, when it runs with a setting meant for tests only (issue 42, item 11): with
TEST_ONLY_CLIENT_METADATA_CA set it trusts that CA for Client ID Metadata Documents and fetches them from loopback
addresses, which no deployment may do."""

from __future__ import annotations

import socket

import pytest

from local import cli


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_refused_on_a_busy_port(capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    """`serve` started on a port another program holds: it says what it says at startup, then refuses to start."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        code = cli.main(["serve", "--port", str(holder.getsockname()[1]), "--ddb-port", str(free_port())])
    return code, capsys.readouterr().err.splitlines()


@pytest.fixture(autouse=True)
def no_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    def must_not_start(*args: object) -> None:
        raise AssertionError("serve started its engine")

    monkeypatch.setattr("local.engines.DynamoDBLocal", must_not_start)
    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB", raising=False)


def test_serve_warns_in_one_line_first_when_the_test_only_client_document_ca_is_set(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_ONLY_CLIENT_METADATA_CA", "/tmp/test-ca.pem")

    code, err = serve_refused_on_a_busy_port(capsys)

    assert code == 1
    assert [line for line in err if "TEST_ONLY_CLIENT_METADATA_CA" in line] == [err[0]]
    assert "tests only" in err[0]
    assert "/tmp/test-ca.pem" in err[0]
    assert "loopback" in err[0]


def test_serve_says_nothing_of_it_when_it_is_not_set(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TEST_ONLY_CLIENT_METADATA_CA", raising=False)

    code, err = serve_refused_on_a_busy_port(capsys)

    assert code == 1
    assert [line for line in err if "TEST_ONLY" in line] == []
