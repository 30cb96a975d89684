"""`make bench`: cold start, warm overhead, per-operation capacity and latency on DynamoDB Local, cost and artifact
sizes, printed as a table and written to .bench/<timestamp>.json and .bench/latest.json. No AWS is needed.

    python -m bench [--quick] [--strict] [--build] [--skip cold,warm,ops,serve,portability,artifacts]
                    [--render .bench/latest.json]
    python -m bench --markdown docs/performance.json > docs/performance.md   (what `make perf-doc` runs)
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

from bench import page, pricing, report, targets
from bench.engine import dynamodb_local

ROOT = Path(__file__).resolve().parents[2]
REGION = "us-east-1"


def run_ops(sizes: list[int], other: int, reps: dict[int, tuple[int, int]], log: Any) -> dict[str, Any]:
    """`reps`: per namespace size, (timed repeats, repeats with units computed)."""
    from adapters.dynamodb import ensure_table, make_client
    from adapters.dynamodb.client import READERS, STAMPERS
    from adapters.offline import offline_embedder
    from bench.baseline import TodayRepository
    from bench.capacity import PAGE_BYTES, Recorder, TableShape, requested_at_submit
    from bench.dataset import load
    from bench.ops import OperationBench
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
        loading = build_services(settings, loader, embedder).memories
        started = time.perf_counter()
        namespaces = {}
        for index, size in enumerate([*sizes, other]):
            name = f"bench-{size}" if index < len(sizes) else f"other-{size}"
            namespaces[name] = load(loading, name, size, seed=index)
            print(f"  loaded {name}: {size} memories ({time.perf_counter() - started:.0f} s)", file=log, flush=True)
        load_s = time.perf_counter() - started

        client = make_client(endpoint_url, REGION)  # the one the service under test uses, counted
        # Uncounted: images and unfiltered re-reads, whole-table scans among them, which on a busy machine outlast
        # the service's 5 s read timeout.
        shadow = make_client(endpoint_url, REGION, read_timeout=60)
        # DynamoDB ends a Query page at 1 MB read; DynamoDB Local does not. Every Query of the counted client reads
        # at most the items of the largest size that fit in 1 MB, so no page it gets could exceed one on AWS.
        # So per kind of item a segment Query reads (its sort keys' prefix: a search copy, an access item...).
        largest_by_kind = _largest_items(shadow, table)
        largest = max(largest_by_kind.values())
        page_items = PAGE_BYTES // largest
        kinds = {kind: PAGE_BYTES // size for kind, size in largest_by_kind.items() if kind}
        recorder = Recorder(client, shape, page_items=page_items, kinds=kinds)
        for pool in (READERS, STAMPERS):  # the service's concurrent calls: sequential by task, not by thread start
            requested_at_submit(pool)
        services = build_services(settings, client, embedder)
        # Each namespace's reads are made for a key of it, as the doors make them: behind the read fence, today's way
        # too, so that the two compare like for like.
        key_ids = {name: services.keys.create(name)[0].key_id for name in namespaces}
        today = MemoryService(TodayRepository(client, table), fenced=True)
        recall = (services.recall, embedder) if services.recall is not None else None
        bench = OperationBench(
            services.memories,
            recorder,
            shadow,
            shape,
            seed=42,
            today=today,
            page_items=page_items,
            recall=recall,
            key_ids=key_ids,
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
                "ops": bench.run(namespace, *reps[namespace.size]),
            }
            print(f"  measured {name} ({time.perf_counter() - op_started:.0f} s)", file=log, flush=True)
        return {
            "load_s": load_s,
            "largest_item_bytes": largest,
            "page_items": page_items,
            "page_items_by_kind": kinds,
            "memories_loaded": sum(ns.size for ns in namespaces.values()),
            "other_namespace": other,
            "recall_model": embedder.model,
            "question_model": embedder.question_model,
            "question_tokens": question_tokens(),
            "passage_tokens": passage_tokens(),
            "recall_dimensions": embedder.dimensions,
            "sizes": results,
        }


def _largest_items(client: Any, table: str) -> dict[str, int]:
    """The size of the table's largest item of each kind, by its sort key's prefix (`MEM`, `Q`, `A`, ...; DynamoDB's
    size rules, bench.capacity.item_size)."""
    from bench.capacity import item_kind, item_size

    largest: dict[str, int] = {}
    params = {"TableName": table}
    while True:
        response = client.scan(**params)
        for item in response.get("Items", []):
            # Items with an id in their key (counters, totals and the like are one a namespace).
            kind = item_kind(item["sk"]["S"]) if "#" in item["sk"]["S"] else ""
            largest[kind] = max(largest.get(kind, 1), item_size(item))
        if "LastEvaluatedKey" not in response:
            return largest
        params["ExclusiveStartKey"] = response["LastEvaluatedKey"]


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
    parser.add_argument(
        "--skip", default="", help="comma-separated parts to skip: cold,warm,ops,serve,portability,artifacts"
    )
    parser.add_argument("--render", metavar="JSON", help="print the table of a stored run (.bench/*.json) and stop")
    parser.add_argument("--markdown", metavar="JSON", help="print docs/performance.md for a stored run and stop")
    return parser.parse_args(argv)


def measure(quick: bool, build: bool, skip: set[str], log: Any) -> dict[str, Any]:
    """One run: each part not skipped, then its costs and targets."""
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
        sizes, other = ([100, 1000], 1000) if quick else ([100, 1000, 10000], 10000)
        reps = {100: (5, 1), 1000: (5, 1)} if quick else {100: (11, 2), 1000: (11, 2), 10000: (5, 1)}
        result["ops"] = run_ops(sizes, other, reps, log=log)
    if "serve" not in skip:
        from bench import serve

        memories = 1000 if quick else 10_000
        print(f"one serve: {memories:,} memories, 16 concurrent clients ...", file=log, flush=True)
        result["serve"] = serve.measure(clients=16, seconds=5 if quick else 8, rounds=3, memories=memories)
    if "portability" not in skip:
        from bench import portability

        memories = 1000 if quick else 10_000
        print(f"export and import: {memories:,} memories, twice ...", file=log, flush=True)
        result["portability"] = portability.measure(memories)
    if "artifacts" not in skip:
        result["artifacts"] = run_artifacts(build)
    result["cost"] = pricing.costs(result)
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
    result = measure(args.quick, args.build, set(filter(None, args.skip.split(","))), log=sys.stderr)
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
