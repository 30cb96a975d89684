"""`make bench`: cold start, warm overhead, per-operation capacity and latency on DynamoDB Local, cost and artifact
sizes, printed as a table and written to .bench/<timestamp>.json and .bench/latest.json. No AWS is needed.

    python -m bench [--quick] [--strict] [--build] [--skip cold,warm,ops,serve,health,portability,artifacts]
                    [--only health] [--sizes 100,1000,10000,30000] [--render .bench/latest.json]
    python -m bench --markdown docs/performance.json > docs/performance.md   (what `make perf-doc` runs, with:)
    python -m bench --charts docs/performance.json   (its pictures, docs/performance-*.svg)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import charts, page, pricing, report, targets, vector_pricing
from bench.engine import dynamodb_local

ROOT = Path(__file__).resolve().parents[2]
REGION = "us-east-1"
# The parts of a run, in the order they run (--skip and --only name them).
PARTS = ("cold", "warm", "ops", "serve", "health", "portability", "artifacts")
# The ops part's namespaces; those larger than FULL_UP_TO measure recall and `q` alone, cold and warm (bench.ops).
SIZES = [100, 1000, 10000, 30000]
QUICK_SIZES = [100, 1000]
FULL_UP_TO = 10000
# Namespaces of this many memories or more are loaded by import (creates run at 10-100 a second on DynamoDB Local,
# an import ten times faster); smaller ones through the service's creates.
IMPORT_FROM = 10000


def run_ops(
    sizes: list[int], other: int, reps: dict[int, tuple[int, int]], log: Any, full_up_to: int | None = None
) -> dict[str, Any]:
    """`reps`: per namespace size, (timed repeats, repeats with units computed). A namespace larger than `full_up_to`
    measures recall and `q` alone (bench.ops.RECALL_AND_Q)."""
    from adapters.dynamodb import ensure_table, make_client
    from adapters.dynamodb.changes import WINDOW_SECONDS
    from adapters.dynamodb.client import READERS, STAMPERS
    from adapters.offline import offline_embedder
    from bench.baseline import TodayRepository
    from bench.capacity import PAGE_BYTES, Recorder, TableShape, requested_at_submit
    from bench.ops import RECALL_AND_Q, OperationBench
    from bench.recall import CountingEmbedder, passage_tokens, question_tokens
    from core.memories import MemoryService
    from handlers.bootstrap import Settings, build_services, use_placeholder_credentials
    from local.template import table_definition

    use_placeholder_credentials()
    with (
        tempfile.TemporaryDirectory(prefix="bench-ddb-") as scratch,
        open(Path(scratch) / "ddb.log", "wb") as stderr,
        dynamodb_local(stderr) as endpoint_url,
    ):
        definition = table_definition()
        shape = TableShape.from_definition(definition)
        table = "bench-memories"
        loader = make_client(endpoint_url, REGION)
        ensure_table(loader, table, definition)
        settings = Settings(table_name=table, endpoint_url=endpoint_url, region=REGION)
        embedder = CountingEmbedder(offline_embedder())  # every write and recall embeds through it, counted
        started = time.perf_counter()
        imported = [size >= IMPORT_FROM for size in sizes]
        namespaces, loaded_s = _load(build_services(settings, loader, embedder), sizes, imported, other, log)
        load_s = time.perf_counter() - started

        client = make_client(endpoint_url, REGION)  # the one the service under test uses, counted
        # Uncounted: images and unfiltered re-reads, whole-table scans among them, which on a busy machine outlast
        # the service's 5 s read timeout.
        shadow = make_client(endpoint_url, REGION, read_timeout=60)
        # DynamoDB ends a Query page at 1 MB read; DynamoDB Local does not. Every Query of the counted client reads
        # at most the items of the largest size that fit in 1 MB, so no page it gets could exceed one on AWS.
        # So per kind of item a segment Query reads (its sort keys' prefix: a search copy, an access item...), and
        # per index (whose page is 1 MB of its entries: a KEYS_ONLY entry, the change index's, is a tenth of an item).
        largest_by_kind, largest_entries = _largest_items(shadow, table, shape, list(namespaces))
        largest = max(largest_by_kind.values())
        kinds = {kind: PAGE_BYTES // size for kind, size in largest_by_kind.items() if kind}
        indexes = {index: PAGE_BYTES // size for index, size in largest_entries.items()}
        recorder = Recorder(client, shape, page_items=PAGE_BYTES // largest, kinds=kinds, indexes=indexes)
        for pool in (READERS, STAMPERS):  # the service's concurrent calls: sequential by task, not by thread start
            requested_at_submit(pool)
        services = build_services(settings, client, embedder)
        # Each namespace's reads are made for a key of it, as the doors make them: behind the read fence, today's way
        # too, so that the two compare like for like.
        key_ids = {name: services.keys.create(name)[0].key_id for name in namespaces}
        today = MemoryService(TodayRepository(client, table), fenced=True)
        memories, recall = _cold(client, table, embedder)
        bench = OperationBench(
            memories,
            recorder,
            shadow,
            shape,
            seed=42,
            today=today,
            page_items=PAGE_BYTES // largest,
            recall=(recall, embedder),
            key_ids=key_ids,
            warm=(services.memories, services.recall) if services.recall is not None else None,
        )
        results: dict[str, Any] = {}
        for name, namespace in namespaces.items():
            if name.startswith("other-"):
                continue
            op_started = time.perf_counter()
            results[str(namespace.size)] = {
                "selectivity": namespace.selectivity(),
                "visible": namespace.visible,
                "reps": reps[namespace.size][0],
                "capacity_reps": reps[namespace.size][1],
                "ops": bench.run(
                    namespace,
                    *reps[namespace.size],
                    only=RECALL_AND_Q if full_up_to is not None and namespace.size > full_up_to else None,
                ),
            }
            print(f"  measured {name} ({time.perf_counter() - op_started:.0f} s)", file=log, flush=True)
        return {
            "load_s": load_s,
            "load_s_by_namespace": loaded_s,
            "imported": [name for name, was in zip(namespaces, [*imported, True], strict=True) if was],
            "largest_item_bytes": largest,
            "page_items": PAGE_BYTES // largest,
            "page_items_by_kind": kinds,
            "page_items_by_index": indexes,
            # A warm refresh lists again every change of this many seconds before its last (adapters.dynamodb.changes).
            "change_window_s": WINDOW_SECONDS,
            "memories_loaded": sum(ns.size for ns in namespaces.values()),
            "other_namespace": other,
            "recall_model": embedder.model,
            "question_model": embedder.question_model,
            "question_tokens": question_tokens(),
            "passage_tokens": passage_tokens(),
            "recall_dimensions": embedder.dimensions,
            "sizes": results,
        }


def _load(
    services: Any, sizes: list[int], imported: list[bool], other: int, log: Any
) -> tuple[dict[str, Any], dict[str, float]]:
    """A namespace of each size (`bench-<size>`), through the memory service's creates or, where `imported` says and
    for the other namespace (`other-<size>`), by `agent-memory import`'s own loading (ten times faster; its revisions
    carry no change key, as any import's); each namespace (bench.dataset.Namespace) and the seconds it took."""
    from adapters.dynamodb.namespaces import Namespaces
    from bench.dataset import exported, load
    from core.recall.indexing import RecallIndexer

    namespaces, loaded_s = {}, {}
    for index, (size, by_import) in enumerate(zip([*sizes, other], [*imported, True], strict=True)):
        name = f"bench-{size}" if index < len(sizes) else f"other-{size}"
        began = time.perf_counter()
        if by_import:
            namespace, memories = exported(name, size, seed=index)
            importing = Namespaces(services.client, services.settings.table_name)
            importing.begin_import(name, "0" * 64)
            importing.load(name, memories, lambda _: None, RecallIndexer(services.embedder))
            importing.finish_import(name, memories)
            namespaces[name] = namespace
        else:
            namespaces[name] = load(services.memories, name, size, seed=index)
        loaded_s[name] = time.perf_counter() - began
        how = "imported" if by_import else "created"
        print(f"  {how} {name}: {size} memories in {loaded_s[name]:.0f} s", file=log, flush=True)
    return namespaces, loaded_s


def _cold(client: Any, table: str, embedder: Any) -> tuple[Any, Any]:
    """The memory and recall services as a process's first read of a namespace finds them: no warm copy (budgets 0),
    every digest or search copy read. The services as built (build_services: warm copies) measure the warm reads."""
    from adapters.dynamodb.memories import DynamoDBMemoryRepository
    from core.memories import MemoryService
    from core.recall.indexing import RecallIndexer
    from core.recall.service import RecallService

    cold = DynamoDBMemoryRepository(client, table, dimensions=embedder.dimensions, warm_search_bytes=0)
    memories = MemoryService(cold, fenced=True, indexer=RecallIndexer(embedder))
    return memories, RecallService(cold, embedder, fenced=True, warm_bytes=0)


def _largest_items(client: Any, table: str, shape: Any, namespaces: list[str]) -> tuple[dict[str, int], dict[str, int]]:
    """The size of the largest item of each kind of the namespaces' partitions (the memories' and each tag's), by its
    sort key's prefix (`MEM`, `Q`, `A`, ...; DynamoDB's size rules, bench.capacity.item_size), and of the largest entry
    of each of `shape`'s indexes. Read by Query, partition by partition: DynamoDB Local's Scan of a table of 50,000
    memories took more than 20 minutes."""
    from concurrent.futures import ThreadPoolExecutor

    from adapters.dynamodb.codec import memory_partition, tag_partition
    from bench.capacity import item_kind, item_size, largest_entries
    from bench.dataset import TAG, TAG_VOCABULARY

    partitions = [
        partition
        for name in namespaces
        for partition in (memory_partition(name), *(tag_partition(name, tag) for tag in (*TAG_VOCABULARY, TAG)))
    ]

    def read(partition: dict[str, Any]) -> tuple[dict[str, int], dict[str, int]]:
        largest: dict[str, int] = {}
        entries: dict[str, int] = {}
        params = {
            "TableName": table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": partition},
        }
        while True:
            response = client.query(**params)
            for item in response.get("Items", []):
                # Items with an id in their key (counters, totals and the like are one a namespace).
                kind = item_kind(item["sk"]["S"]) if "#" in item["sk"]["S"] else ""
                largest[kind] = max(largest.get(kind, 1), item_size(item))
            for index, size in largest_entries(shape, response.get("Items", [])).items():
                entries[index] = max(entries.get(index, 1), size)
            if "LastEvaluatedKey" not in response:
                return largest, entries
            params["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    largest: dict[str, int] = {}
    entries: dict[str, int] = {}
    with ThreadPoolExecutor(max_workers=4) as pool:
        for found, found_entries in pool.map(read, partitions):
            for kind, size in found.items():
                largest[kind] = max(largest.get(kind, 1), size)
            for index, size in found_entries.items():
                entries[index] = max(entries.get(index, 1), size)
    return largest, entries


def run_artifacts(build: bool) -> dict[str, Any]:
    if build:
        subprocess.run(["make", "build"], cwd=ROOT, check=True)  # noqa: S607
    import artifacts  # scripts/artifacts.py

    build_dir = ROOT / ".aws-sam" / "build"
    if not build_dir.is_dir() or not artifacts.function_dirs(build_dir):
        return {"built": False}
    return {
        "built": True,
        "functions": {
            path.name: artifacts.tree_bytes(path) / artifacts.MB for path in artifacts.function_dirs(build_dir)
        },
    }


def _git_head() -> str:
    command = ["git", "rev-parse", "--short", "HEAD"]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False).stdout.strip()  # noqa: S603


def _machine() -> dict[str, Any]:
    """What the run's figures depend on, for the performance page: cores, memory, OS, Java."""
    memory = Path("/proc/meminfo")
    kib = re.search(r"MemTotal:\s+(\d+)", memory.read_text()) if memory.exists() else None
    java = shutil.which("java")
    version = subprocess.run([java, "-version"], capture_output=True, text=True, check=False) if java else None  # noqa: S603
    return {
        "cpus": os.cpu_count(),
        "memory_gib": round(int(kib.group(1)) / 2**20) if kib else None,
        "platform": platform.platform(terse=True),
        "machine": platform.machine(),
        "java": (version.stderr.splitlines() or ["unknown"])[0] if version else "none",
    }


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: sizes 100 and 1,000, fewer repeats")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--build", action="store_true", help="run `make build` first, for artifact sizes")
    parser.add_argument("--skip", default="", help=f"comma-separated parts to skip: {','.join(PARTS)}")
    parser.add_argument("--only", default="", help="comma-separated parts to run, the others skipped (--only health)")
    parser.add_argument(
        "--sizes",
        type=lambda text: [int(size) for size in text.split(",")],
        help="comma-separated namespace sizes of the ops part (default 100,1000,10000,30000; --quick 100,1000); "
        f"those over {FULL_UP_TO:,} measure recall and q alone",
    )
    parser.add_argument("--render", metavar="JSON", help="print the table of a stored run (.bench/*.json) and stop")
    parser.add_argument("--markdown", metavar="JSON", help="print docs/performance.md for a stored run and stop")
    parser.add_argument(
        "--charts", metavar="JSON", help="write the performance page's pictures (SVG) beside a stored run and stop"
    )
    return parser.parse_args(argv)


def measure(quick: bool, build: bool, skip: set[str], log: Any, sizes: list[int] | None = None) -> dict[str, Any]:
    """One run: each part not skipped, then its costs and targets. `sizes`: the ops part's namespaces (by default
    SIZES, or QUICK_SIZES)."""
    started = time.perf_counter()
    result: dict[str, Any] = {
        "started": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "quick": quick,
        "python": sys.version.split()[0],
        "git": _git_head(),
        "machine": _machine(),
    }
    if "cold" not in skip:
        from bench import cold

        print("cold start ...", file=log, flush=True)
        result["cold"] = cold.measure(10 if quick else 15)
    if "warm" not in skip:
        from bench import warm

        print("warm overhead ...", file=log, flush=True)
        result["warm"] = warm.measure(rounds=3 if quick else 5, calls=10 if quick else 20)
    if "ops" not in skip:
        print("operations on DynamoDB Local ...", file=log, flush=True)
        sizes, other = (sizes or QUICK_SIZES, 1000) if quick else (sizes or SIZES, 10000)
        reps = {size: (5, 1) if quick or size >= 10_000 else (11, 2) for size in sizes}
        result["ops"] = run_ops(sizes, other, reps, log=log, full_up_to=FULL_UP_TO)
    if "serve" not in skip:
        from bench import serve

        memories = 1000 if quick else 10_000
        print(f"one serve: {memories:,} memories, 16 concurrent clients ...", file=log, flush=True)
        result["serve"] = serve.measure(clients=16, seconds=5 if quick else 8, rounds=3, memories=memories)
    if "health" not in skip:
        from bench import health

        memories = 1000 if quick else 10_000
        print(f"/healthz while serve searches, then recalls: {memories:,} memories ...", file=log, flush=True)
        result["health"] = health.measure(memories)
    if "portability" not in skip:
        from bench import portability

        memories = 1000 if quick else 10_000
        print(f"export and import: {memories:,} memories, twice ...", file=log, flush=True)
        result["portability"] = portability.measure(memories)
    if "artifacts" not in skip:
        result["artifacts"] = run_artifacts(build)
    result["cost"] = pricing.costs(result)
    result["vector_cost"] = vector_pricing.vector_costs()
    result["targets"] = targets.targets(result)
    result["elapsed_s"] = time.perf_counter() - started
    return result


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    if args.render:
        stored = json.loads(Path(args.render).read_text())
        stored["targets"] = targets.targets(stored)
        print(report.render(stored))
        return 0
    if args.markdown:
        print(page.markdown(json.loads(Path(args.markdown).read_text())), end="")
        return 0
    if args.charts:
        stored = Path(args.charts)
        for path in charts.write_charts(json.loads(stored.read_text()), stored.parent):
            print(f"written: {path}")
        return 0
    skip = set(filter(None, args.skip.split(",")))
    if args.only:
        skip |= set(PARTS) - set(args.only.split(","))
    result = measure(args.quick, args.build, skip, log=sys.stderr, sizes=args.sizes)
    print(report.render(result))
    out = ROOT / ".bench"
    out.mkdir(exist_ok=True)
    text = json.dumps(result, indent=2, default=str)
    stamp = result["started"].replace(":", "").replace("-", "")
    (out / f"{stamp}.json").write_text(text)
    (out / "latest.json").write_text(text)
    print(f"\nwritten: .bench/{stamp}.json and .bench/latest.json ({result['elapsed_s']:.0f} s)")
    missed = [target for target in result["targets"] if target["verdict"] == "MISS"]
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    os.environ.setdefault("AWS_REGION", REGION)
    sys.exit(main())
