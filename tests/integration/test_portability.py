"""Export, import and namespace erasure through the command line, on Amazon DynamoDB Local and on `agent-memory
serve`'s own engine: lossless round trips (also across engines, at 500 memories), refusals that import
nothing, resumed imports, and an erase that leaves no item of the namespace and touches no other."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

from adapters.dynamodb.namespaces import Namespaces
from bench.portability import synthetic_export
from core.contract import RetrievalQuery
from core.history import HistoryQuery
from core.keys import KeyService
from core.memories import MemoryService
from core.model import IdempotentCreate, MemoryChanges, NewMemory
from core.portable import ExportedMemory, parse_line
from tests import exports
from tests.conftest import SERVE_ROOT, Engine, serve_env
from tests.copies import assert_copies_mirror, scan

NS = "alice"
# More than one batch of every kind the import writes (25 items, 4 writers) and a few seconds on DynamoDB Local; the
# 10,000 memories of a full round trip are `make bench`'s (scripts/bench/portability.py), not the suite's.
MANY = 500


def store(endpoint: str, table: str) -> list[str]:
    return ["--endpoint-url", endpoint, "--table", table]


def run(*arguments: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "local", *arguments],
        cwd=SERVE_ROOT,
        env=serve_env(),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def export(where: list[str], namespace: str, path: Path) -> list[str]:
    done = run("export", "--namespace", namespace, "--include-deleted", "--history", *where)
    assert done.returncode == 0, done.stderr
    path.write_text(done.stdout)
    return done.stdout.splitlines()


def populate(service: MemoryService, namespace: str = NS) -> None:
    """A namespace with every kind of life: edits, retags, a delete, a restore, a purge, an untouched memory."""
    for n in range(6):
        service.create(namespace, NewMemory.parse({"content": f"note {n}", "tags": ["t", f"n{n % 2}"][: n % 3]}))
    service.update(namespace, 1, MemoryChanges.parse({"content": "note one, edited", "tags": ["x"]}), key_id="a" * 12)
    service.update(namespace, 2, MemoryChanges.parse({"status": "invalid", "memory_type": "event"}))
    service.delete(namespace, 3)
    service.delete(namespace, 4)
    service.restore(namespace, 4)
    service.delete(namespace, 5)
    service.purge(namespace, 5)
    service.get(namespace, 6)  # stamps last_accessed_at


def test_an_export_imported_into_a_fresh_namespace_exports_to_the_same_lines(
    ddb_local_engine: Engine,
    dynamodb_local_endpoint: str,
    ddb_local_table: str,
    ddb_local_service: MemoryService,
    tmp_path: Path,
) -> None:
    populate(ddb_local_service)
    where = store(dynamodb_local_endpoint, ddb_local_table)
    first = export(where, NS, tmp_path / "first.ndjson")

    imported = run("import", "--namespace", "bob", str(tmp_path / "first.ndjson"), *where)
    assert imported.returncode == 0, imported.stderr
    again = export(where, "bob", tmp_path / "again.ndjson")

    assert again[1:] == first[1:]
    assert len(first) == 1 + 5  # the purged memory is gone for good
    header = json.loads(again[0])
    assert (header["namespace"], header["include_deleted"], header["history"]) == ("bob", True, True)
    # The imported namespace behaves as the original: totals, tag copies, the id counter, restore and history.
    assert_copies_mirror(ddb_local_engine, ddb_local_table, "bob")
    assert ddb_local_service.create("bob", NewMemory.parse({"content": "after the import"})).id == 7
    assert ddb_local_service.restore("bob", 3).status == "active"
    assert [r.change for r in ddb_local_service.history("bob", 4, HistoryQuery.parse({})).items] == [
        "restored",
        "deleted",
        "created",
    ]
    assert ddb_local_service.get("bob", 6).last_accessed_at is not None


def test_content_with_line_separators_goes_through_export_import_export_byte_for_byte(
    dynamodb_local_endpoint: str, ddb_local_table: str, ddb_local_service: MemoryService, tmp_path: Path
) -> None:
    # U+0085 too splits lines for some tools, but content refuses it (a C1 control) once trimmed.
    contents = ["one\u2028two", "para\u2029graph", "\x85both\u2028and\u2029\nand a newline\x85"]
    for content in contents:
        ddb_local_service.create(NS, NewMemory.parse({"content": content, "tags": ["t"]}))
    ddb_local_service.update(NS, 1, MemoryChanges.parse({"content": "edited\u2028twice\u2029"}))
    ddb_local_service.delete(NS, 2)
    where = store(dynamodb_local_endpoint, ddb_local_table)
    first = export(where, NS, tmp_path / "first.ndjson")

    imported = run("import", "--namespace", "bob", str(tmp_path / "first.ndjson"), *where)
    assert imported.returncode == 0, imported.stderr
    again = export(where, "bob", tmp_path / "again.ndjson")

    first_bytes, again_bytes = (
        (tmp_path / name).read_bytes().split(b"\n")[1:] for name in ("first.ndjson", "again.ndjson")
    )
    assert again_bytes == first_bytes
    assert len(first) == len(again) == 1 + len(contents)
    # Escaped in the file, so tools that split on them keep each memory on one line; the text itself is kept.
    assert not any(separator in line for line in again for separator in "\u2028\u2029")
    assert [json.loads(line)["memory"]["content"] for line in again[1:]] == [
        "edited\u2028twice",
        *(content.strip() for content in contents[1:]),
    ]
    assert ddb_local_service.get("bob", 3).content == contents[2].strip()


def test_without_history_or_deleted_memories_an_export_leaves_them_out(
    dynamodb_local_endpoint: str, ddb_local_table: str, ddb_local_service: MemoryService
) -> None:
    populate(ddb_local_service)

    done = run("export", "--namespace", NS, *store(dynamodb_local_endpoint, ddb_local_table))

    lines = [json.loads(line) for line in done.stdout.splitlines()[1:]]
    assert [line["memory"]["id"] for line in lines] == [1, 2, 4, 6]
    assert all(set(line) == {"memory"} for line in lines)
    assert "Exported 4 memories" in done.stderr


@pytest.mark.slow  # about 10 s on two cores: five command-line runs, two imports of MANY memories
def test_a_round_trip_of_many_memories_from_serve_to_dynamodb_local_keeps_every_line(
    shared_serve_engine: tuple[str, str, int], dynamodb_local_endpoint: str, ddb_local_table: str, tmp_path: Path
) -> None:
    source = tmp_path / "synthetic.ndjson"
    source.write_text(synthetic_export("default", MANY))
    base, key, ddb_port = shared_serve_engine
    serve_store = ["--ddb-port", str(ddb_port), "--table", "agent-memory"]
    imported_into = f"imported-{uuid.uuid4().hex[:8]}"  # the shared serve's other tests never see it
    request = urllib.request.Request(
        f"{base}/memories",
        data=json.dumps({"content": "made over HTTP", "tags": ["bulk"]}).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.status == 201
    refused = run("import", "--namespace", "default", str(source), *serve_store)
    assert refused.returncode == 1
    assert "is not empty" in refused.stderr
    loaded = run("import", "--namespace", imported_into, str(source), *serve_store)
    assert loaded.returncode == 0, loaded.stderr
    from_serve = export(serve_store, imported_into, tmp_path / "from-serve.ndjson")

    where = store(dynamodb_local_endpoint, ddb_local_table)
    moved = run("import", "--namespace", "moved", str(tmp_path / "from-serve.ndjson"), *where)
    assert moved.returncode == 0, moved.stderr
    back = export(where, "moved", tmp_path / "back.ndjson")

    assert len(from_serve) == 1 + MANY
    assert back[1:] == from_serve[1:] == source.read_text().splitlines()[1:]


def test_a_bad_line_is_named_and_nothing_is_imported(
    ddb_local_engine: Engine,
    dynamodb_local_endpoint: str,
    ddb_local_table: str,
    ddb_local_service: MemoryService,
    tmp_path: Path,
) -> None:
    lines = synthetic_export(NS, 5).splitlines()
    cases = {
        "content": lines[3].replace('"memory 3"', '" memory 3"'),  # not in its stored (trimmed) form
        "status": lines[3]
        .replace('"status":"active"', '"status":"archived"')
        .replace('"status": "active"', '"status": "archived"'),
        "json": lines[3][:-1],
        "order": lines[2],  # id 2 again after id 2
        "id bound": lines[3].replace('"id":3', '"id":1000000000'),
        "nesting": "[" * 100_000,
    }
    for name, bad in cases.items():
        path = tmp_path / f"{name}.ndjson"
        path.write_text("\n".join([*lines[:3], bad, *lines[4:]]) + "\n")

        done = run("import", "--namespace", NS, str(path), *store(dynamodb_local_endpoint, ddb_local_table))

        assert done.returncode == 1, name
        assert "nothing imported" in done.stderr, name
        assert "line 4" in done.stderr, (name, done.stderr)
    assert scan(ddb_local_engine, ddb_local_table) == []


def test_an_import_into_a_namespace_holding_data_is_refused(
    dynamodb_local_endpoint: str, ddb_local_table: str, ddb_local_service: MemoryService, tmp_path: Path
) -> None:
    ddb_local_service.create(NS, NewMemory.parse({"content": "already here"}))
    path = tmp_path / "file.ndjson"
    path.write_text(synthetic_export(NS, 3))

    done = run("import", "--namespace", NS, str(path), *store(dynamodb_local_endpoint, ddb_local_table))

    assert done.returncode == 1
    assert f"namespace {NS!r} is not empty" in done.stderr
    assert ddb_local_service.search(NS, RetrievalQuery.parse({})).total == 1


def test_an_import_that_stopped_half_way_is_finished_by_running_it_again(
    ddb_local_engine: Engine,
    dynamodb_local_endpoint: str,
    ddb_local_table: str,
    ddb_local_service: MemoryService,
    tmp_path: Path,
) -> None:
    text = synthetic_export(NS, 300)
    path = tmp_path / "file.ndjson"
    path.write_text(text)
    memories = [parse_line(line, n) for n, line in enumerate(text.splitlines()[1:], start=2)]
    namespaces = Namespaces(ddb_local_engine.client, ddb_local_table)
    # What a run killed after its first groups leaves: the claim, some memories, no counter.
    namespaces.begin_import(NS, hashlib.sha256(text.encode()).hexdigest())
    namespaces.load(NS, memories[:120], lambda counts: None)
    other = tmp_path / "other.ndjson"
    other.write_text(synthetic_export(NS, 2))
    refused = run("import", "--namespace", NS, str(other), *store(dynamodb_local_endpoint, ddb_local_table))
    assert refused.returncode == 1
    assert "another import" in refused.stderr

    done = run("import", "--namespace", NS, str(path), *store(dynamodb_local_endpoint, ddb_local_table))

    assert done.returncode == 0, done.stderr
    assert "Resuming" in done.stderr
    exported = run(
        "export", "--namespace", NS, "--include-deleted", "--history", *store(dynamodb_local_endpoint, ddb_local_table)
    )
    assert exported.stdout.splitlines()[1:] == text.splitlines()[1:]
    assert_copies_mirror(ddb_local_engine, ddb_local_table, NS)
    assert ddb_local_service.create(NS, NewMemory.parse({"content": "next"})).id == 301


def test_memories_imported_without_their_history_are_updated_deleted_and_restored_from_there_on(
    ddb_local_engine: Engine, ddb_local_table: str, ddb_local_service: MemoryService
) -> None:
    body = [exports.without_history(line) for line in exports.lines()]  # 1: restored, 2: deleted, 3: never changed
    memories = [parse_line(json.dumps(line), n) for n, line in enumerate(body, start=2)]
    namespaces = Namespaces(ddb_local_engine.client, ddb_local_table)
    namespaces.begin_import(NS, "0" * 64)
    namespaces.load(NS, memories, lambda counts: None)
    namespaces.finish_import(NS, memories)

    updated = ddb_local_service.update(NS, 3, MemoryChanges.parse({"content": "changed after the import"}))
    restored = ddb_local_service.restore(NS, 2)
    ddb_local_service.delete(NS, 1)

    assert (updated.version, restored.status) == (2, "active")
    changes = {
        memory_id: [
            (r.revision, r.change) for r in ddb_local_service.history(NS, memory_id, HistoryQuery.parse({})).items
        ]
        for memory_id in (1, 2, 3)
    }
    assert changes == {1: [(1, "deleted")], 2: [(1, "restored")], 3: [(1, "updated")]}


def test_erase_removes_every_item_of_the_namespace_and_nothing_of_another(
    ddb_local_engine: Engine,
    dynamodb_local_endpoint: str,
    ddb_local_table: str,
    ddb_local_service: MemoryService,
    ddb_local_keys: KeyService,
) -> None:
    ddb_local_keys.create(NS, ["read", "write"])
    kept_key = ddb_local_keys.create("bob", ["read"])
    populate(ddb_local_service)
    populate(ddb_local_service, "bob")
    body = NewMemory.parse({"content": "idempotent"})
    ddb_local_service.create(NS, body, IdempotentCreate.of("key-1", body, "Idempotency-Key"))
    before_bob = [item for item in scan(ddb_local_engine, ddb_local_table) if _of(item, "bob")]
    where = store(dynamodb_local_endpoint, ddb_local_table)

    refused = run("namespace", "erase", NS, *where, stdin="no\n")
    assert refused.returncode == 1
    assert "not erased" in refused.stderr
    done = run("namespace", "erase", NS, *where, stdin=f"{NS}\n")

    assert done.returncode == 0, done.stderr
    receipt = dict(line.split(maxsplit=1)[::-1] for line in done.stdout.splitlines()[1:])
    assert {kind: int(n) for kind, n in receipt.items()} == {
        "API keys": 1,
        "id counters": 1,
        "idempotency records": 1,
        "memories": 6,
        "revisions": 2 + 2 + 2 + 3 + 1 + 1,  # memories 1, 2, 3, 4, 6 and 7; memory 5's went with its purge
        "search copies": 6,  # one a memory, as the revisions: memory 5's went with its purge
        "access items": 6,  # so
        "recall digests": 6,  # so: every memory has its digest from its first write
        "tag copies": 1 + 1 + 2 + 2,  # x; t; t, n0 (deleted, still copied); t, n1
        "tag totals": 4,  # x, t, n0, n1
        "totals": 1,
        "change markers": 1,  # memory 5's purge (a warm copy reads that it is gone: adapters.dynamodb.changes)
    }
    assert [item for item in scan(ddb_local_engine, ddb_local_table) if _of(item, NS)] == []
    assert sorted(map(str, (item for item in scan(ddb_local_engine, ddb_local_table) if _of(item, "bob")))) == sorted(
        map(str, before_bob)
    )
    assert ddb_local_keys.list("bob") == (kept_key[0],)
    again = run("namespace", "erase", NS, "--yes", *where)
    assert again.returncode == 0, again.stderr
    assert "holds nothing" in again.stdout


def _of(item: dict[str, Any], namespace: str) -> bool:
    pk = item["pk"]["S"]
    return pk == f"NS#{namespace}" or pk.startswith(f"NS#{namespace}#TAG#") or item.get("namespace") == {"S": namespace}


def test_the_export_format_rejects_a_history_that_does_not_end_at_the_memory() -> None:
    line = json.loads(synthetic_export(NS, 1).splitlines()[1])
    line["revisions"][0]["content"] = "something else"

    with pytest.raises(Exception, match="last revision must be the memory"):
        parse_line(json.dumps(line), 2)
    assert isinstance(parse_line(synthetic_export(NS, 1).splitlines()[1], 2), ExportedMemory)


def test_a_read_while_an_import_was_stopped_keeps_its_stamp_when_the_import_is_run_again(
    ddb_local_engine: Engine, ddb_local_table: str, ddb_local_service: MemoryService
) -> None:
    text = synthetic_export(NS, 40)
    memories = [parse_line(line, n) for n, line in enumerate(text.splitlines()[1:], start=2)]
    namespaces = Namespaces(ddb_local_engine.client, ddb_local_table)
    # What a run killed after its first groups leaves; then memories it wrote are read.
    namespaces.begin_import(NS, hashlib.sha256(text.encode()).hexdigest())
    namespaces.load(NS, memories[:20], lambda counts: None)
    read = {memory_id: ddb_local_service.get(NS, memory_id).last_accessed_at for memory_id in (4, 5)}
    assert [memories[3].memory.last_accessed_at, memories[4].memory.last_accessed_at] != list(read.values())

    namespaces.load(NS, memories, lambda counts: None)
    namespaces.finish_import(NS, memories)

    assert {memory_id: ddb_local_service.get(NS, memory_id, stamp=False).last_accessed_at for memory_id in read} == read
