"""Erasing a namespace that is still in use, on Amazon DynamoDB Local: writers whose keys `serve` has cached keep
sending over HTTP and MCP while `agent-memory namespace erase` runs, and afterwards the table holds nothing of the
namespace (OAuth grants included) and a new owner of the name starts empty. The erase's receipt comes only once a
scan found nothing of it; an erase that cannot get there says so."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2
import pytest
from mcp.client import Client as McpClient
from mcp.client.streamable_http import streamable_http_client

from adapters.dynamodb import DynamoDBGrantRepository, DynamoDBKeyRepository, make_client
from adapters.dynamodb.erasure import ERASE_PASSES, EraseUnfinishedError
from adapters.dynamodb.namespaces import Namespaces
from core.keys import KeyService
from core.repository import Grant, LiveKey
from tests.conftest import REGION, Engine
from tests.integration.test_portability import run

SERVE_TABLE = "agent-memory"
# How many answers each writer must have had to writes sent after the receipt (every one of them must be refused)
# before the writers stop; a writer whose MCP session was refused outright stops after its one.
WRITES_AFTER_RECEIPT = 5
# Ceilings on waiting for what is waited for: generous, so a busy machine is slow rather than wrong.
WARM_UP_SECONDS = 120.0


@dataclass
class Writes:
    """What one writer sent: (sent after the receipt, landed, the answer), in order."""

    answers: list[tuple[bool, bool, str]] = field(default_factory=list)

    def landed(self, after: bool) -> list[str]:
        return [answer for late, ok, answer in self.answers if late == after and ok]

    def sent_after(self) -> int:
        return sum(late for late, _, _ in self.answers)


def http_writer(base: str, key: str, erased: threading.Event, stop: threading.Event, writes: Writes) -> None:
    with httpx2.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=10) as http:
        for n in range(1_000_000):
            if stop.is_set():
                return
            late = erased.is_set()
            response = http.post("/memories", json={"content": f"over HTTP {n}", "tags": ["race", f"h{n % 3}"]})
            writes.answers.append((late, response.status_code == 201, response.text))


def mcp_writer(base: str, key: str, erased: threading.Event, stop: threading.Event, writes: Writes) -> None:
    async def write() -> None:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=10) as http,
            McpClient(streamable_http_client(f"{base}/mcp", http_client=http)) as client,
        ):
            n = 0
            while not stop.is_set():
                late = erased.is_set()
                arguments = {"content": f"over MCP {n}", "tags": ["race", f"m{n % 3}"]}
                result = await client.call_tool("create_memory", arguments)
                writes.answers.append((late, not result.is_error, str(result.content)))
                n += 1

    try:
        asyncio.run(write())
    except Exception as exc:  # the session refused at the HTTP level: a refusal like any other
        writes.answers.append((erased.is_set(), False, repr(exc)))


def items_of(client: Any, namespace: str) -> list[dict[str, Any]]:
    """Every item of the serve's table that belongs to `namespace`, by a consistent scan of the whole table."""
    found: list[dict[str, Any]] = []
    request: dict[str, Any] = {"TableName": SERVE_TABLE, "ConsistentRead": True}
    while True:
        response = client.scan(**request)
        found += [item for item in response["Items"] if _of(item, namespace)]
        if "LastEvaluatedKey" not in response:
            return found
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def _of(item: dict[str, Any], namespace: str) -> bool:
    pk = item["pk"]["S"]
    return pk == f"NS#{namespace}" or pk.startswith(f"NS#{namespace}#TAG#") or item.get("namespace") == {"S": namespace}


def wait_until(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def answered_after_receipt(writer: threading.Thread, sent: Writes) -> bool:
    return sent.sent_after() >= WRITES_AFTER_RECEIPT or (sent.sent_after() > 0 and not writer.is_alive())


def test_an_erase_while_http_and_mcp_writers_keep_writing_leaves_nothing_and_a_new_owner_starts_empty(
    shared_serve_engine: tuple[str, str, int],
) -> None:
    base, _, ddb_port = shared_serve_engine
    namespace = f"erased-{uuid.uuid4().hex[:8]}"
    client = make_client(f"http://127.0.0.1:{ddb_port}", REGION)
    keys = KeyService(DynamoDBKeyRepository(client, SERVE_TABLE))
    _, key = keys.create(namespace)
    erased, stop = threading.Event(), threading.Event()
    writes = {"HTTP": Writes(), "MCP": Writes()}
    writers = {
        door: threading.Thread(target=writer, args=(base, key, erased, stop, writes[door]))
        for door, writer in (("HTTP", http_writer), ("MCP", mcp_writer))
    }
    for writer in writers.values():
        writer.start()
    try:
        started = "the writers never got going"
        wait_until(lambda: all(len(w.landed(after=False)) >= 5 for w in writes.values()), WARM_UP_SECONDS, started)
        erase = run("namespace", "erase", namespace, "--yes", "--ddb-port", str(ddb_port))
        erased.set()
        # Writes answered after the receipt are what the test judges: it waits until it has some from each door,
        # never for a while in the hope that some were made.
        late = "the writers sent nothing after the receipt"
        wait_until(lambda: all(answered_after_receipt(writers[d], w) for d, w in writes.items()), WARM_UP_SECONDS, late)
    finally:
        stop.set()
        for writer in writers.values():
            writer.join(timeout=30)

    assert erase.returncode == 0, erase.stderr
    assert erase.stdout.startswith(f"Erased namespace {namespace!r}:")
    for door, sent in writes.items():
        assert sent.sent_after() > 0, door
        assert sent.landed(after=True) == [], door
    assert items_of(client, namespace) == []
    _, new_key = keys.create(namespace)
    with httpx2.Client(base_url=base, headers={"Authorization": f"Bearer {new_key}"}, timeout=10) as http:
        listed = http.get("/memories", params={"status": "deleted"}).json()["total"]
        listed += http.get("/memories").json()["total"]
        created = http.post("/memories", json={"content": "a fresh start", "tags": ["race"]}).json()
        tagged = http.get("/memories", params={"tag": "race"}).json()["total"]
        history = http.get(f"/memories/{created['id']}/history").json()["total"]
    assert (listed, created["id"], tagged, history) == (0, 1, 1, 1)


def test_an_erase_removes_the_namespaces_oauth_grants_and_every_item_under_them(
    ddb_local_engine: Engine, ddb_local_table: str, ddb_local_keys: KeyService, dynamodb_local_endpoint: str
) -> None:
    grants = DynamoDBGrantRepository(ddb_local_engine.client, ddb_local_table)
    for grant_id, namespace in (("grant-alice", "alice"), ("grant-bob", "bob")):
        key, _ = ddb_local_keys.create(namespace)
        grant = Grant(
            *(grant_id, "client-1", namespace, ("read", "write"), key.key_id, "https://mcp.example/mcp"),
            *("http://127.0.0.1:5000/callback", "challenge", "code-hash", 2_000_000_000),
            refresh_hash="refresh-2",
            expires_at=2_000_000_000,
        )
        grants.add_grant(grant, LiveKey(key.key_id, "2026-01-01T00:00:00.000000Z"))
        # What a rotation leaves beside the grant (grants.py): the refresh token it replaced, which names no namespace.
        spent = {"pk": {"S": f"OAUTH#GRANT#{grant_id}"}, "sk": {"S": "SPENT#refresh-1"}, "expires_at": {"N": "1"}}
        ddb_local_engine.client.put_item(TableName=ddb_local_table, Item=spent)

    done = run(
        "namespace", "erase", "alice", "--yes", "--endpoint-url", dynamodb_local_endpoint, "--table", ddb_local_table
    )

    assert done.returncode == 0, done.stderr
    receipt = {kind: int(n) for n, kind in (line.split(maxsplit=1) for line in done.stdout.splitlines()[1:])}
    assert receipt == {"API keys": 1, "OAuth grants": 1, "OAuth spent tokens": 1}
    items = ddb_local_engine.client.scan(TableName=ddb_local_table, ConsistentRead=True)["Items"]
    assert sorted((item["pk"]["S"], item["sk"]["S"]) for item in items if item["pk"]["S"].startswith("OAUTH#")) == [
        ("OAUTH#GRANT#grant-bob", "GRANT"),
        ("OAUTH#GRANT#grant-bob", "SPENT#refresh-1"),
    ]
    assert grants.get_grant("grant-alice") is None


def test_an_erase_that_keeps_finding_new_items_gives_up_loudly_instead_of_claiming_success(
    ddb_local_engine: Engine, ddb_local_table: str
) -> None:
    client = ddb_local_engine.client
    client.put_item(TableName=ddb_local_table, Item={"pk": {"S": "NS#alice"}, "sk": {"S": "MEM#0000000000"}})
    scans = []

    def unfenced_writer(**_: Any) -> None:
        # Something without a key (an import, an open server) writes the namespace after every pass.
        scans.append(1)
        item = {"pk": {"S": "NS#alice"}, "sk": {"S": f"MEM#{len(scans):010d}"}}
        client.put_item(TableName=ddb_local_table, Item=item)

    client.meta.events.register("after-call.dynamodb.Scan", unfenced_writer)

    with pytest.raises(EraseUnfinishedError, match=f"kept appearing through {ERASE_PASSES} passes"):
        Namespaces(client, ddb_local_table).erase("alice", lambda _: None)

    assert len(scans) == ERASE_PASSES
