"""The `agent-memory` command against real local stores: `keys` on DynamoDB Local (`--endpoint-url`) and on the
DynamoDB Local of a `serve` (`--ddb-port`), and `serve` itself creating and printing the first key, or running open
with `--no-auth`. uvicorn's server is replaced by a client that exercises the app serve built."""

from __future__ import annotations

import http.server
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import httpx2
import pytest
import uvicorn
from fastapi.testclient import TestClient
from starlette.types import ASGIApp

from adapters.dynamodb import DynamoDBKeyRepository, ensure_table, make_client
from core.keys import KeyService
from local import cli
from local.template import table_definition
from tests.conftest import PRINTED_KEY, REGION, SERVE_ROOT, Engine, serve_env, wait_until_healthy

TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


@pytest.fixture
def keys_cli(
    dynamodb_local_endpoint: str, ddb_local_table: str, capsys: pytest.CaptureFixture[str]
) -> Callable[..., tuple[int, str]]:
    def run(*arguments: str) -> tuple[int, str]:
        code = cli.main(["keys", *arguments, "--endpoint-url", dynamodb_local_endpoint, "--table", ddb_local_table])
        return code, capsys.readouterr().out

    return run


def test_keys_create_list_and_revoke_work_against_dynamodb_local(
    keys_cli: Callable[..., tuple[int, str]], ddb_local_keys: KeyService
) -> None:
    created = json.loads(keys_cli("create", "--namespace", "alice", "--scopes", "read", "--json")[1])
    assert ddb_local_keys.authenticate(created["key"]).scopes == {"read"}

    listed = json.loads(keys_cli("list", "--json")[1])
    revoked = keys_cli("revoke", created["key_id"])
    relisted = json.loads(keys_cli("list", "--namespace", "alice", "--json")[1])

    assert [(row["key_id"], row["state"]) for row in listed] == [(created["key_id"], "active")]
    assert revoked[0] == 0
    assert [(row["key_id"], row["state"]) for row in relisted] == [(created["key_id"], "revoked")]


def test_keys_reach_the_engine_of_a_running_serve_by_its_ddb_port(
    dynamodb_local_endpoint: str,
    ddb_local_table: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB", raising=False)
    port = dynamodb_local_endpoint.rsplit(":", 1)[1]

    code = cli.main(
        ["keys", "create", "--namespace", "alice", "--ddb-port", port, "--table", ddb_local_table, "--json"]
    )

    created = json.loads(capsys.readouterr().out)
    assert code == 0
    keys = KeyService(DynamoDBKeyRepository(make_client(dynamodb_local_endpoint, REGION), ddb_local_table))
    assert keys.authenticate(created["key"]).namespace == "alice"


class SlowCreateProxy:
    """A loopback HTTP proxy to a DynamoDB endpoint that holds back the answer to the first CreateTable by `delay`
    seconds (the engine has already made the table), as a starting engine's first call can."""

    def __init__(self, target: str, delay: float) -> None:
        self.delays = [delay]
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
                answer = httpx2.post(target, content=body, headers=headers)
                if self.headers.get("x-amz-target", "").endswith(".CreateTable") and proxy.delays:
                    time.sleep(proxy.delays.pop())
                self.send_response(answer.status_code)
                for name, value in answer.headers.items():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection", "content-encoding"):
                        self.send_header(name, value)
                self.send_header("content-length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class FakeUvicorn:
    """Stands in for uvicorn.Server.run: serves each request in `requests` to the app serve built, while serve runs."""

    def __init__(self, requests: Callable[[TestClient], Any]) -> None:
        self.requests = requests
        self.results: list[Any] = []

    def __call__(self, server: uvicorn.Server) -> None:
        assert server.config.host == "127.0.0.1"
        app = cast("ASGIApp", server.config.app)
        with TestClient(app) as client:
            self.results.append(self.requests(client))
        server.started = True  # as a server that listened and then stopped


def serve(
    monkeypatch: pytest.MonkeyPatch, endpoint: str, table: str, requests: Callable[[TestClient], Any], *extra: str
) -> tuple[int, FakeUvicorn]:
    fake = FakeUvicorn(requests)
    monkeypatch.setattr(uvicorn.Server, "run", lambda server, sockets=None: fake(server))
    code = cli.main(["serve", "--endpoint-url", endpoint, "--table", table, *extra])
    return code, fake


def test_serve_creates_and_prints_a_first_key_once_and_every_door_requires_a_key(
    dynamodb_local_endpoint: str,
    ddb_local_engine: Engine,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = ddb_local_engine.new_table()
    printed: list[str] = []

    def requests(client: TestClient) -> list[int]:
        (token,) = PRINTED_KEY.findall(capsys.readouterr().out)
        printed.append(token)
        return [
            client.get("/memories").status_code,
            client.post("/mcp", json=TOOLS_LIST, headers=MCP_HEADERS).status_code,
            client.post("/memories", json={"content": "The user keeps bees"}, headers=bearer(token)).status_code,
            client.post("/mcp", json=TOOLS_LIST, headers={**MCP_HEADERS, **bearer(token)}).status_code,
            client.get("/healthz").status_code,
        ]

    code, first = serve(monkeypatch, dynamodb_local_endpoint, table, requests)

    assert code == 0
    assert first.results == [[401, 401, 201, 200, 200]]
    keys = KeyService(DynamoDBKeyRepository(ddb_local_engine.client, table))
    (stored,) = keys.list()
    assert (stored.namespace, stored.scopes) == ("default", ("read", "write", "keys"))  # the person's own key
    assert keys.authenticate(printed[0]).key_id == stored.key_id

    code, again = serve(monkeypatch, dynamodb_local_endpoint, table, lambda client: capsys.readouterr().out)

    assert code == 0
    assert PRINTED_KEY.findall(again.results[0]) == []
    assert "1 in the table" in again.results[0]
    assert len(keys.list()) == 1


def test_serve_no_auth_on_loopback_runs_open_as_namespace_default_and_warns_loudly(
    dynamodb_local_endpoint: str,
    ddb_local_engine: Engine,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = ddb_local_engine.new_table()

    def requests(client: TestClient) -> list[int]:
        return [
            client.post("/memories", json={"content": "The user keeps bees"}).status_code,
            client.post("/mcp", json=TOOLS_LIST, headers=MCP_HEADERS).status_code,
        ]

    code, fake = serve(monkeypatch, dynamodb_local_endpoint, table, requests, "--no-auth")

    out, err = capsys.readouterr()
    assert code == 0
    assert fake.results == [[201, 200]]
    assert "WARNING: --no-auth: authentication is OFF" in err
    assert PRINTED_KEY.findall(out) == []
    assert KeyService(DynamoDBKeyRepository(ddb_local_engine.client, table)).list() == ()


def test_serve_answers_503_table_missing_then_recreates_its_table_deleted_under_it_and_prints_a_new_first_key(
    dynamodb_local_endpoint: str,
    ddb_local_engine: Engine,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = ddb_local_engine.new_table()
    search = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search_memories", "arguments": {}}}

    def requests(client: TestClient) -> dict[str, Any]:
        (token,) = PRINTED_KEY.findall(capsys.readouterr().out)
        created = client.post("/memories", json={"content": "The user keeps bees"}, headers=bearer(token))
        ddb_local_engine.client.delete_table(TableName=table)  # as when DynamoDB Local restarts in memory
        missing = client.get("/memories", headers=bearer(token))
        out = capsys.readouterr().out
        (new_token,) = PRINTED_KEY.findall(out)
        after = client.get("/memories", headers=bearer(new_token))
        ddb_local_engine.client.delete_table(TableName=table)
        tool = client.post("/mcp", json=search, headers={**MCP_HEADERS, **bearer(token)})
        return {
            "created": created.status_code,
            "missing": (missing.status_code, missing.headers["content-type"], missing.json()),
            "out": out,
            "after": (after.status_code, after.json()["total"]),
            "tool": tool.json()["result"],
            "out_after_tool": capsys.readouterr().out,
        }

    code, fake = serve(monkeypatch, dynamodb_local_endpoint, table, requests)

    assert code == 0
    (seen,) = fake.results
    assert seen["created"] == 201
    status, content_type, body = seen["missing"]
    assert (status, content_type, body["type"]) == (
        503,
        "application/problem+json",
        "urn:agent-memory:problem:table-missing",
    )
    assert "storage table is missing" in body["detail"]
    assert f"table {table} was missing (deleted, or its engine restarted): recreated it empty" in seen["out"]
    assert seen["after"] == (200, 0)
    assert seen["tool"]["isError"] is True
    assert "storage table is missing" in seen["tool"]["content"][0]["text"]
    assert seen["out_after_tool"].count("recreated it empty") == 1
    assert table in ddb_local_engine.client.list_tables()["TableNames"]


def without_aws_credentials(tmp_path: Path) -> dict[str, str]:
    """serve_env() with no AWS credentials anywhere: no AWS_* variables, no credentials or config file, no IMDS."""
    env = {key: value for key, value in serve_env().items() if not key.startswith("AWS_")}
    env["AWS_SHARED_CREDENTIALS_FILE"] = str(tmp_path / "no-credentials")
    env["AWS_CONFIG_FILE"] = str(tmp_path / "no-config")
    env["AWS_EC2_METADATA_DISABLED"] = "true"
    return env


def test_keys_with_an_endpoint_url_and_no_aws_credentials_sign_with_placeholders(
    dynamodb_local_endpoint: str, ddb_local_table: str, ddb_local_keys: KeyService, tmp_path: Path
) -> None:
    command = [sys.executable, "-m", "local", "keys", "create", "--namespace", "alice", "--json"]
    command += ["--endpoint-url", dynamodb_local_endpoint, "--table", ddb_local_table]

    done = subprocess.run(
        command, cwd=SERVE_ROOT, env=without_aws_credentials(tmp_path), capture_output=True, text=True, timeout=120
    )

    assert done.returncode == 0, done.stderr
    assert "NoCredentialsError" not in done.stderr
    created = json.loads(done.stdout)
    assert ddb_local_keys.authenticate(created["key"]).namespace == "alice"


def test_serve_with_an_endpoint_url_and_no_aws_credentials_starts_and_serves(
    dynamodb_local_endpoint: str, ddb_local_engine: Engine, tmp_path: Path
) -> None:
    table = f"no-credentials-{int(time.time() * 1000)}"
    port = free_port()
    log_path = tmp_path / "serve.log"
    command = [sys.executable, "-m", "local", "serve", "--port", str(port)]
    command += ["--endpoint-url", dynamodb_local_endpoint, "--table", table]
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, cwd=SERVE_ROOT, env=without_aws_credentials(tmp_path), stdout=log, stderr=subprocess.STDOUT
        )
        try:
            base = f"http://127.0.0.1:{port}"
            wait_until_healthy(base, process, log_path)
            (token,) = PRINTED_KEY.findall(log_path.read_text())
            with httpx2.Client(base_url=base, timeout=30) as http:
                created = http.post("/memories", json={"content": "The user keeps bees"}, headers=bearer(token))
        finally:
            process.terminate()
            process.wait(timeout=10)

    assert created.status_code == 201, log_path.read_text()
    assert "NoCredentialsError" not in log_path.read_text()
    assert f"{table} (created)" in log_path.read_text()


def test_on_a_fresh_engine_whose_first_create_answers_after_the_read_timeout_the_table_counts_as_created(
    dynamodb_local_endpoint: str,
) -> None:
    # A starting engine's first call can outlast the read timeout; botocore then retries the create, which the
    # engine refuses as "in use" once the first attempt has made the table: `serve` printed "(existing)".
    proxy = SlowCreateProxy(dynamodb_local_endpoint, delay=1.5)  # past the first attempt's read timeout
    try:
        client = make_client(proxy.endpoint_url, REGION, read_timeout=1)
        table = f"fresh-{time.time_ns()}"

        created = ensure_table(client, table, table_definition())
        again = ensure_table(client, table, table_definition())
    finally:
        proxy.close()

    assert (created, again) == (True, False)
    assert proxy.delays == []  # the slow create did happen
