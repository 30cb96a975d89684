"""The command line finds the store of the running `serve` by itself (local.running): serve announces itself in a
state file while it serves and removes it when it stops; the commands on a store use it when no option names one,
and the options still override it; serve's key hint names its store however serve was started."""

from __future__ import annotations

import fcntl
import json
import socket
import urllib.request
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

import pytest

from adapters.dynamodb import DynamoDBKeyRepository, DynamoDBMemoryRepository
from core.contract import RetrievalQuery
from core.keys import KeyService
from core.memories import MemoryService
from handlers import bootstrap
from handlers.bootstrap.runtime import STATE_DIR_VARIABLE, process_id
from local import cli
from local.running import RunningServe, announced, running_serves, state_file
from tests.conftest import Engine
from tests.exports import header, lines, text
from tests.local.conftest import a_serve


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def table(ddb_local_engine: Engine) -> str:
    return ddb_local_engine.new_table()


def keys_of(engine: Engine, table: str) -> KeyService:
    assert engine.client is not None
    return KeyService(DynamoDBKeyRepository(engine.client, table))


# --- the state file ---


def test_a_serve_is_found_while_it_is_announced_and_not_after(tmp_path: Path) -> None:
    serve = a_serve("http://127.0.0.1:9", "t")

    with announced(tmp_path, 8787, serve) as path:
        assert running_serves(tmp_path) == [serve]
        assert json.loads(path.read_text())["pid"] == process_id()

    assert running_serves(tmp_path) == []
    assert not path.exists()


def test_a_serve_stopped_by_ctrl_c_removes_its_state_file(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt), announced(tmp_path, 8787, a_serve(None, "t")):
        raise KeyboardInterrupt

    assert list(tmp_path.iterdir()) == []


def test_a_state_file_no_live_serve_holds_is_ignored(tmp_path: Path) -> None:
    # As a serve killed outright leaves it: the file stays, its lock went with the process.
    state_file(tmp_path, 8787).write_text(json.dumps(asdict(a_serve("http://127.0.0.1:9", "t"))))
    state_file(tmp_path, 8790).write_text("not json")

    assert running_serves(tmp_path) == []


def test_a_serve_that_cannot_write_its_state_file_still_serves(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")

    with announced(tmp_path / "file" / "state", 8787, a_serve(None, "t")):
        pass  # served; only not findable


def held_state_file(directory: Path, port: int, content: str) -> IO[str]:
    """A state file as a live serve holds it (locked), with `content`."""
    held = state_file(directory, port).open("a+", encoding="utf-8")
    fcntl.flock(held, fcntl.LOCK_EX)
    held.write(content)
    held.flush()
    return held


@pytest.mark.parametrize(
    "changed",
    [{"endpoint_url": 8788}, {"table": None}, {"region": ["us-east-1"]}, {"pid": "1"}, {"base_url": None}],
)
def test_a_held_state_file_of_the_wrong_shape_is_passed_over(tmp_path: Path, changed: dict[str, Any]) -> None:
    content = json.dumps({**asdict(a_serve("http://127.0.0.1:9", "t")), **changed})

    with held_state_file(tmp_path, 8787, content), held_state_file(tmp_path, 8788, "[1, 2]"):
        assert running_serves(tmp_path) == []


def test_a_state_directory_others_may_write_in_is_not_trusted(tmp_path: Path, capsys: Any) -> None:
    # Anyone who may write there could plant a state file pointing this user's commands at a store of their choosing.
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o700)
    with announced(shared, 8787, a_serve("http://127.0.0.1:9", "t")):
        shared.chmod(0o777)
        assert running_serves(shared) == []
        shared.chmod(0o720)
        assert running_serves(shared) == []

    assert list(shared.iterdir()) == []


def test_serve_writes_no_state_file_in_a_directory_others_may_write_in(tmp_path: Path, capsys: Any) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)

    with announced(shared, 8787, a_serve(None, "t")):
        assert list(shared.iterdir()) == []

    assert f"{shared} may be written by other users" in capsys.readouterr().err


def test_serve_writes_its_state_file_through_no_link(tmp_path: Path) -> None:
    # A link planted where the state file goes would have serve truncate and overwrite the file it points at.
    precious = tmp_path / "precious"
    precious.write_text("keep me")
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    state_file(state, 8787).symlink_to(precious)

    with announced(state, 8787, a_serve(None, "t")):
        assert running_serves(state) == []

    assert precious.read_text() == "keep me"


# --- the commands on a store ---


@pytest.mark.parametrize(
    "command",
    [
        ["keys", "create", "--namespace", "alice"],
        ["keys", "list"],
        ["embed"],
        ["export", "--namespace", "alice"],
        ["namespace", "erase", "alice", "--yes"],
    ],
)
def test_each_command_on_a_store_uses_the_running_serves_without_an_option(
    command: list[str], state_dir: Path, table: str, dynamodb_local_endpoint: str, capsys: Any
) -> None:
    with announced(state_dir, free_port(), a_serve(dynamodb_local_endpoint, table)):
        code = cli.main(command)

    assert code == 0
    assert "agent-memory:" not in capsys.readouterr().err  # no refusal (an export reports its progress there)


def test_a_key_made_without_options_works_on_the_running_serves_store(
    state_dir: Path, ddb_local_engine: Engine, table: str, dynamodb_local_endpoint: str, capsys: Any
) -> None:
    with announced(state_dir, free_port(), a_serve(dynamodb_local_endpoint, table)):
        assert cli.main(["keys", "create", "--namespace", "alice", "--json"]) == 0

    made = json.loads(capsys.readouterr().out)
    assert keys_of(ddb_local_engine, table).authenticate(made["key"]).namespace == "alice"


def test_an_import_without_options_goes_to_the_running_serves_store(
    state_dir: Path, ddb_local_engine: Engine, table: str, dynamodb_local_endpoint: str, tmp_path: Path, capsys: Any
) -> None:
    export = tmp_path / "export.ndjson"
    export.write_text(text(header(), lines()))
    with announced(state_dir, free_port(), a_serve(dynamodb_local_endpoint, table)):
        code = cli.main(["import", "--namespace", "bob", str(export)])

    assert code == 0
    assert ddb_local_engine.client is not None
    memories = MemoryService(DynamoDBMemoryRepository(ddb_local_engine.client, table))
    imported = memories.search("bob", RetrievalQuery.parse({"status": "deleted"}), stamp=False).items
    assert [memory.id for memory in imported] == [2]


def test_an_option_naming_a_store_overrides_the_running_serve(
    state_dir: Path, table: str, dynamodb_local_endpoint: str, capsys: Any
) -> None:
    elsewhere = free_port()
    with announced(state_dir, free_port(), a_serve(dynamodb_local_endpoint, table)):
        code = cli.main(["keys", "list", "--ddb-port", str(elsewhere)])

    err = capsys.readouterr().err
    assert code == 1
    assert f"http://127.0.0.1:{elsewhere}" in err
    assert dynamodb_local_endpoint not in err


def test_a_table_option_picks_that_table_on_the_running_serves_store(
    state_dir: Path, ddb_local_engine: Engine, table: str, dynamodb_local_endpoint: str, capsys: Any
) -> None:
    other = ddb_local_engine.new_table()
    with announced(state_dir, free_port(), a_serve(dynamodb_local_endpoint, table)):
        assert cli.main(["keys", "create", "--namespace", "alice", "--json", "--table", other]) == 0

    made = json.loads(capsys.readouterr().out)
    assert keys_of(ddb_local_engine, other).authenticate(made["key"]).namespace == "alice"
    assert not keys_of(ddb_local_engine, table).list()


def test_with_several_serves_running_a_command_without_options_names_them_and_does_nothing(
    state_dir: Path, table: str, dynamodb_local_endpoint: str, capsys: Any
) -> None:
    first, second = free_port(), free_port()
    with (
        announced(state_dir, first, a_serve(dynamodb_local_endpoint, table, first)),
        announced(state_dir, second, a_serve("http://127.0.0.1:9", "other", second)),
    ):
        code = cli.main(["keys", "create", "--namespace", "alice"])

    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert f"http://127.0.0.1:{first}" in err
    assert f"http://127.0.0.1:{second}" in err
    assert "--ddb-port" in err


# --- serve ---


@pytest.mark.parametrize(
    ("options", "hint"),
    [
        (["--ddb-port", "9100"], "--ddb-port 9100"),
        (["--endpoint-url", "http://127.0.0.1:9101"], "--endpoint-url http://127.0.0.1:9101"),
        (["--aws"], "--aws"),
        (
            ["--endpoint-url", "http://127.0.0.1:9101", "--table", "mine"],
            "--endpoint-url http://127.0.0.1:9101 --table mine",
        ),
        (["--ddb-port", "8788", "--table", bootstrap.DEFAULT_TABLE], "--ddb-port 8788"),
    ],
)
def test_serves_key_hint_names_its_store_however_it_was_started(options: list[str], hint: str, state_dir: Path) -> None:
    from local.serve import store_options

    args = cli.build_parser().parse_args(["serve", *options])

    assert store_options(args) == hint


def test_serve_announces_its_store_while_it_serves_removes_it_when_it_stops_and_hints_its_own_options(
    state_dir: Path, table: str, dynamodb_local_endpoint: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    port = free_port()
    seen: list[list[RunningServe]] = []

    def serve_briefly(server: Any, sockets: Any = None) -> None:
        seen.append(running_serves(state_dir))
        server.started = True  # as a server that listened, then was stopped

    monkeypatch.setattr("uvicorn.Server.run", serve_briefly)
    serve = ["serve", "--port", str(port), "--endpoint-url", dynamodb_local_endpoint, "--table", table]

    assert cli.main(serve) == 0  # creates the first key
    assert cli.main(serve) == 0  # finds keys: hints how to make another

    assert [[(s.base_url, s.endpoint_url, s.table) for s in found] for found in seen] == [
        [(f"http://127.0.0.1:{port}", dynamodb_local_endpoint, table)]
    ] * 2
    assert running_serves(state_dir) == []
    out = capsys.readouterr().out
    assert f"agent-memory keys create --namespace NAME --endpoint-url {dynamodb_local_endpoint} --table {table}" in out
    assert "--ddb-port" not in out


def test_a_key_made_without_options_while_a_serve_runs_is_one_that_serve_accepts(
    shared_serve_engine: tuple[str, str, int], shared_serve_output: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    base, _, ddb_port = shared_serve_engine
    state = shared_serve_output.parent / "state"  # where tests.conftest.serving has it announce itself
    monkeypatch.setenv(STATE_DIR_VARIABLE, str(state))
    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB", raising=False)
    monkeypatch.delenv("TABLE_NAME", raising=False)

    (found,) = running_serves(state)
    assert (found.base_url, found.endpoint_url) == (base, f"http://127.0.0.1:{ddb_port}")
    assert cli.main(["keys", "create", "--namespace", "found-by-itself", "--json"]) == 0

    made = json.loads(capsys.readouterr().out)
    request = urllib.request.Request(f"{base}/key", headers={"Authorization": f"Bearer {made['key']}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        assert json.load(response)["namespace"] == "found-by-itself"
