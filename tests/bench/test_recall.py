"""Recall in `make bench`: the embedder counts what deployed would be Bedrock requests, a recall is priced with its
question's tokens, its targets compare it with a `q` search and its budget, and the page says how far a namespace can
grow, all computed from a run's figures."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from bench.page import markdown
from bench.pricing import TITAN_V2_PER_M_TOKENS, WRU_PER_M, costs
from bench.recall import GROWTH_COST_PER_M, GROWTH_P50_MS, CountingEmbedder, growth
from bench.targets import RECALL_P50_MS, targets
from core.digest import Vector
from core.recall.embedding import Kind
from core.recall.standin import StandInEmbedder

RECORDED = json.loads((Path(__file__).resolve().parents[2] / "docs" / "performance.json").read_text())


class QuestionModel:
    model = "offline:test"
    floor = 0.5
    related_floor = 0.8
    dimensions = StandInEmbedder.dimensions

    def __init__(self) -> None:
        self.asked: list[str] = []

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        self.asked.extend(texts)
        return StandInEmbedder().embed(texts, kind)


def test_the_bench_embedder_counts_each_call_and_runs_questions_through_the_question_model() -> None:
    model = QuestionModel()
    embedder = CountingEmbedder(model)

    stored = embedder.embed(["the user likes green tea"], "passage")
    asked = embedder.embed(["what tea does the user like"], "query")

    assert embedder.calls == {"passage": 1, "query": 1}
    assert embedder.total() == 2
    assert model.asked == ["what tea does the user like"]  # passages never reach the (slow) model
    assert stored[0].dimensions == asked[0].dimensions == embedder.dimensions
    assert embedder.question_model == "offline:test"


def figures(rcu: float, p50: float, **extra: Any) -> dict[str, Any]:
    figures = {"rcu": rcu, "wcu": 10.0, "p50_ms": p50, "p99_ms": 2 * p50, "cpu_ms": p50 / 2, "calls": 4}
    return {
        **figures,
        "read_calls": 3,
        "read_rounds": 3,
        "write_calls": 1,
        "items_read": 0,
        "items_returned": 0,
        **extra,
    }


def run(recall: dict[int, tuple[float, float]], search_rcu: float = 1000.0) -> dict[str, Any]:
    """The recorded run (docs/performance.json) with recall measured at the given sizes only, and a `q` search reading
    every record (today's way) of `search_rcu` units at each: {size: (recall RCU, recall p50)}."""
    result: dict[str, Any] = copy.deepcopy(RECORDED)
    measured = result["ops"]["sizes"]
    largest = measured[max((size for size in measured if "create" in measured[size]["ops"]), key=int)]
    sizes = {}
    for size, (rcu, p50) in recall.items():
        entry = copy.deepcopy(measured.get(str(size), largest))
        for figures_of in entry["ops"].values():  # as a run from before the read fence: every read's plan is its all
            figures_of.pop("fence_rcu", None)
            figures_of.pop("fence_reads", None)
        entry["ops"]["create"]["embed_calls"] = 1
        entry["ops"]["search_q@today"] = {**entry["ops"]["search_q"], "rcu": search_rcu}
        entry["ops"]["recall"] = figures(rcu, p50, embed_calls=1)
        sizes[str(size)] = entry
    result["ops"] |= {"sizes": sizes, "question_tokens": 10.0, "passage_tokens": 60.0}
    result["ops"]["question_model"] = "offline:test"
    result["cost"] = costs(result)
    return result


def verdicts(result: dict[str, Any]) -> dict[str, str]:
    return {target["name"]: target["verdict"] for target in targets(result)}


def test_a_recall_is_priced_with_its_questions_tokens_and_a_create_with_its_memorys() -> None:
    priced = run({1000: (70.0, 100.0), 10000: (700.0, 500.0)})["cost"]["1000"]

    assert priced["recall"]["mcp"]["bedrock"] == pytest.approx(10.0 * TITAN_V2_PER_M_TOKENS)
    assert priced["create"]["mcp"]["bedrock"] == pytest.approx(60.0 * TITAN_V2_PER_M_TOKENS)
    assert priced["search_q"]["mcp"]["bedrock"] == 0
    assert priced["recall"]["mcp"]["total"] > priced["recall"]["mcp"]["dynamodb"] + priced["recall"]["mcp"]["bedrock"]


@pytest.mark.parametrize(("recall_rcu", "verdict"), [(700.0, "PASS"), (1000.0, "PASS"), (1000.5, "MISS")])
def test_recall_at_the_largest_size_may_read_no_more_units_than_a_q_search_of_every_record(
    recall_rcu: float, verdict: str
) -> None:
    assert verdicts(run({1000: (70.0, 100.0), 10000: (recall_rcu, 500.0)}))["recall reads: RCU"] == verdict


@pytest.mark.parametrize(("share", "verdict"), [(0.3, "PASS"), (0.5, "PASS"), (0.501, "MISS")])
def test_a_q_search_may_read_half_the_units_of_one_reading_every_record_at_each_size(
    share: float, verdict: str
) -> None:
    result = run({1000: (70.0, 100.0), 10000: (700.0, 500.0)}, search_rcu=1000.0)
    result["ops"]["sizes"]["10000"]["ops"]["search_q"]["rcu"] = share * 1000.0

    assert verdicts(result)["search_q reads: RCU, N=10,000"] == verdict


@pytest.mark.parametrize(("p50", "verdict"), [(RECALL_P50_MS - 1, "PASS"), (RECALL_P50_MS, "MISS")])
def test_a_cold_recall_of_1000_memories_answers_within_its_budget(p50: float, verdict: str) -> None:
    found = verdicts(run({100: (10.0, 20.0), 1000: (70.0, p50), 10000: (700.0, 900.0)}))

    assert found["recall p50, cold read"] == verdict
    assert found["embedding calls (Bedrock, deployed)"] == "PASS"


def test_growth_extrapolates_the_two_largest_sizes_to_the_cost_and_latency_limits() -> None:
    result = run({100: (1.0, 5.0), 1000: (70.0, 100.0), 10000: (700.0, 550.0)})
    grown = growth(result)

    assert grown is not None
    assert grown["rcu_per_1000"] == pytest.approx(70.0)
    assert grown["p50_ms_per_1000"] == pytest.approx(50.0)
    assert grown["n_at_p50_limit"] == pytest.approx(10000 + (GROWTH_P50_MS - 550.0) / 0.05)
    at_cost = grown["n_at_cost_limit"]
    dollars = {size: result["cost"][str(size)]["recall"]["mcp"]["total"] for size in (1000, 10000)}
    per_memory = (dollars[10000] - dollars[1000]) / 9000
    assert dollars[10000] + per_memory * (at_cost - 10000) == pytest.approx(GROWTH_COST_PER_M)


def test_the_page_says_how_far_a_namespace_can_grow_from_the_runs_figures() -> None:
    result = run({1000: (70.0, 100.0), 10000: (700.0, 550.0)})
    page = markdown(result)

    assert "## How far one namespace can grow before a vector index" in page
    assert "70.0 RCU" in page
    assert "about 19,000" in page  # 1 s at 50 ms per 1,000 more, from 550 ms at 10,000
    assert "{{growth}}" not in page


def test_a_run_with_recall_at_one_size_says_its_growth_is_not_computed() -> None:
    assert growth(run({1000: (70.0, 100.0)})) is None
    assert "growth is not computed" in markdown(run({1000: (70.0, 100.0)}))


def test_the_stamps_of_a_read_are_priced_apart_and_a_write_has_none() -> None:
    priced = run({1000: (70.0, 100.0), 10000: (700.0, 500.0)})["cost"]
    for size, doors in priced.items():
        if size in ("assumptions", "memory_mb"):
            continue
        for door in ("http", "mcp"):
            assert doors["create"][door]["stamps"] == 0.0
            assert doors["recall"][door]["stamps"] == pytest.approx(10.0 * WRU_PER_M)  # figures(): 10 WCU of stamps
            assert 0 < doors["list"][door]["stamps"] <= doors["list"][door]["dynamodb"]


def warm_recall(parts: dict[str, tuple[float, int]], p50: float = 40.0) -> dict[str, Any]:
    """A warm recall's figures, its units made of `parts` ({kind: (units, items)})."""
    reads = {kind: {"rcu": units, "items": items} for kind, (units, items) in parts.items()}
    return figures(sum(units for units, _ in parts.values()), p50, embed_calls=1, reads_by_kind=reads)


def with_30000(result: dict[str, Any], recall_rcu: float, recall_p50: float) -> dict[str, Any]:
    """`result` with a namespace of 30,000 memories that measured recall (and a `q` search) alone, as the bench's
    largest does, priced again."""
    ten = result["ops"]["sizes"]["10000"]["ops"]
    only = {"recall": figures(recall_rcu, recall_p50, embed_calls=1), "search_q": ten["search_q"]}
    result["ops"]["sizes"]["30000"] = {**result["ops"]["sizes"]["10000"], "ops": only}
    result["cost"] = costs(result)
    return result


PAGE = {"MEM": (5.0, 10), "A": (5.0, 10), "KEY": (1.0, 1)}


@pytest.mark.parametrize(("index_rcu", "verdict"), [(3.5, "PASS"), (4.0, "MISS")])
def test_a_warm_recall_at_10000_may_read_5_units_besides_the_digests_that_changed(
    index_rcu: float, verdict: str
) -> None:
    result = run({1000: (70.0, 100.0), 10000: (700.0, 500.0)})
    # 0.5 + index_rcu + 1 (the fence) besides 10 changed digests.
    parts = {"COUNTER": (0.5, 1), "by_change": (index_rcu, 40), "RCL": (10.0, 10), "KEY": (1.0, 1)}
    result["ops"]["sizes"]["10000"]["ops"]["recall_warm_changed"] = warm_recall(parts)

    (found,) = (t for t in targets(result) if t["name"] == "warm recall: RCU, 10 changes since")

    assert found["verdict"] == verdict
    # The literal figure, and what it is made of in words, with the items read.
    assert found["measured"] == (
        f"{11.5 + index_rcu:g} = counter 0.5 + change index {index_rcu:g} (40) + digests 10 (10) + fence 1"
    )


def test_a_warm_recall_is_priced_with_its_questions_tokens_and_its_stamps() -> None:
    result = run({1000: (70.0, 100.0), 10000: (700.0, 500.0)})
    result["ops"]["sizes"]["10000"]["ops"]["recall_warm"] = warm_recall(PAGE)
    priced = costs(result)["10000"]["recall_warm"]["mcp"]

    assert priced["bedrock"] == pytest.approx(10.0 * TITAN_V2_PER_M_TOKENS)
    assert priced["stamps"] == pytest.approx(10.0 * WRU_PER_M)


def test_warm_recall_on_serve_is_judged_when_serve_measured_it_and_reported_in_process_otherwise() -> None:
    result = run({1000: (70.0, 100.0), 10000: (700.0, 500.0)})
    result["ops"]["sizes"]["10000"]["ops"]["recall_warm"] = warm_recall(PAGE, p50=120.0)
    result.pop("serve", None)
    assert verdicts(result)["warm recall p50 on serve"] == "n/a"

    recalled = {"memories": 10000, "cold_ms": 900.0, "warm_p50_ms": 80.0, "warm_p99_ms": 150.0, "recalls": 30}
    result["serve"] = {"recall": recalled}
    assert verdicts(result)["warm recall p50 on serve"] == "PASS"
    result["serve"]["recall"]["warm_p50_ms"] = 100.5
    assert verdicts(result)["warm recall p50 on serve"] == "MISS"
    assert "warm recall p50 on serve, settled" not in verdicts(result)  # a run from before settled recalls


def test_warm_recall_on_serve_once_the_change_window_passed_is_judged_on_its_own() -> None:
    result = run({1000: (70.0, 100.0), 10000: (700.0, 500.0)})
    recalled = {"memories": 10000, "cold_ms": 900.0, "warm_p50_ms": 340.0, "warm_p99_ms": 450.0, "recalls": 30}
    result["serve"] = {"recall": {**recalled, "settled_p50_ms": 60.0, "settled_p99_ms": 90.0, "settled_after_s": 155}}

    assert verdicts(result)["warm recall p50 on serve"] == "MISS"  # right after the writes
    assert verdicts(result)["warm recall p50 on serve, settled"] == "PASS"
    result["serve"]["recall"]["settled_p50_ms"] = 100.5
    assert verdicts(result)["warm recall p50 on serve, settled"] == "MISS"


@pytest.mark.parametrize(("rcu", "verdict"), [(2100.0, "PASS"), (2400.0, "MISS")])
def test_a_cold_recall_at_30000_may_cost_no_more_per_memory_than_at_10000(rcu: float, verdict: str) -> None:
    result = with_30000(run({1000: (70.0, 100.0), 10000: (750.0, 500.0)}), rcu, 1500.0)

    assert verdicts(result)["cold recall per memory: N=30,000"] == verdict


def test_the_targets_of_every_operation_are_judged_at_the_largest_namespace_that_measured_them() -> None:
    result = with_30000(run({1000: (70.0, 100.0), 10000: (700.0, 500.0)}), 2100.0, 1500.0)

    found = {target["name"]: target for target in targets(result)}

    assert "N=10,000" in found["round trips: get"]["measured"]
    assert "N=10,000" in found["recall reads: RCU"]["target"]
