"""What the measured operations cost: AWS's published prices and the cost per million requests of each kind."""

from __future__ import annotations

import math
from typing import Any

# AWS's published list prices, us-east-1 (December 2026), without free tiers.
LAMBDA_ARM_GB_S = 0.0000133334
LAMBDA_PER_M = 0.20
HTTP_API_PER_M = 1.00
RRU_PER_M = 0.125
WRU_PER_M = 0.625
# Amazon Titan Text Embeddings V2 on Amazon Bedrock, on demand, per 1M input tokens (each memory written, each
# recall's question); and Amazon Bedrock AgentCore Memory's long-term retrieval, per 1M, to compare recall with.
TITAN_V2_PER_M_TOKENS = 0.02
AGENTCORE_RETRIEVALS_PER_M = 500.0
FUNCTIONS = {"http": "HttpFunction", "mcp": "McpFunction"}
# The reads that stamp what they return: every write unit they consume is a stamp's (issue #30 asks for them apart).
STAMPING = (
    "get",
    "list",
    "list_offset",
    "search_q",
    "search_tag",
    "prime",
    "list_100",
    "list_invalid",
    "list_deep",
    "list_by_use",
    "recall",
    "recall_warm",
    "recall_warm_changed",
    "search_q_warm",
    "search_q_warm_changed",
)


def memory_mb(function: str) -> int:
    from local.template import load_template

    template = load_template()
    own = template["Resources"][function]["Properties"].get("MemorySize")
    return int(own or template["Globals"]["Function"]["MemorySize"])


def costs(result: dict[str, Any]) -> dict[str, Any]:
    """USD per 1M requests of each kind, per door: Lambda arm64 (requests + GB-s for the measured p50 plus the
    door's warm in-process overhead, billed per started ms), API Gateway HTTP API for the HTTP door (the MCP door is
    a function URL: no fee), DynamoDB on-demand read and write request units, and Titan V2's input tokens for each
    embedding call the operation made (a recall's question, a written memory's content and tags; estimated tokens).
    `stamps` is the part of DynamoDB's that pays for access stamps (the write units of a read that stamps)."""
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
            stamps = m["wcu"] * WRU_PER_M if op.removesuffix("@today") in STAMPING else 0.0
            # A recall embeds its question; a write (a warm row's changes are not its own) the memory it writes.
            tokens = ops.get("question_tokens" if op.startswith("recall") else "passage_tokens", 0.0)
            bedrock = m.get("embed_calls", 0) * tokens * TITAN_V2_PER_M_TOKENS
            for door in FUNCTIONS:
                overhead_ms = warm.get(door, {}).get("handler_us", 0.0) / 1000
                billed_ms = math.ceil(m["p50_ms"] + overhead_ms)
                compute = 1e6 * out["memory_mb"][door] / 1024 * billed_ms / 1000 * LAMBDA_ARM_GB_S
                total = compute + LAMBDA_PER_M + ddb + bedrock + (HTTP_API_PER_M if door == "http" else 0.0)
                out.setdefault(size, {}).setdefault(op, {})[door] = {
                    "billed_ms": billed_ms,
                    "lambda": compute + LAMBDA_PER_M,
                    "dynamodb": ddb,
                    "stamps": stamps,
                    "bedrock": bedrock,
                    "total": total,
                }
    return out
