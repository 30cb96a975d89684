"""Costs, targets and the printed table, all computed from the run's measurements."""

from __future__ import annotations

import math
from typing import Any

# Published prices (docs/.. /work/shared/notes/performance-anchors.md section 3), us-east-1.
LAMBDA_ARM_GB_S = 0.0000133334
LAMBDA_PER_M = 0.20
HTTP_API_PER_M = 1.00
RRU_PER_M = 0.125
WRU_PER_M = 0.625
FUNCTIONS = {"http": "HttpFunction", "mcp": "McpFunction"}
ARTIFACT_LIMIT_MB = {"HttpFunction": 20.0, "McpFunction": 50.0}
COLD_LIMIT = {"http": 2.5, "mcp": 4.5}
MCP_WARM_RATIO = 1 / 3
SERVE_CREATE_P50_MS = 20.0
SERVE_RSS_MB = 500.0
# /healthz answers from the event loop, whatever the storage calls in worker threads do: a slow list must not hold
# it up beyond a scheduling delay.
SERVE_HEALTH_P99_MS = 50.0
WARM_LIMIT = 50.0
STAMP_WCU_LIMIT = 3.0
SEARCH_ROUNDS = 2
TAG_BOUND_RATIO = 2.0
STAMP_BATCH = 25
STAMP_LATENCY_RATIO = 0.25
SELECTIVE_ROUNDS = 3
DEEP_CPU_RATIO = 0.25


def memory_mb(function: str) -> int:
    from local.template import load_template

    template = load_template()
    own = template["Resources"][function]["Properties"].get("MemorySize")
    return int(own or template["Globals"]["Function"]["MemorySize"])


def costs(result: dict[str, Any]) -> dict[str, Any]:
    """USD per 1M requests of each kind, per door: Lambda arm64 (requests + GB-s for the measured p50 plus the
    door's warm in-process overhead, billed per started ms), API Gateway HTTP API for the HTTP door (the MCP door is
    a function URL: no fee), DynamoDB on-demand read and write request units."""
    ops = result.get("ops")
    if not ops:
        return {}
    warm = result.get("warm", {})
    out: dict[str, Any] = {"assumptions": costs.__doc__, "memory_mb": {}}
    for door, function in FUNCTIONS.items():
        out["memory_mb"][door] = memory_mb(function)
    for size, entry in ops["sizes"].items():
        for op, m in entry["ops"].items():
            if op == "naive":
                continue
            ddb = m["rcu"] * RRU_PER_M + m["wcu"] * WRU_PER_M
            for door in FUNCTIONS:
                overhead_ms = warm.get(door, {}).get("handler_us", 0.0) / 1000
                billed_ms = math.ceil(m["p50_ms"] + overhead_ms)
                compute = 1e6 * out["memory_mb"][door] / 1024 * billed_ms / 1000 * LAMBDA_ARM_GB_S
                total = compute + LAMBDA_PER_M + ddb + (HTTP_API_PER_M if door == "http" else 0.0)
                out.setdefault(size, {}).setdefault(op, {})[door] = {
                    "billed_ms": billed_ms,
                    "lambda": compute + LAMBDA_PER_M,
                    "dynamodb": ddb,
                    "total": total,
                }
    return out


def _verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else "PASS" if ok else "MISS"


def targets(result: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    def add(name: str, target: str, measured: str, ok: bool | None) -> None:
        found.append({"name": name, "target": target, "measured": measured, "verdict": _verdict(ok)})

    ops = result.get("ops")
    if ops:
        sizes = sorted(ops["sizes"], key=int)
        small, large = ops["sizes"][sizes[0]]["ops"], ops["sizes"][sizes[-1]]["ops"]
        at = f"N={int(sizes[-1]):,}"
        # history: the memory's revision count, then the page of revisions; restore: a read, then one transaction.
        for op, most in (("get", 1), ("patch", 1), ("delete", 1), ("create", 2), ("history", 2), ("restore", 2)):
            if op not in large:
                continue
            calls = large[op]["calls"]
            add(f"round trips: {op}", f"<= {most} DynamoDB call(s)", f"{calls:g} ({at})", calls <= most)
        for op in ("list", "list_offset", "prime"):
            m = large[op]
            wave = m["stamps"] <= 1 or m["stamp_threads"] > 1
            ok = m["read_calls"] <= m["pages_needed"] and m["write_calls"] <= max(m["items_returned"], 0) and wave
            add(
                f"round trips: {op}",
                f"reads <= {m['pages_needed']} page(s) needed; writes <= one concurrent wave over the page",
                f"{m['read_calls']:g} reads + {m['write_calls']:g} writes ({m['stamp_threads']} threads; {at})",
                ok,
            )
        for op in ("list", "list_offset"):
            s, m = small[op], large[op]
            lower = m["lower_bound"]["rcu"] if m.get("lower_bound") else None
            add(
                f"{op} O(offset+limit): RCU",
                f"N={int(sizes[-1]):,} <= 2x N={int(sizes[0]):,}",
                f"{m['rcu']:g} vs {s['rcu']:g}",
                m["rcu"] <= 2 * s["rcu"],
            )
            add(
                f"{op} O(offset+limit): items read",
                "same",
                f"{m['items_read']:g} vs {s['items_read']:g}",
                m["items_read"] <= 2 * s["items_read"],
            )
            add(
                f"{op} O(offset+limit): CPU",
                "same",
                f"{m['cpu_ms']:.1f} vs {s['cpu_ms']:.1f} ms",
                m["cpu_ms"] <= 2 * s["cpu_ms"],
            )
            add(
                f"{op}: RCU vs lower bound",
                f"<= 2x lower bound ({at})",
                f"{m['rcu']:g} vs {lower:g}" if lower is not None else "no Query made",
                None if lower is None else m["rcu"] <= 2 * lower,
            )
        for op in ("search_q", "search_tag"):
            m = large[op]
            add(
                f"search round trips: {op}",
                f"<= {SEARCH_ROUNDS} sequential reads, 1 MB pages",
                f"{m['read_rounds']:g} ({m['read_calls']:g} reads, {m['write_calls']:g} writes; {at})",
                m["read_rounds"] <= SEARCH_ROUNDS,
            )
        tag, bound = large["search_tag"], large["search_tag"].get("lower_bound")
        add(
            "tag search O(page): RCU",
            f"<= {TAG_BOUND_RATIO:g}x page-only bound ({at})",
            f"{tag['rcu']:g} vs {bound['rcu']:g} ({tag['rcu'] / bound['rcu']:.0f}x)" if bound else "no Query made",
            None if not bound else tag["rcu"] <= TAG_BOUND_RATIO * bound["rcu"],
        )
        hundred, today = large.get("list_100"), large.get("list_100@today")
        if hundred:
            most = max(1, math.ceil(hundred["stamps"] / STAMP_BATCH))
            add(
                "stamps in batches: list_100 calls",
                f"<= ceil(rows / {STAMP_BATCH}) = {most} write calls",
                f"{hundred['write_calls']:g} calls for {hundred['stamps']:g} rows",
                hundred["write_calls"] <= most,
            )
        if hundred and today:
            ratio = hundred["p50_ms"] / today["p50_ms"]
            add(
                "stamps in batches: list_100 p50",
                f"<= {STAMP_LATENCY_RATIO:g} of today's (one UpdateItem per row)",
                f"{hundred['p50_ms']:.1f} vs {today['p50_ms']:.1f} ms ({ratio:.2f}x)",
                ratio <= STAMP_LATENCY_RATIO,
            )
            # DynamoDB Local runs a batch's statements one after another (about 1 ms each, warm), where AWS spreads
            # them over partitions; the function's own time is what the batching saves everywhere.
            add(
                "stamps in batches: list_100 client CPU",
                "reported (the function's own time)",
                f"{hundred['cpu_ms']:.1f} vs {today['cpu_ms']:.1f} ms ({hundred['cpu_ms'] / today['cpu_ms']:.2f}x)",
                None,
            )
        invalid = large.get("list_invalid")
        if invalid:
            share = ops["sizes"][sizes[-1]]["selectivity"].get("invalid", 0)
            add(
                "selective filter: status=invalid",
                f"<= {SELECTIVE_ROUNDS} sequential reads ({share:.0%} of rows)",
                f"{invalid['read_rounds']:g} ({at})",
                invalid["read_rounds"] <= SELECTIVE_ROUNDS,
            )
        deep, today = large.get("list_deep"), large.get("list_deep@today")
        if deep and today:
            ratio = deep["cpu_ms"] / today["cpu_ms"]
            add(
                "deep offset: CPU at offset 5000",
                f"<= {DEEP_CPU_RATIO:g} of today's (whole rows skipped)",
                f"{deep['cpu_ms']:.0f} vs {today['cpu_ms']:.0f} ms ({ratio:.2f}x)",
                ratio <= DEEP_CPU_RATIO,
            )
        naive = large.get("naive")
        for op in ("search_q", "search_tag"):
            m = large[op]
            if naive is None:
                add(f"{op}: CPU vs naive", "<= 1/3 naive", "naive not measured", None)
                continue
            add(
                f"{op}: CPU vs naive read",
                f"<= 1/3 of naive ({at})",
                f"{m['cpu_ms']:.0f} vs {naive['cpu_ms']:.0f} ms ({m['cpu_ms'] / naive['cpu_ms']:.2f}x)",
                m["cpu_ms"] <= naive["cpu_ms"] / 3,
            )
            # Each read call rounds its bytes up to 4 KB once (0.5 RCU at most, eventually consistent): reading the
            # same items in more calls may cost that much more, and no more.
            allowance = 0.5 * max(0, m["read_calls"] - naive["pages"])
            add(
                f"{op}: RCU vs naive read",
                "<= naive + 0.5 per extra call",
                f"{m['rcu']:g} vs {naive['rcu']:g} + {allowance:g} ({m['read_calls']:g} calls vs {naive['pages']})",
                m["rcu"] <= naive["rcu"] + allowance,
            )
        for op in ("list", "prime"):
            m = large[op]
            add(
                f"stamps cost what they change: {op}",
                f"<= {STAMP_WCU_LIMIT:g} WCU per stamp (1 table + 1 index move)",
                f"{m['wcu_per_stamp']:.2f} WCU/stamp x {m['stamps']:g}",
                m["wcu_per_stamp"] <= STAMP_WCU_LIMIT if m["stamps"] else None,
            )
    cold = result.get("cold")
    if cold:
        for door, limit in COLD_LIMIT.items():
            ratio = cold[door]["ratio_to_boto3"]
            spread = cold[door].get("pair_ratios")
            shown = f"{ratio:.2f}x" + (
                f" (pairs: IQR {spread['q1']:.2f}-{spread['q3']:.2f}, range {spread['min']:.2f}-{spread['max']:.2f})"
                if spread
                else ""
            )
            add(f"cold start: {door}", f"<= {limit:g}x import boto3, {cold['rounds']} pairs", shown, ratio <= limit)
        for door, first in cold.get("first_invocation", {}).items():
            add(
                f"first invocation: {door}",
                "reported (client built at init)",
                f"{first['first_ms']:.1f} ms, then {first['second_ms']:.1f} ms",
                None,
            )
    warm = result.get("warm")
    if warm:
        ratio = warm["http"]["ratio"]
        add("warm overhead: http", f"<= {WARM_LIMIT:g}x bare handler", f"{ratio:.0f}x", ratio <= WARM_LIMIT)
        if "mcp@today" in warm:
            now, today = warm["mcp"]["handler_us"], warm["mcp@today"]["handler_us"]
            add(
                "MCP warm call",
                "<= 1/3 of today's (a session manager per invocation)",
                f"{now:.0f} vs {today:.0f} us ({now / today:.2f}x)",
                now <= MCP_WARM_RATIO * today,
            )
        for door in ("http", "mcp"):
            if f"{door}+metrics" in warm:
                added = warm[f"{door}+metrics"]["handler_us"] - warm[door]["handler_us"]
                add(f"metrics: added warm cost, {door}", "reported", f"{added:+.0f} us per call", None)
    served = result.get("serve")
    if served and "create_p50_ms" in served:
        at = f"N={served['memories']:,}"
        add(
            "serve: create p50 at the end",
            f"< {SERVE_CREATE_P50_MS:g} ms (last {served['create_timed']} creates, one client; {at})",
            f"{served['create_p50_ms']:.1f} ms",
            served["create_p50_ms"] < SERVE_CREATE_P50_MS,
        )
        add(
            "serve: resident memory",
            f"< {SERVE_RSS_MB:g} MB (serve + its DynamoDB Local, once loaded; {at})",
            f"{served['rss_mb']:.0f} MB ({_by_process(served.get('rss_parts', {}))})",
            served["rss_mb"] < SERVE_RSS_MB,
        )
        add(
            "serve: resident memory after the client rounds",
            "reported (16 clients, whole-namespace searches)",
            f"{served['rss_after_mb']:.0f} MB ({_by_process(served.get('rss_after_parts', {}))})",
            None,
        )
        health = served["health"]
        add(
            "serve: /healthz under slow lists",
            f"p99 < {SERVE_HEALTH_P99_MS:g} ms ({health['listers']} clients searching the whole namespace)",
            f"p50 {health['p50_ms']:.1f} ms, p99 {health['p99_ms']:.1f} ms ({health['searches']} searches meanwhile)",
            health["p99_ms"] < SERVE_HEALTH_P99_MS,
        )
        add(
            f"serve: {served['clients']} concurrent clients",
            "all served (no non-2xx)",
            f"{served['median_ops_per_s']:.0f} ops/s, {served['failed']} failed",
            served["failed"] == 0,
        )
    artifacts = result.get("artifacts")
    if artifacts is not None:
        for function, limit in ARTIFACT_LIMIT_MB.items():
            size = artifacts.get("functions", {}).get(function) if artifacts.get("built") else None
            shown = f"{size:.1f} MB" if size is not None else "not built (run make build)"
            add(
                f"artifact: {function}",
                f"<= {limit:g} MB unzipped, boto3 excluded",
                shown,
                None if size is None else size <= limit,
            )
    return found


def _table(headers: list[str], rows: list[list[str]], left: int = 1) -> str:
    """Columns before `left` are left-aligned, the rest right-aligned."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]
    lines = [
        "  ".join(
            str(cell).ljust(width) if i < left else str(cell).rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in [headers, *rows]
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def _by_process(parts: dict[str, float]) -> str:
    return ", ".join(f"{name} {mb:.0f}" for name, mb in sorted(parts.items()))


def render(result: dict[str, Any]) -> str:
    out: list[str] = [
        f"agent-memory bench  {result['started']}  git {result['git']}  python {result['python']}"
        + ("  (QUICK)" if result["quick"] else "")
    ]
    cold = result.get("cold")
    if cold:
        out.append(
            f"\n== Cold start: fresh interpreter, median of {cold['rounds']} interleaved rounds, net of "
            f"`python -c pass` ({cold['pass_ms']:.0f} ms); in {cold.get('environments', 'the dev environment')}"
        )
        rows = [
            [
                case,
                f"{cold[case]['net_ms']:.0f}",
                f"{cold[case]['ratio_to_boto3']:.2f}",
                str(cold[case]["modules"]),
                ",".join(cold[case]["denied_loaded"]) or "-",
            ]
            for case in ("boto3", "http", "mcp")
        ]
        out.append(_table(["import", "net ms", "x boto3", "modules", "deny-listed loaded"], rows))
    warm = result.get("warm")
    if warm:
        out.append("\n== Warm overhead: in-process handler over in-memory ports, events/ (mean over events)")
        rows = [
            [door, str(w["events"]), f"{w['handler_us']:.0f}", f"{w['bare_us']:.1f}", f"{w['ratio']:.0f}"]
            for door, w in warm.items()
        ]
        out.append(_table(["door", "events", "us/call", "bare us", "x bare"], rows))
    ops = result.get("ops")
    if ops:
        reps = ", ".join(f"N={int(n):,}: {e['reps']}/{e['capacity_reps']}" for n, e in ops["sizes"].items())
        sel = ", ".join(
            f"N={int(n):,}: q {e['selectivity']['q']:.1%}, tag {e['selectivity']['tag']:.1%}"
            for n, e in ops["sizes"].items()
        )
        out.append(
            f"\n== Operations on DynamoDB Local: {ops['memories_loaded']:,} memories loaded in {ops['load_s']:.0f} s "
            f"(incl. another namespace of {ops['other_namespace']:,}); repeats timed/with units: {reps}\n"
            f"   search_q: q='espresso', search_tag: tag='travel'; share of visible memories matching: {sel}\n"
            "   list = defaults (sort=id, limit 10); list_offset = offset 50; prime = status=active sort=updated_at "
            "limit=20\n"
            "   calls r+w (seq) = read + write calls (sequential read round trips); items rd/ret = evaluated / "
            "returned by DynamoDB; p99 = nearest rank\n"
            f"   1 MB pages modelled: every Query reads at most {ops.get('page_items', '?')} items (1 MB / the largest "
            f"item, {ops.get('largest_item_bytes', '?')} bytes); op@today = today's repository (bench/baseline.py)\n"
            "   LB = lower bound: one eventually consistent Query of offset+limit rows on the index the op read first"
        )
        rows = []
        for size, entry in ops["sizes"].items():
            for op, m in entry["ops"].items():
                if op == "naive":
                    rows.append(
                        [
                            f"{int(size):,}",
                            "naive read",
                            str(m["pages"]),
                            f"{m['items_read']}/{m['items_read']}",
                            f"{m['rcu']:g}",
                            "0",
                            f"{m['cpu_ms']:.1f}",
                            f"{m['p50_ms']:.1f}",
                            f"{m['p99_ms']:.1f}",
                            "",
                            "",
                            "",
                            "",
                            "",
                        ]
                    )
                    continue
                lb = m.get("lower_bound")
                rows.append(
                    [
                        f"{int(size):,}",
                        op,
                        f"{m['read_calls']:g}+{m['write_calls']:g} ({m.get('read_rounds', 0):g})",
                        f"{m['items_read']:g}/{m['items_returned']:g}",
                        f"{m['rcu']:g}",
                        f"{m['wcu']:g}",
                        f"{m['cpu_ms']:.1f}",
                        f"{m['p50_ms']:.1f}",
                        f"{m['p99_ms']:.1f}",
                        f"{m['wcu_per_stamp']:.1f}" if "wcu_per_stamp" in m and m["stamps"] else "",
                        f"{lb['rcu']:g}" if lb else "",
                        f"{lb['p50_ms']:.1f}" if lb else "",
                        f"{m['p50_ms'] / lb['p50_ms']:.1f}" if lb else "",
                        f"{m['p99_ms'] / lb['p99_ms']:.1f}" if lb else "",
                    ]
                )
        out.append(
            _table(
                [
                    "N",
                    "op",
                    "calls r+w",
                    "items rd/ret",
                    "RCU",
                    "WCU",
                    "CPU ms",
                    "p50 ms",
                    "p99 ms",
                    "WCU/stamp",
                    "LB RCU",
                    "LB p50",
                    "p50/LB",
                    "p99/LB",
                ],
                rows,
            )
        )
    cost = result.get("cost")
    if cost:
        out.append(
            "\n== Cost, USD per 1M requests (HTTP door / MCP door): Lambda arm64 "
            f"{cost['memory_mb']['http']} MB at ${LAMBDA_ARM_GB_S}/GB-s for p50 + warm overhead (per started ms) + "
            f"${LAMBDA_PER_M}/1M requests; HTTP API ${HTTP_API_PER_M}/1M (function URL: free); DynamoDB on-demand "
            f"${RRU_PER_M}/1M RRU, ${WRU_PER_M}/1M WRU; us-east-1, no free tier, cold starts (<1%) left out"
        )
        sizes = [size for size in cost if size not in ("assumptions", "memory_mb")]
        ops_names = list(cost[sizes[0]]) if sizes else []
        rows = [
            [op, *(f"{cost[size][op]['http']['total']:.2f} / {cost[size][op]['mcp']['total']:.2f}" for size in sizes)]
            for op in ops_names
        ]
        out.append(_table(["op", *(f"N={int(size):,}" for size in sizes)], rows))
    served = result.get("serve")
    if served:
        if "create_p50_ms" in served:
            out.append(
                f"\n== One `serve` on its own DynamoDB Local: {served['memories']:,} creates over HTTP in "
                f"{served['load_s']:.0f} s; create p50 of the last {served['create_timed']}: "
                f"{served['create_p50_ms']:.1f} ms; serve + engine RSS {served['rss_mb']:.0f} MB"
            )
        out.append(
            f"\n== One `serve` on DynamoDB Local, {served['clients']} concurrent HTTP clients (create, read, search in "
            f"turn): median of {len(served['rounds'])} rounds of {served['seconds']:.0f} s"
        )
        rows = [[f"{r['ops_per_s']:.0f}", str(int(r["failed"]))] for r in served["rounds"]]
        out.append(_table(["ops/s", "non-2xx"], rows) + f"\nmedian: {served['median_ops_per_s']:.0f} ops/s")
    artifacts = result.get("artifacts")
    if artifacts is not None:
        out.append("\n== Artifacts, unzipped (boto3 excluded)")
        if artifacts.get("built"):
            out.append("\n".join(f"{name}: {mb:.1f} MB" for name, mb in artifacts["functions"].items()))
        else:
            out.append("not built (run make build, or make bench ARGS=--build)")
    out.append("\n== Targets (make bench reports; --strict exits 1 on a MISS)")
    out.append(
        _table(
            ["target", "budget", "measured", ""],
            [[t["name"], t["target"], t["measured"], t["verdict"]] for t in result["targets"]],
            left=4,
        )
    )
    return "\n".join(out)
