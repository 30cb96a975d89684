"""The bench's price of recall with Amazon S3 Vectors on (bench.vector_pricing): AWS's published prices times what a
recall on that path asks of the index and reads of DynamoDB, per namespace size; the report's rows say the same, and a
price no source gave stays out of every total rather than being guessed."""

from __future__ import annotations

import pytest

from bench import vector_pricing
from bench.pricing import RRU_PER_M
from bench.report import render
from bench.vector_pricing import COST, SIZES, put_once, storage_per_month, vector_costs


def test_a_million_recalls_cost_their_queries_and_the_counter_and_named_digests_reads() -> None:
    # The bench's 8 questions hold 23 words but stop words: 1 + 23 / 8 = 3.875 queries a recall, at $2.50 per 1M;
    # 1M x (0.5 RRU counter + at most 200 RRU digests) at $0.125 per 1M RRU = $25.0625.
    assert vector_pricing.QUERIES_PER_RECALL == 3.875
    assert COST["10000"]["queries"] == pytest.approx(3.875 * 2.50, abs=0.001)
    assert COST["10000"]["digests"] == pytest.approx(200.5 * RRU_PER_M, abs=0.001)
    assert COST["10000"]["total"] == 34.75


def test_without_a_data_processed_price_the_price_of_a_recall_is_a_lower_bound_the_same_at_every_size() -> None:
    assert vector_pricing.DATA_PROCESSED_PER_TB is None
    assert {COST[str(size)]["total"] for size in SIZES} == {34.75}
    assert "processed" not in COST["1000000"]


def test_storage_and_one_write_of_every_vector_grow_with_the_vectors_bytes() -> None:
    # 1,000,000 vectors x (256 x 4 + 124) bytes = 1.148 GB: $0.06 a GB-month, $0.20 a GB put.
    assert storage_per_month(1_000_000) == 0.0689
    assert put_once(1_000_000) == 0.2296
    assert storage_per_month(10_000) == pytest.approx(storage_per_month(1_000_000) / 100, abs=0.0001)


def test_the_report_shows_a_row_per_size_with_the_prices_source_and_what_is_left_out() -> None:
    run = {"started": "2026-12-06T16:00:00Z", "git": "abc1234", "python": "3.13.1", "quick": True}
    shown = render({**run, "vector_cost": vector_costs(), "targets": []})
    assert "https://aws.amazon.com/s3/pricing/ (S3 Vectors), read 2026-12-06" in shown
    assert "left out: the query's data processed (no AWS price found)" in shown
    rows = [line.split() for line in shown.splitlines() if line.startswith(("10,000 ", "100,000 ", "1,000,000 "))]
    assert rows == [
        ["10,000", "9.69", "25.06", "34.75", "0.0007", "0.0023"],
        ["100,000", "9.69", "25.06", "34.75", "0.0069", "0.0230"],
        ["1,000,000", "9.69", "25.06", "34.75", "0.0689", "0.2296"],
    ]
