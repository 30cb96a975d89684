"""Two `serve`s of one user side by side (#42 item 8): a serve given only its HTTP port runs its DynamoDB Local on the
next port, or on a free one when that is taken, so a second serve starts beside the first; each announces itself in
the one state directory under its own HTTP port; a command on a store names the serve it works on with --port, and
with two running and none named it lists them and says how to choose, doing nothing."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from adapters.dynamodb import DynamoDBKeyRepository
from core.keys import KeyService
from handlers.bootstrap.runtime import process_id
from local import cli, engines
from local.running import announced, running_serves
from tests.conftest import SERVE_ROOT, Engine, serve_env, serving
from tests.local.conftest import a_serve


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_pair() -> int:
    """A free port whose next port is free too (as a serve given only --port finds them)."""
    while True:
        port = free_port()
        if port < 65535 and is_free(port + 1):
            return port


# --- serve picks its engine's port ---


@pytest.fixture
def engine_ports(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The endpoints serve chooses for its engine; nothing is started (the two real serves below show a chosen port
    serving: test_two_serves_given_only_their_http_ports_run_side_by_side_each_over_its_own_engine)."""
    chosen: list[str] = []

    def start(self: engines.DynamoDBLocal, ready: Any, timeout: float = 60) -> engines.DynamoDBLocal:
        chosen.append(self.endpoint_url)
        raise engines.DynamoDBLocalUnavailableError(f"not started here: {self.endpoint_url}")

    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB", raising=False)
    monkeypatch.setattr(engines.DynamoDBLocal, "start", start)
    return chosen


def test_a_serve_whose_next_port_is_taken_runs_its_engine_on_a_free_port(
    engine_ports: list[str], state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        port = taken - 1
        if not is_free(port):
            pytest.skip(f"port {port} is in use here")

        code = cli.main(["serve", "--port", str(port)])

    (endpoint,) = engine_ports
    assert code == 1  # the engine this test does not start
    assert int(endpoint.rsplit(":", 1)[1]) not in (port, taken)
    assert f"not started here: {endpoint}" in capsys.readouterr().err


def test_a_serve_whose_http_port_is_taken_names_a_free_one_to_pass(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB", raising=False)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        busy = holder.getsockname()[1]

        code = cli.main(["serve", "--port", str(busy)])

        err = capsys.readouterr().err
        suggested = re.search(r"choose another port with --port, e\.g\. --port (\d+)$", err.strip())
        assert code == 1
        assert suggested is not None, err
        assert is_free(int(suggested.group(1)))
        assert is_free(int(suggested.group(1)) + 1)


def test_a_serve_whose_http_port_another_serve_holds_names_that_serve(
    state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        busy = holder.getsockname()[1]
        with announced(state_dir, busy, a_serve("http://127.0.0.1:9", "t", busy)):
            code = cli.main(["serve", "--port", str(busy)])

    err = capsys.readouterr().err
    assert code == 1
    assert f"is in use by the `agent-memory serve` at http://127.0.0.1:{busy} (pid {process_id()})" in err


# --- the commands on a store name their serve ---


@pytest.fixture
def table(ddb_local_engine: Engine) -> str:
    return ddb_local_engine.new_table()


def test_a_command_names_the_serve_it_works_on_by_its_http_port(
    state_dir: Path, ddb_local_engine: Engine, table: str, dynamodb_local_endpoint: str, capsys: Any
) -> None:
    mine, other = free_port(), free_port()
    with (
        announced(state_dir, other, a_serve("http://127.0.0.1:9", "other", other)),
        announced(state_dir, mine, a_serve(dynamodb_local_endpoint, table, mine)),
    ):
        code = cli.main(["keys", "create", "--namespace", "alice", "--json", "--port", str(mine)])

    assert code == 0
    made = json.loads(capsys.readouterr().out)
    assert ddb_local_engine.client is not None
    keys = KeyService(DynamoDBKeyRepository(ddb_local_engine.client, table))
    assert keys.authenticate(made["key"]).namespace == "alice"


def test_with_two_serves_running_a_command_naming_none_says_which_run_and_how_to_choose(
    state_dir: Path, capsys: Any
) -> None:
    first, second = free_port(), free_port()
    with (
        announced(state_dir, first, a_serve("http://127.0.0.1:9", "t", first)),
        announced(state_dir, second, a_serve("http://127.0.0.1:10", "t", second)),
    ):
        code = cli.main(["export", "--namespace", "alice"])

    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert f"--port {min(first, second)} or --port {max(first, second)}" in err


def test_a_command_naming_a_port_no_serve_runs_on_says_which_run(state_dir: Path, capsys: Any) -> None:
    running, named = free_port(), free_port()
    with announced(state_dir, running, a_serve("http://127.0.0.1:9", "t", running)):
        code = cli.main(["keys", "list", "--port", str(named)])

    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert f"no `agent-memory serve` runs on port {named}" in err
    assert f"http://127.0.0.1:{running}" in err


def test_a_command_naming_both_a_serve_and_a_store_is_refused(state_dir: Path, capsys: Any) -> None:
    code = cli.main(["keys", "list", "--port", str(free_port()), "--ddb-port", str(free_port())])

    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert "--port" in err
    assert "--ddb-port" in err


# --- two real serves ---


@dataclass
class RunningPair:
    state: Path
    bases: tuple[str, str]
    keys: tuple[str, str]
    logs: tuple[Path, Path]


@pytest.fixture(scope="module")
def two_serves(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningPair]:
    """Two serves of one user, each given only its HTTP port (as `make serve ARGS="--port 9000"` beside a running
    `make serve`), the second started while the first runs."""
    log_dir = tmp_path_factory.mktemp("two-serves")
    state = log_dir / "state"
    with ExitStack() as stack:
        first = free_pair()
        _, first_key = stack.enter_context(serving(log_dir, port=first, state=state))
        second = free_pair()
        _, second_key = stack.enter_context(serving(log_dir, port=second, state=state))
        yield RunningPair(
            state,
            (f"http://127.0.0.1:{first}", f"http://127.0.0.1:{second}"),
            (first_key, second_key),
            (log_dir / f"serve-{first}.log", log_dir / f"serve-{second}.log"),
        )


def agent_memory(state: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "local", *arguments],
        cwd=SERVE_ROOT,
        env=serve_env(state),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def namespace_of(base: str, key: str) -> str | int:
    """The namespace `key` reaches on the serve at `base`, or the HTTP status refusing it."""
    request = urllib.request.Request(f"{base}/key", headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return str(json.load(response)["namespace"])
    except urllib.error.HTTPError as refused:
        return refused.code


@pytest.mark.slow
def test_two_serves_given_only_their_http_ports_run_side_by_side_each_over_its_own_engine(
    two_serves: RunningPair,
) -> None:
    found = running_serves(two_serves.state)

    assert sorted(serve.base_url for serve in found) == sorted(two_serves.bases)
    # Each engine on the port after its serve's (free_pair chose two such pairs).
    assert sorted(str(serve.endpoint_url) for serve in found) == sorted(
        f"{base.rsplit(':', 1)[0]}:{int(base.rsplit(':', 1)[1]) + 1}" for base in two_serves.bases
    )
    for base, key in zip(two_serves.bases, two_serves.keys, strict=True):
        assert namespace_of(base, key) == "default"
    assert namespace_of(two_serves.bases[1], two_serves.keys[0]) == 401  # each its own store


@pytest.mark.slow
def test_with_two_serves_running_a_command_works_on_the_one_its_port_names(two_serves: RunningPair) -> None:
    second = two_serves.bases[1]
    port = second.rsplit(":", 1)[1]

    unnamed = agent_memory(two_serves.state, "keys", "create", "--namespace", "bob", "--json")
    named = agent_memory(two_serves.state, "keys", "create", "--namespace", "bob", "--json", "--port", port)

    assert unnamed.returncode == 2
    for base in two_serves.bases:
        assert f"--port {base.rsplit(':', 1)[1]}" in unnamed.stderr
    assert named.returncode == 0, named.stderr
    made = json.loads(named.stdout)["key"]
    assert namespace_of(second, made) == "bob"
    assert namespace_of(two_serves.bases[0], made) == 401


@pytest.mark.slow
def test_a_serve_started_beside_another_says_how_commands_name_it(two_serves: RunningPair) -> None:
    second = two_serves.bases[1].rsplit(":", 1)[1]

    said_first, said_second = (log.read_text(errors="replace") for log in two_serves.logs)

    assert "--port" not in said_first  # alone when it started: commands find it by themselves
    assert f"other serves           {two_serves.bases[0]}: commands name this one with --port {second}" in said_second
