"""The read fence in `make bench` (issue #38): the bench reads as the doors do, for an API key, so every read's figures
include the fence's GetItem of the key; the bench tells that call apart, the targets that judge how a read reads its
data leave it aside, and the report says whether a run's reads paid it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from bench.capacity import Call, Recording, TableShape
from bench.ops import fence_reads
from bench.page import markdown
from bench.targets import targets

RECORDED = json.loads((Path(__file__).resolve().parents[2] / "docs" / "performance.json").read_text())
SHAPE = TableShape(("pk", "sk"), ())
# What reads no key item: the writes (their fence is a condition of their transaction) and the naive read.
WRITES = ("create", "patch", "delete", "restore", "purge", "supersede", "create_superseding", "naive")


def get_item(pk: str, sk: str) -> Call:
    return Call(
        "GetItem", 1, params={"TableName": "t", "Key": {"pk": {"S": pk}, "sk": {"S": sk}}, "ConsistentRead": True}
    )


def test_the_read_fence_is_the_get_item_of_the_callers_key_and_nothing_else() -> None:
    fence = get_item("KEYS", "KEY#0123456789ab")
    recording = Recording(
        [
            get_item("NS#alice", "MEM#0000000001"),
            get_item("NS#alice", "STATS"),
            Call("Query", 1, params={"TableName": "t", "KeyConditionExpression": "pk = :pk"}),
            Call("BatchGetItem", 1, params={"RequestItems": {}}),
            fence,
            Call("UpdateItem", 1, params={"TableName": "t", "Key": {"pk": {"S": "NS#alice"}, "sk": {"S": "A#1"}}}),
        ]
    )

    assert fence_reads(recording, SHAPE) == [fence]


def fenced(run: dict[str, Any]) -> dict[str, Any]:
    """`run` as if each of its reads had paid the read fence: one consistent GetItem of one item, in a round trip of
    its own."""
    result = copy.deepcopy(run)
    for entry in result["ops"]["sizes"].values():
        for op, m in entry["ops"].items():
            if op in WRITES:
                continue
            for figure in ("calls", "read_calls", "read_rounds", "rounds", "items_read", "items_returned"):
                m[figure] += 1
            m["rcu"] += 1.0
            m["fence_reads"], m["fence_rcu"] = 1, 1.0
    return result


def unfenced(run: dict[str, Any]) -> dict[str, Any]:
    """`run` as a run from before the read fence measured it: each read's figures less its fence's."""
    result = copy.deepcopy(run)
    for entry in result["ops"]["sizes"].values():
        for m in entry["ops"].values():
            reads, units = m.pop("fence_reads", 0), m.pop("fence_rcu", 0.0)
            for figure in ("calls", "read_calls", "read_rounds", "rounds", "items_read", "items_returned"):
                if figure in m:
                    m[figure] -= reads
            m["rcu"] -= units
    return result


def test_the_targets_judge_how_a_read_reads_its_data_with_its_read_fence_aside() -> None:
    before = {target["name"]: target["verdict"] for target in targets(unfenced(RECORDED))}

    after = {target["name"]: target["verdict"] for target in targets(fenced(unfenced(RECORDED)))}

    assert after == before


def test_the_report_says_whether_a_runs_reads_paid_the_read_fence() -> None:
    assert "reads made without the read fence" in markdown(unfenced(RECORDED))
    assert "each figure includes the read fence" in markdown(fenced(unfenced(RECORDED)))
