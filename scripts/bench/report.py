"""The printed report of a run: one plain-text table per part, then the targets (bench.targets)."""

from __future__ import annotations

from typing import Any

from bench.charts import COLD_AND_WARM
from bench.pricing import (
    AGENTCORE_RETRIEVALS_PER_M,
    HTTP_API_PER_M,
    LAMBDA_ARM_GB_S,
    LAMBDA_PER_M,
    RRU_PER_M,
    TITAN_V2_PER_M_TOKENS,
    WRU_PER_M,
)
from bench.recall import growth
from bench.targets import read_parts

OPS_LEGEND = (
    "   list = defaults (sort=id, limit 10); list_offset = offset 50; prime = status=active sort=updated_at limit=20\n"
    "   calls r+w (seq) = read + write calls (sequential read round trips); items rd/ret = evaluated / returned by "
    "DynamoDB; p99 = nearest rank\n"
)
OPS_HEADERS = [
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
]


def _calls(m: dict[str, Any]) -> str:
    """An operation's calls: reads + writes (read round trips in sequence)."""
    return f"{m['read_calls']:g}+{m['write_calls']:g} ({m['read_rounds']:g})"


def _dollars(cost: dict[str, Any], size: str, op: str) -> str:
    """USD per 1M of `op` at `size` through the HTTP door / the MCP door, as Cost priced it; empty when it did not."""
    priced = cost.get(size, {}).get(op, {})
    return f"{priced['http']['total']:.2f} / {priced['mcp']['total']:.2f}" if priced else ""


def table(headers: list[str], rows: list[list[str]], left: int = 1) -> str:
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


def render(result: dict[str, Any]) -> str:
    out: list[str] = [
        f"agent-memory bench  {result['started']}  git {result['git']}  python {result['python']}"
        + ("  (QUICK)" if result["quick"] else "")
    ]
    sections = (
        ("cold", _cold),
        ("warm", _warm),
        ("ops", _ops),
        ("cost", _cost),
        ("vector_cost", _vector_cost),
        ("serve", _serve),
        ("health", _health),
        ("portability", _portability),
    )
    out.extend(part(result[name]) for name, part in sections if result.get(name))
    if any("recall" in entry["ops"] for entry in result.get("ops", {}).get("sizes", {}).values()):
        out.append(_recall(result))
    if any("recall_warm" in entry["ops"] for entry in result.get("ops", {}).get("sizes", {}).values()):
        out.append(_cold_and_warm(result))
    if any("related" in entry["ops"] for entry in result.get("ops", {}).get("sizes", {}).values()):
        out.append(_related(result))
    if result.get("artifacts") is not None:
        out.append(_artifacts(result["artifacts"]))
    out.append("\n== Targets (make bench reports; --strict exits 1 on a MISS)")
    rows = [[t["name"], t["target"], t["measured"], t["verdict"]] for t in result["targets"]]
    out.append(table(["target", "budget", "measured", ""], rows, left=4))
    return "\n".join(out)


def _cold(cold: dict[str, Any]) -> str:
    title = (
        f"\n== Cold start: fresh interpreter, median of {cold['rounds']} interleaved rounds, net of "
        f"`python -c pass` ({cold['pass_ms']:.0f} ms); in {cold.get('environments', 'the dev environment')}; "
        "a door's floor: boto3, a DynamoDB client and the frameworks, no code of ours"
    )
    counted = cold.get("instructions") or {}

    def row(case: str, name: str, timed: dict[str, Any], loaded: dict[str, Any]) -> list[str]:
        instructions = counted.get(case)
        return [
            name,
            f"{timed['net_ms']:.0f}",
            f"{timed['ratio_to_boto3']:.2f}",
            f"{instructions['ratio_to_boto3']:.2f}" if instructions else "-",
            str(loaded.get("modules", "-")),
            ",".join(loaded.get("denied_loaded", [])) or "-",
        ]

    rows = [row("boto3", "boto3", cold["boto3"], cold["boto3"])]
    for door in ("http", "mcp"):
        rows.append(row(door, door, cold[door], cold[door]))
        if "floor" in cold[door]:
            rows.append(row(f"{door}_floor", f"{door} floor", cold[door]["floor"], {}))
    headers = ["import", "net ms", "x boto3", "x boto3 (instructions)", "modules", "deny-listed loaded"]
    return title + "\n" + table(headers, rows)


def _warm(warm: dict[str, Any]) -> str:
    rows = [
        [door, str(w["events"]), f"{w['handler_us']:.0f}", f"{w['bare_us']:.1f}", f"{w['ratio']:.0f}"]
        for door, w in warm.items()
    ]
    return "\n== Warm overhead: in-process handler over in-memory ports, events/ (mean over events)\n" + table(
        ["door", "events", "us/call", "bare us", "x bare"], rows
    )


def _kinds(ops: dict[str, Any]) -> str:
    """How many items a Query of one id segment reads at most, per kind of item, when the run recorded it."""
    kinds = ops.get("page_items_by_kind")
    if not kinds:
        return ""
    indexes = ops.get("page_items_by_index")
    entries = (
        ", an index's entries " + ", ".join(f"{index} {n:,}" for index, n in sorted(indexes.items())) if indexes else ""
    )
    return ", an id segment of one kind " + ", ".join(f"{kind}# {n:,}" for kind, n in sorted(kinds.items())) + entries


def _fence(ops: dict[str, Any]) -> str:
    """Whether the run's reads paid their read fence (runs since issue #38 do: every read is made for an API key)."""
    if any("fence_reads" in m for entry in ops["sizes"].values() for m in entry["ops"].values()):
        return (
            "   reads are made for an API key: each figure includes the read fence, 1 consistent GetItem of the key\n"
        )
    return "   reads made without the read fence (a run from before it: each read now adds 1 consistent GetItem)\n"


def _ops(ops: dict[str, Any]) -> str:
    reps = ", ".join(f"N={int(n):,}: {e['reps']}/{e['capacity_reps']}" for n, e in ops["sizes"].items())
    sel = ", ".join(
        f"N={int(n):,}: q {e['selectivity']['q']:.1%}, tag {e['selectivity']['tag']:.1%}"
        for n, e in ops["sizes"].items()
    )
    imported = f"; by import: {', '.join(ops['imported'])}" if ops.get("imported") else ""
    title = (
        f"\n== Operations on DynamoDB Local: {ops['memories_loaded']:,} memories loaded in {ops['load_s']:.0f} s "
        f"(incl. another namespace of {ops['other_namespace']:,}{imported}); repeats timed/with units: {reps}\n"
        f"   search_q: q='espresso', search_tag: tag='travel'; share of visible memories matching: {sel}\n"
        + OPS_LEGEND
        + _fence(ops)
        + f"   1 MB pages modelled: every Query reads at most {ops.get('page_items', '?')} items (1 MB / the largest "
        f"item, {ops.get('largest_item_bytes', '?')} bytes){_kinds(ops)}; op@today = today's repository "
        "(bench/baseline.py)\n"
        "   LB = lower bound: one eventually consistent Query of offset+limit rows on the index the op read first"
    )
    rows = [_op_row(size, op, m) for size, entry in ops["sizes"].items() for op, m in entry["ops"].items()]
    return title + "\n" + table(OPS_HEADERS, rows)


def _op_row(size: str, op: str, m: dict[str, Any]) -> list[str]:
    n = f"{int(size):,}"
    if op == "naive":
        read = [str(m["pages"]), f"{m['items_read']}/{m['items_read']}", f"{m['rcu']:g}", "0"]
        timing = [f"{m['cpu_ms']:.1f}", f"{m['p50_ms']:.1f}", f"{m['p99_ms']:.1f}"]
        return [n, "naive read", *read, *timing, *([""] * 5)]
    lb = m.get("lower_bound")
    bound = (
        [
            f"{lb['rcu']:g}",
            f"{lb['p50_ms']:.1f}",
            f"{m['p50_ms'] / lb['p50_ms']:.1f}",
            f"{m['p99_ms'] / lb['p99_ms']:.1f}",
        ]
        if lb
        else [""] * 4
    )
    return [
        n,
        op,
        f"{m['read_calls']:g}+{m['write_calls']:g} ({m.get('read_rounds', 0):g})",
        f"{m['items_read']:g}/{m['items_returned']:g}",
        f"{m['rcu']:g}",
        f"{m['wcu']:g}",
        f"{m['cpu_ms']:.1f}",
        f"{m['p50_ms']:.1f}",
        f"{m['p99_ms']:.1f}",
        f"{m['wcu_per_stamp']:.1f}" if "wcu_per_stamp" in m and m["stamps"] else "",
        *bound,
    ]


def _cost(cost: dict[str, Any]) -> str:
    title = (
        "\n== Cost, USD per 1M requests (HTTP door / MCP door): Lambda arm64 "
        f"{cost['memory_mb']['http']} MB at ${LAMBDA_ARM_GB_S}/GB-s for p50 + warm overhead (per started ms) + "
        f"${LAMBDA_PER_M}/1M requests; HTTP API ${HTTP_API_PER_M}/1M (function URL: free); DynamoDB on-demand "
        f"${RRU_PER_M}/1M RRU, ${WRU_PER_M}/1M WRU; us-east-1, no free tier, cold starts (<1%) left out"
    )
    sizes = [size for size in cost if size not in ("assumptions", "memory_mb")]
    ops_names = list(dict.fromkeys(op for size in sizes for op in cost[size]))  # the largest sizes measure fewer
    rows = [[op, *(_priced(cost[size][op]) if op in cost[size] else "" for size in sizes)] for op in ops_names]
    if any("stamps" in doors["http"] for size in sizes for doors in cost[size].values()):
        title += "\n   (stamps $x: the part of the price that pays for the access stamps, the same at both doors)"
    return title + "\n" + table(["op", *(f"N={int(size):,}" for size in sizes)], rows)


def _vector_cost(vector: dict[str, Any]) -> str:
    """Recall with the vector index on, per namespace size: computed from AWS's published prices (bench.vector_pricing),
    not measured."""
    prices = vector["prices"]
    index = (
        f"S3 Vectors ${prices['query_per_m']:.2f}/1M queries, storage ${prices['storage_per_gb_month']:.2f}/GB-month, "
        f"puts ${prices['put_per_gb']:.2f}/GB ({vector['source']}, read {vector['read']})"
    )
    reads = (
        f"{vector.get('queries_per_recall', 1):g} queries a recall (the nearest, and the nearest holding each of the "
        f"question's words); DynamoDB: the id counter and the digests named, by key (at most {vector['digest_rru']:g} "
        "RRU)"
    )
    title = (
        "\n== Recall with the vector index on (RecallVectorIndex), USD per 1M recalls over a namespace alone in its "
        f"index: computed from AWS's published prices, not measured\n   {index}; {reads}; "
        f"{vector['dimensions']}-dimension vectors\n   left out: the query's data processed (no AWS price found), "
        "which grows with the index: totals are lower bounds; Lambda and Bedrock as in Recall"
    )
    rows = [
        [
            f"{int(size):,}",
            f"{priced['queries']:.2f}",
            f"{priced['digests']:.2f}",
            f"{priced['total']:.2f}",
            f"{priced['storage_month']:.4f}",
            f"{priced['put_once']:.4f}",
        ]
        for size, priced in vector["sizes"].items()
    ]
    headers = ["N", "$ queries", "$ DDB", "$ total", "$ storage/month", "$ put all once"]
    return title + "\n" + table(headers, rows)


def _priced(doors: dict[str, dict[str, float]]) -> str:
    stamps = doors["http"].get("stamps", 0.0)
    return f"{doors['http']['total']:.2f} / {doors['mcp']['total']:.2f}" + (f" (stamps {stamps:.2f})" if stamps else "")


def _recall(result: dict[str, Any]) -> str:
    ops, cost = result["ops"], result.get("cost", {})
    title = (
        f"\n== Recall: a question, default filters, limit 10; digests of {ops.get('recall_dimensions', '?')}-dimension "
        f"vectors (the deployed default's size) by {ops.get('recall_model', '?')}, the question also embedded by "
        f"{ops.get('question_model', '?')} (its time included)\n"
        f"   USD per 1M recalls: DynamoDB units + Titan V2 at ${TITAN_V2_PER_M_TOKENS}/1M tokens "
        f"(~{ops.get('question_tokens', 0):.0f} tokens a question) + Lambda (HTTP door / MCP door, as in Cost); "
        f"AgentCore Memory: ${AGENTCORE_RETRIEVALS_PER_M:g} per 1M retrievals"
    )
    rows = []
    for size, entry in ops["sizes"].items():
        m = entry["ops"].get("recall")
        if not m:
            continue
        priced = cost.get(size, {}).get("recall", {})
        total = _dollars(cost, size, "recall")
        dollars = [f"{priced['mcp']['dynamodb']:.2f}", f"{priced['mcp']['bedrock']:.2f}", total] if priced else [""] * 3
        rows.append(
            [
                f"{int(size):,}",
                _calls(m),
                f"{m['items_read']:g}",
                f"{m['rcu']:g}",
                f"{m['wcu']:g}",
                f"{m.get('embed_calls', 0):g}",
                f"{m['p50_ms']:.1f}",
                f"{m['p99_ms']:.1f}",
                *dollars,
            ]
        )
    headers = ["N", "calls r+w (seq)", "items rd", "RCU", "WCU", "Bedrock", "p50 ms", "p99 ms", "$ DDB", "$ Bedrock"]
    out = title + "\n" + table([*headers, "$ total"], rows)
    grown = growth(result)
    if grown:
        out += (
            f"\ngrowth: +{grown['rcu_per_1000']:.1f} RCU, +{grown['p50_ms_per_1000']:.0f} ms p50 and "
            f"+${grown['usd_per_m_per_1000']:.2f} per 1M recalls per 1,000 memories "
            f"(~{grown['digest_bytes']:.0f} bytes read per digest)"
        )
    return out


def _cold_and_warm(result: dict[str, Any]) -> str:
    """Recall and a `q` search per size, cold and warm: calls, units and what they are made of, latency, price."""
    ops, cost = result["ops"], result.get("cost", {})
    title = (
        "\n== Recall and q, cold and warm: cold = a process's first read of the namespace (every digest, or every "
        "search copy); warm = the same process's next read, from its copy brought up to date (the id counter, one "
        "Query of the change index, the changed rows by key), with no change since its last read or with 10 (5 "
        "creates, 5 patches) written between timed reads; each refresh lists again every change of the last "
        f"{ops.get('change_window_s', '?')} s\n"
        "   RCU made of: counter, change index (its entries), digests / search copies, records, access items, fence "
        "(items read); USD per 1M as in Cost (HTTP door / MCP door)"
    )
    rows = []
    for size, entry in ops["sizes"].items():
        for op, what, state in COLD_AND_WARM:
            m = entry["ops"].get(op)
            if not m:
                continue
            rows.append(
                [
                    f"{int(size):,}",
                    what,
                    state,
                    _calls(m),
                    f"{m['rcu']:g}",
                    read_parts(m),
                    f"{m['p50_ms']:.1f}",
                    f"{m['p99_ms']:.1f}",
                    _dollars(cost, size, op),
                ]
            )
    headers = ["N", "op", "read", "calls r+w (seq)", "RCU", "RCU made of", "p50 ms", "p99 ms", "$ total"]
    return title + "\n" + table(headers, rows, left=3)


def _related(result: dict[str, Any]) -> str:
    """Related memories (GET /memories/{id}/related, limit 3) and a create with and without the related check its MCP
    answer carries (create_memory), per size: the check compares the vector the write computed with every digest."""
    ops, cost = result["ops"], result.get("cost", {})
    title = (
        "\n== Related memories: related = GET /memories/{id}/related (limit 3, behind the read fence); "
        "create_related = a create and the related check create_memory's answer carries (the write's own vector "
        "against every digest, behind the read fence); create = without it\n"
        "   USD per 1M as in Cost (HTTP door / MCP door); the check's share is create_related less create"
    )
    rows = []
    for size, entry in ops["sizes"].items():
        for op in ("related", "create", "create_related"):
            m = entry["ops"].get(op)
            if not m:
                continue
            rows.append(
                [
                    f"{int(size):,}",
                    op,
                    _calls(m),
                    f"{m['rcu']:g}",
                    f"{m['wcu']:g}",
                    f"{m.get('embed_calls', 0):g}",
                    f"{m['p50_ms']:.1f}",
                    f"{m['p99_ms']:.1f}",
                    _dollars(cost, size, op),
                ]
            )
    headers = ["N", "op", "calls r+w (seq)", "RCU", "WCU", "Bedrock", "p50 ms", "p99 ms", "$ total"]
    return title + "\n" + table(headers, rows, left=2)


def _serve(served: dict[str, Any]) -> str:
    out = []
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
    out.append(table(["ops/s", "non-2xx"], rows) + f"\nmedian: {served['median_ops_per_s']:.0f} ops/s")
    recalled = served.get("recall")
    if recalled:
        out.append(
            f"then {recalled['recalls'] + 1} recalls one by one: the first (every digest read) "
            f"{recalled['cold_ms']:.0f} ms, the rest (warm copy) p50 {recalled['warm_p50_ms']:.1f} ms, "
            f"p99 {recalled['warm_p99_ms']:.1f} ms"
            + (
                f"; {recalled['settled_after_s']:g} s after the last write (the change window passed) p50 "
                f"{recalled['settled_p50_ms']:.1f} ms, p99 {recalled['settled_p99_ms']:.1f} ms"
                if "settled_p50_ms" in recalled
                else ""
            )
        )
    return "\n".join(out)


def _health(probed: dict[str, Any]) -> str:
    head = (
        f"\n== /healthz on one `serve` while 4 clients search or recall {probed['memories']:,} memories (imported in "
        f"{probed['load_s']:.0f} s): a probe every {probed['probe_every_ms']:g} ms"
    )
    rows = [
        [
            load,
            str(m["probes"]),
            f"{m['p50_ms']:.1f}",
            f"{m['p99_ms']:.1f}",
            f"{m['max_ms']:.1f}",
            f"{m['searches']} (p50 {m['search_p50_ms']:.0f} ms)" if m["search_p50_ms"] is not None else "0",
        ]
        for load in ("search", "recall")
        if (m := probed.get(load))
    ]
    return head + "\n" + table(["load", "probes", "p50 ms", "p99 ms", "max ms", "requests meanwhile"], rows)


def _portability(moved: dict[str, Any]) -> str:
    head = (
        f"\n== Export and import through the command line on DynamoDB Local: {moved['memories']:,} memories, "
        "imported, exported, imported from that export and exported again (each export the source line for line)"
    )
    rows = [[leg, f"{moved[f'{leg}_import_s']:.1f}", f"{moved[f'{leg}_export_s']:.1f}"] for leg in ("first", "second")]
    rates = f"\nbest: {moved['import_per_s']:,.0f} memories/s imported, {moved['export_per_s']:,.0f} exported"
    return head + "\n" + table(["round trip", "import s", "export s"], rows) + rates


def _artifacts(artifacts: dict[str, Any]) -> str:
    if not artifacts.get("built"):
        return "\n== Artifacts, unzipped (boto3 excluded)\nnot built (run make build, or make bench ARGS=--build)"
    sizes = "\n".join(f"{name}: {mb:.1f} MB" for name, mb in artifacts["functions"].items())
    return "\n== Artifacts, unzipped (boto3 excluded)\n" + sizes
