"""Export and import at scale: a synthetic export of many memories (one or two revisions each, some deleted, sparse
tags) imported by `agent-memory import` into an empty namespace of Amazon DynamoDB Local, exported back by
`agent-memory export`, imported from that export into another namespace and exported again; every export must be
the source line for line. The seconds each step takes and memories a second. The suite proves the same properties at
500 memories (tests/integration/test_portability.py); the 10,000 of a full run are the bench's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.engine import REGION, dynamodb_local

ROOT = Path(__file__).resolve().parents[2]


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def synthetic_export(namespace: str, count: int) -> str:
    """An export of `count` memories with one or two revisions each, some deleted, built without a store."""
    lines = [
        _compact(
            {
                "format": "agent-memory-export",
                "version": 1,
                "namespace": namespace,
                "exported_at": "2026-04-06T14:12:00.000000Z",
                "include_deleted": True,
                "history": True,
            }
        )
    ]
    for n in range(1, count + 1):
        created = f"2026-04-06T14:{n // 6000:02d}:{n // 100 % 60:02d}.{n % 100:06d}Z"
        record: dict[str, Any] = {
            "id": n,
            "content": f"memory {n}",
            # Tagged sparsely: each tag is one more item to write, and DynamoDB Local writes about 1,000 a second.
            "tags": ["bulk", f"g{n % 7}"][: 2 if n % 20 == 1 else 1 if n % 5 == 2 else 0],
            "created_at": created,
            "updated_at": created,
            "last_accessed_at": None if n % 4 else created,
            "memory_type": "fact",
            "status": "active",
            "version": 1,
        }
        revision = {k: v for k, v in record.items() if k != "last_accessed_at"}
        revisions = [{"revision": 1, "change": "created", "changed_at": created, "key_id": None, **revision}]
        line: dict[str, Any] = {"memory": record}
        if n % 10 == 0:
            record["status"] = "deleted"
            revisions.append({**revisions[0], "revision": 2, "change": "deleted", "status": "deleted"})
            line |= {"prior_status": "active", "deleted_at": created}
        line["revisions"] = revisions
        lines.append(_compact(line))
    return "\n".join(lines) + "\n"


def _cli(*arguments: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(  # noqa: S603 (our own command line, with arguments of ours)
        [sys.executable, "-m", "local", *arguments], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"agent-memory {arguments[0]} failed: {done.stderr[-2000:]}")
    return done


def _timed(*arguments: str) -> tuple[float, str]:
    started = time.perf_counter()
    done = _cli(*arguments)
    return time.perf_counter() - started, done.stdout


def measure(memories: int) -> dict[str, Any]:
    """Two round trips of `memories` memories through DynamoDB Local by the command line, timed step by step."""
    from adapters.dynamodb import ensure_table, make_client
    from handlers.bootstrap import use_placeholder_credentials
    from local.template import table_definition

    use_placeholder_credentials()  # DynamoDB Local takes any; the command line's runs inherit them

    with (
        tempfile.TemporaryDirectory(prefix="bench-portability-") as scratch,
        open(Path(scratch) / "ddb.log", "wb") as log,
        dynamodb_local(log) as endpoint_url,
    ):
        table = "bench-portability"
        ensure_table(make_client(endpoint_url, REGION), table, table_definition())
        where = ["--endpoint-url", endpoint_url, "--table", table]
        source = Path(scratch) / "source.ndjson"
        source.write_text(synthetic_export("bench", memories))
        expected = source.read_text().splitlines()[1:]
        steps: dict[str, float] = {}
        read = str(source)
        for leg in ("first", "second"):
            steps[f"{leg}_import_s"], _ = _timed("import", "--namespace", leg, read, *where)
            exporting = ["export", "--namespace", leg, "--include-deleted", "--history", *where]
            steps[f"{leg}_export_s"], exported = _timed(*exporting)
            if exported.splitlines()[1:] != expected:
                raise RuntimeError(f"the {leg} round trip of {memories:,} memories changed what it carried")
            read = str(Path(scratch) / f"{leg}.ndjson")
            Path(read).write_text(exported)
    imports = [steps["first_import_s"], steps["second_import_s"]]
    exports = [steps["first_export_s"], steps["second_export_s"]]
    return {
        "memories": memories,
        "lines_kept": True,
        **steps,
        "import_per_s": memories / min(imports),
        "export_per_s": memories / min(exports),
    }
