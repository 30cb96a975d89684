"""What Amazon S3 Vectors adds to a recall over a large namespace (core.recall.large, `RecallVectorIndex`), per 1M
recalls at 10,000 / 100,000 / 1,000,000 memories, from AWS's published prices: docs/operations.md quotes these
figures. Not measured: no AWS account ran it (docs/operations.md says what was not verified)."""

from __future__ import annotations

from typing import Final

from bench.pricing import RRU_PER_M

# AWS's published S3 Vectors prices, us-east-1 (as listed since general availability; the June 2026 cut applies to
# indexes over 10 million vectors only), without free tiers.
STORAGE_PER_GB_MONTH: Final = 0.06
PUT_PER_GB: Final = 0.20
QUERY_PER_M: Final = 2.50
# Query data processed: the index's vectors times their average size (vector, key and filterable metadata), per TB,
# the first 100,000 vectors of an index at the first price and the rest at the second.
PROCESSED_PER_TB_FIRST: Final = 0.004
PROCESSED_PER_TB_REST: Final = 0.002
PROCESSED_FIRST_VECTORS: Final = 100_000
# A vector of the template's default 256 dimensions as float32, its key (`<namespace>#<id>`) and filterable metadata
# (namespace, status, type, a few tags): estimated.
DIMENSIONS: Final = 256
VECTOR_BYTES: Final = DIMENSIONS * 4 + 24 + 100
# What recall reads of DynamoDB on this path beyond today's page reads: the namespace's id counter (half a unit,
# eventually consistent) and the nearest digests by key, strongly consistent, a unit each (under 4 KB).
NEAREST: Final = 100
DIGEST_RRU: Final = NEAREST + 0.5
SIZES: Final = (10_000, 100_000, 1_000_000)


def processed_per_query(memories: int) -> float:
    """USD of data processed by one query over an index of `memories` vectors."""
    first = min(memories, PROCESSED_FIRST_VECTORS)
    rest = memories - first
    return VECTOR_BYTES * (first * PROCESSED_PER_TB_FIRST + rest * PROCESSED_PER_TB_REST) / 1e12


def per_million_recalls(memories: int) -> dict[str, float]:
    """USD per 1M recalls over a namespace (alone in its index) of `memories` memories: S3 Vectors' query requests
    and data processed, and DynamoDB's reads of the nearest digests; the total."""
    parts = {
        "queries": QUERY_PER_M,
        "processed": round(processed_per_query(memories) * 1e6, 3),
        "digests": round(DIGEST_RRU * RRU_PER_M, 3),
    }
    return {**parts, "total": round(sum(parts.values()), 2)}


def storage_per_month(memories: int) -> float:
    """USD a month to keep `memories` vectors."""
    return round(memories * VECTOR_BYTES / 1e9 * STORAGE_PER_GB_MONTH, 4)


def put_once(memories: int) -> float:
    """USD to write `memories` vectors once (a first sync, or a re-embedding)."""
    return round(memories * VECTOR_BYTES / 1e9 * PUT_PER_GB, 4)


COST: Final = {
    str(size): {**per_million_recalls(size), "storage_month": storage_per_month(size), "put_once": put_once(size)}
    for size in SIZES
}
