"""Related memories in the bench: the write's check it prices is create_memory's (one embedding call, the write's own,
and the related memories found from its vector), the report shows related, create and create_related at each size,
and a target holds the check to no embedding call of its own."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from adapters.memory import InMemoryMemoryRepository
from bench.pricing import costs
from bench.recall import CountingEmbedder, created_with_related
from bench.report import render
from bench.targets import targets
from core.memories import MemoryService
from core.model import NewMemory
from core.recall.indexing import RecallIndexer
from core.recall.related import RelatedService
from core.recall.standin import StandInEmbedder

RECORDED = json.loads((Path(__file__).resolve().parents[2] / "docs" / "performance.json").read_text())
NS = "bench-100"
RELATED_ROWS = ("related", "create", "create_related")


def test_a_create_with_its_related_check_embeds_once_and_names_what_its_vector_finds() -> None:
    store, embedder = InMemoryMemoryRepository(), CountingEmbedder(StandInEmbedder())
    memories = MemoryService(store, indexer=RecallIndexer(embedder, wait_seconds=None))
    related = RelatedService(store, embedder)
    job = memories.create(NS, NewMemory.parse({"content": "The user works as a data analyst at Northwind"}))
    memories.create(NS, NewMemory.parse({"content": "Bob keeps bees"}))
    before = embedder.total()

    memory, named = created_with_related(
        memories, related, NS, NewMemory.parse({"content": "User is a data analyst at Northwind"}), None
    )

    assert embedder.calls["passage"] == 3
    assert embedder.total() - before == 1
    assert [item.memory.id for item in named] == [job.id]
    assert memory.id not in {item.memory.id for item in named}


def figures(rcu: float, p50: float, embed_calls: int) -> dict[str, Any]:
    return {
        "rcu": rcu,
        "wcu": 10.0,
        "p50_ms": p50,
        "p99_ms": 2 * p50,
        "cpu_ms": p50 / 2,
        "calls": 4,
        "read_calls": 3,
        "read_rounds": 3,
        "write_calls": 1,
        "items_read": 0,
        "items_returned": 0,
        "embed_calls": embed_calls,
    }


def run(check_embeds: int) -> dict[str, Any]:
    """The recorded run with related (2 RCU at N=100, 20 at N=1,000) and a create with and without its check."""
    result: dict[str, Any] = copy.deepcopy(RECORDED)
    largest = result["ops"]["sizes"][max(result["ops"]["sizes"], key=int)]
    sizes = {}
    for size, rcu in ((100, 2.0), (1000, 20.0)):
        entry = copy.deepcopy(result["ops"]["sizes"].get(str(size), largest))
        entry["ops"]["create"] = figures(1.0, 8.0, 1)
        entry["ops"]["related"] = figures(rcu, 12.0, 0)
        entry["ops"]["create_related"] = figures(rcu + 1.0, 20.0, check_embeds)
        sizes[str(size)] = entry
    result["ops"] |= {"sizes": sizes, "question_tokens": 10.0, "passage_tokens": 60.0}
    result["cost"] = costs(result)
    return result


@pytest.mark.parametrize(("check_embeds", "verdict"), [(1, "PASS"), (2, "MISS")])
def test_the_related_check_may_make_no_embedding_call_of_its_own(check_embeds: int, verdict: str) -> None:
    found = {target["name"]: target["verdict"] for target in targets(run(check_embeds))}

    assert found["related check: embedding calls"] == verdict


def test_the_report_shows_related_and_a_create_with_and_without_its_check_at_each_size() -> None:
    result = run(1)
    text = render({**result, "targets": targets(result)})

    section = text.split("== Related memories")[1].split("\n== ")[0]
    rows = [line.split() for line in section.splitlines() if line.split()[:1] in (["100"], ["1,000"])]
    assert [row[:2] for row in rows] == [[size, op] for size in ("100", "1,000") for op in RELATED_ROWS]
    assert rows[5][4] == "21"  # create_related's RCU at N=1,000, after its calls "3+1 (3)"
    priced = result["cost"]["1000"]["create_related"]
    assert rows[5][-3:] == [f"{priced['http']['total']:.2f}", "/", f"{priced['mcp']['total']:.2f}"]
