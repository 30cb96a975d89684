"""`agent-memory keys create|list|revoke` over moto (`--aws`, intercepted by moto), their refusals, and `serve`
refusing `--no-auth` on a host other than loopback."""

from __future__ import annotations

import io
import json
import re
import shutil
import socket
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from core.clock import Clock, utc_now
from core.errors import AuthenticationError
from core.hosts import is_loopback
from core.keys import KeyService
from local import cli, portability
from tests.conftest import Engine, FakeClock

KEY = re.compile(r"am_[0-9a-f]{12}_[A-Za-z0-9_-]{43}")


@pytest.fixture
def run(moto_table: str, capsys: pytest.CaptureFixture[str]) -> Any:
    """`agent-memory keys ...` against moto_table; returns (exit code, stdout, stderr)."""

    def run(*arguments: str, clock: Clock = utc_now) -> tuple[int, str, str]:
        code = cli.main(["keys", *arguments, "--aws", "--table", moto_table], clock=clock)
        out, err = capsys.readouterr()
        return code, out, err

    return run


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- keys create ---


def test_create_json_prints_the_key_its_id_namespace_and_scopes_and_the_key_works(
    run: Any, moto_keys: KeyService
) -> None:
    code, out, _ = run("create", "--namespace", "alice", "--json")

    printed = json.loads(out)
    assert code == 0
    assert set(printed) == {"key", "key_id", "namespace", "scopes", "name"}
    assert (printed["namespace"], printed["scopes"], printed["name"]) == ("alice", ["read", "write"], None)
    assert printed["key"].startswith(f"am_{printed['key_id']}_")
    principal = moto_keys.authenticate(printed["key"])
    assert (principal.namespace, principal.key_id) == ("alice", printed["key_id"])


def test_create_prints_the_key_exactly_once_with_what_it_can_do(run: Any) -> None:
    code, out, _ = run("create", "--namespace", "alice")

    assert code == 0
    (token,) = KEY.findall(out)
    assert out.count(token) == 1
    assert "namespace alice" in out
    assert "only this once" in out
    assert "Authorization: Bearer <key>" in out


def test_create_with_a_name_stores_it_trimmed_and_list_shows_it(run: Any, moto_keys: KeyService) -> None:
    code, out, _ = run("create", "--namespace", "alice", "--name", "  Ana's laptop ", "--json")

    (key,) = moto_keys.list()
    assert code == 0
    assert json.loads(out)["name"] == key.name == "Ana's laptop"
    assert json.loads(run("list", "--json")[1])[0]["name"] == "Ana's laptop"
    header, row = run("list")[1].splitlines()
    assert header.split()[-1] == "NAME"
    assert row.endswith("Ana's laptop")


@pytest.mark.parametrize(
    ("expires_in", "expected"),
    [("30d", "2026-05-06T14:12"), ("12h", "2026-04-07T02:12"), ("90m", "2026-04-06T15:42")],
)
def test_create_with_scopes_and_a_lifetime_stores_them(
    run: Any, moto_keys: KeyService, clock: FakeClock, expires_in: str, expected: str
) -> None:
    code, _, _ = run("create", "--namespace", "alice", "--scopes", "read", "--expires-in", expires_in, clock=clock)

    (key,) = moto_keys.list()
    assert code == 0
    assert key.scopes == ("read",)
    assert key.expires_at is not None
    assert key.expires_at.startswith(expected)


@pytest.mark.parametrize(
    "arguments",
    [
        ["--namespace", "Alice"],
        ["--namespace", ""],
        ["--namespace", "alice", "--scopes", "admin"],
        ["--namespace", "alice", "--scopes", "read,admin"],
        ["--namespace", "alice", "--scopes", ","],
        ["--namespace", "alice", "--expires-in", "30"],
        ["--namespace", "alice", "--expires-in", "0d"],
        ["--namespace", "alice", "--expires-in", "1w"],
        ["--namespace", "alice", "--expires-in", "-1d"],
        ["--namespace", "alice", "--name", "  "],
        ["--namespace", "alice", "--name", "n" * 65],
        [],
    ],
    ids=lambda arguments: " ".join(arguments) or "no namespace",
)
def test_create_refuses_bad_arguments_with_a_usage_error_and_creates_nothing(
    run: Any, moto_keys: KeyService, arguments: list[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        run("create", *arguments)

    assert exited.value.code == 2
    assert moto_keys.list() == ()


# --- keys list ---


def test_list_shows_each_key_its_namespace_scopes_and_state_but_never_a_secret(run: Any, moto_keys: KeyService) -> None:
    alice, alice_token = moto_keys.create("alice")
    bob, bob_token = moto_keys.create("bob", ["read"])
    moto_keys.revoke(bob.key_id)

    code, out, _ = run("list")

    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["KEY", "ID", "NAMESPACE", "SCOPES", "STATE", "CREATED", "EXPIRES", "NAME"]
    assert lines[1].split()[:4] == [alice.key_id, "alice", "read,write", "active"]
    assert lines[2].split()[:4] == [bob.key_id, "bob", "read", "revoked"]
    for secret in (alice_token, bob_token, alice.secret_hash, bob.secret_hash):
        assert secret not in out


def test_list_json_of_one_namespace(run: Any, moto_keys: KeyService) -> None:
    alice, _ = moto_keys.create("alice")
    moto_keys.create("bob")

    code, out, _ = run("list", "--namespace", "alice", "--json")

    assert code == 0
    assert json.loads(out) == [
        {
            "key_id": alice.key_id,
            "namespace": "alice",
            "scopes": ["read", "write"],
            "created_at": alice.created_at,
            "expires_at": None,
            "revoked": False,
            "state": "active",
            "name": None,
            "last_used_at": None,  # never used yet
        }
    ]


def test_list_of_an_empty_table_says_so(run: Any) -> None:
    assert run("list")[:2] == (0, "no API keys\n")


# --- keys revoke ---


def test_revoke_makes_the_key_stop_working(run: Any, moto_keys: KeyService) -> None:
    key, token = moto_keys.create("alice")

    code, out, _ = run("revoke", key.key_id)

    assert code == 0
    assert f"Revoked API key {key.key_id}" in out
    with pytest.raises(AuthenticationError, match="revoked"):
        moto_keys.authenticate(token)


def test_revoking_an_unknown_key_fails_saying_so(run: Any) -> None:
    code, _, err = run("revoke", "0123456789ab")

    assert code == 1
    assert "API key 0123456789ab does not exist" in err


# --- the store ---


def test_a_table_that_does_not_exist_is_reported_not_created(moto_engine: Engine, capsys: Any) -> None:
    code = cli.main(["keys", "list", "--aws", "--table", "no-such-table"])

    assert code == 1
    assert "no table 'no-such-table'" in capsys.readouterr().err
    assert "no-such-table" not in moto_engine.client.list_tables()["TableNames"]


def test_without_a_running_serve_the_default_target_fails_naming_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB", raising=False)
    port = free_port()

    code = cli.main(["keys", "list", "--ddb-port", str(port)])

    err = capsys.readouterr().err
    assert code == 1
    assert f"http://127.0.0.1:{port}" in err
    assert "is `agent-memory serve` running?" in err


# --- serve --no-auth ---


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "::", "example.com", "10.0.0.1"])
def test_serve_refuses_no_auth_on_a_host_other_than_loopback_before_starting_anything(
    host: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def must_not_start(*args: object) -> None:
        raise AssertionError("serve started its engine")

    monkeypatch.setattr("local.engines.DynamoDBLocal", must_not_start)

    code = cli.main(["serve", "--no-auth", "--host", host])

    assert code == 2
    err = capsys.readouterr().err
    assert f"refusing --no-auth on {host}" in err


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("localhost.example.com", False),
        ("", False),
    ],
)
def test_loopback_hosts_are_told_from_the_rest(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


# --- serve's engine ---


@pytest.mark.parametrize(
    ("missing", "reason"), [("java", "no `java` on PATH"), ("jar", "no DynamoDBLocal.jar under /nowhere")]
)
def test_serve_without_java_or_the_engine_jar_says_what_to_install_and_serves_nothing(
    missing: str, reason: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from local import engines

    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB", raising=False)
    if missing == "java":
        real_which = shutil.which
        monkeypatch.setattr(shutil, "which", lambda name: None if name == "java" else real_which(name))
    else:
        monkeypatch.setattr(engines, "DYNAMODB_LOCAL_LIB", Path("/nowhere"))

    code = cli.main(["serve", "--port", str(free_port()), "--ddb-port", str(free_port())])

    out, err = capsys.readouterr()
    assert code == 1
    assert err.startswith(f"agent-memory: cannot run Amazon DynamoDB Local ({reason}).")
    for advice in ("Java 17", "make install", "--endpoint-url"):
        assert advice in err
    assert "HTTP API" not in out  # nothing was served


def test_serve_stops_its_engine_when_it_stops(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from local import engines

    started: list[engines.DynamoDBLocal] = []
    real_start = engines.DynamoDBLocal.start

    def start(self: engines.DynamoDBLocal, ready: Any, timeout: float = 60) -> engines.DynamoDBLocal:
        started.append(self)
        return real_start(self, ready, timeout)

    def stop_at_once(server: Any, sockets: Any = None) -> None:
        assert started
        assert started[0].pid is not None
        assert started[0].exit_code() is None  # the engine runs while serving
        server.started = True  # as a server that listened and then stopped

    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB", raising=False)
    monkeypatch.setattr(engines.DynamoDBLocal, "start", start)
    monkeypatch.setattr("uvicorn.Server.run", stop_at_once)

    code = cli.main(["serve", "--port", str(free_port()), "--ddb-port", str(free_port())])

    assert code == 0
    assert started[0].pid is None  # stopped and reaped
    assert "Amazon DynamoDB Local at" in capsys.readouterr().out


# --- serve's ports ---


@pytest.mark.parametrize("option", ["--port", "--ddb-port"])
def test_serve_with_a_busy_port_names_its_option_and_starts_creates_and_prints_nothing(
    option: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def must_not_start(*args: object) -> None:
        raise AssertionError("serve started its engine")

    monkeypatch.setattr("local.engines.DynamoDBLocal", must_not_start)
    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB", raising=False)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        busy = holder.getsockname()[1]
        ports = {"--port": free_port(), "--ddb-port": free_port(), option: busy}

        code = cli.main(["serve", "--port", str(ports["--port"]), "--ddb-port", str(ports["--ddb-port"])])

    out, err = capsys.readouterr()
    assert code == 1
    assert re.fullmatch(
        re.escape(
            f"agent-memory: port {busy} on 127.0.0.1 ({option}) is in use by another program: stop it, or choose "
            f"another port with {option}"
        )
        + (r", e\.g\. --port \d+" if option == "--port" else ""),  # a free one to pass (tests/local/test_two_serves)
        err.strip(),
    )
    assert out == ""


@pytest.mark.parametrize("days", ["0", "-1", "3651", "ten", ""])
def test_serve_refuses_a_retention_window_outside_1_to_3650_days_before_starting_anything(
    days: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["serve", "--deleted-retention-days", days])

    assert exited.value.code == 2
    assert "is not a number of days from 1 to 3650" in capsys.readouterr().err


def test_import_and_export_progress_shows_on_a_terminal_only() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal, pipe = Terminal(), io.StringIO()
    for stream in (terminal, pipe):
        report = portability.progress("imported", stream)
        for done in range(1, 1201):
            report(Counter({"memories": done}))

    assert terminal.getvalue() == "\rimported 500 memories\rimported 1000 memories"
    assert pipe.getvalue() == ""


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("", "line 1: header: is missing: the file is empty"),
        ('{"format": "other", "version": 1}\n', "line 1: format"),
        ("not json\n", "line 1: header: must be a JSON object naming format"),
    ],
)
def test_an_import_file_without_a_valid_header_is_refused_before_the_store_is_touched(
    text: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "file.ndjson"
    path.write_text(text)

    # No store is running on this port: the refusal comes before any connection.
    code = cli.main(["import", "--namespace", "alice", str(path), "--ddb-port", str(free_port())])

    assert code == 1
    err = capsys.readouterr().err
    assert "nothing imported" in err
    assert said in err


def test_erase_asked_at_the_end_of_its_input_erases_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    def no_answer(prompt: str) -> str:
        raise EOFError

    args = cli.build_parser().parse_args(["namespace", "erase", "alice", "--ddb-port", str(free_port())])

    assert portability.erase_namespace(args, ask=no_answer) == 1
    assert "not erased" in capsys.readouterr().err
