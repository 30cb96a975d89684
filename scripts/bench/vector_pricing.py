"""What Amazon S3 Vectors adds to a recall over a large namespace (core.recall.large, `RecallVectorIndex`), per 1M
recalls at 10,000 / 100,000 / 1,000,000 memories, from AWS's published prices: the bench's report shows it beside the
measured costs, and docs/operations.md quotes it. Computed, not measured: no AWS account ran it (docs/operations.md
says what was not verified).

Where each price comes from: AWS's S3 pricing page (https://aws.amazon.com/s3/pricing/, tab "S3 Vectors"), whose
price cells a plain fetch does not render; the figures below are those of its worked S3 Vectors example, as a
transcription of that page quotes them verbatim (https://raw.githubusercontent.com/api-evangelist/amazon-s3/refs/
heads/main/plans/amazon-s3-plans-pricing.yml, page read 2026-09-20), and as third-party write-ups of the page agree
(https://www.exploreagentic.ai/insights/s3-vectors-enterprise-rag/). Read here on 2026-12-06 (PRICES_READ).

Left out, because no source found gives AWS's figure: the query's data-processed charge (per TB of the index's
vectors, keys and filterable metadata, tiered by the index's size, and cut for indexes over 10 million vectors in June
2026). It is the one part of a query's price that grows with the index, so the totals below are lower bounds, the
same at every size; what it is made of is DATA_PROCESSED_BASIS.
"""

from __future__ import annotations

from typing import Any, Final

from bench.pricing import RRU_PER_M
from bench.recall import QUESTIONS
from core.recall.lexical import question_terms
from core.repository.vectors import HOLDING_MOST

PRICES_SOURCE: Final = "https://aws.amazon.com/s3/pricing/ (S3 Vectors)"
PRICES_READ: Final = "2026-12-06"
# us-east-1, without free tiers.
STORAGE_PER_GB_MONTH: Final = 0.06
PUT_PER_GB: Final = 0.20
QUERY_PER_M: Final = 2.50
# Not found: left out of every total (see the module's docstring).
DATA_PROCESSED_PER_TB: Final[float | None] = None
DATA_PROCESSED_BASIS: Final = "the index's vectors x their average size (vector, key, filterable metadata), per query"
# A vector of the template's default 256 dimensions as float32, its key (`<namespace>#<id>`) and filterable metadata
# (namespace, status, type, a few tags): estimated.
DIMENSIONS: Final = 256
VECTOR_BYTES: Final = DIMENSIONS * 4 + 24 + 100
# What recall reads of DynamoDB on this path beyond today's page reads: the namespace's id counter (half a unit,
# eventually consistent) and the digests the index names by key, strongly consistent, a unit each (under 4 KB): the
# nearest 100, and the nearest holding each of the question's words (100 more between them), at most (the two sets
# overlap).
NEAREST: Final = 100
DIGEST_RRU: Final = 2 * NEAREST + 0.5
# A recall's queries: the nearest, and one for each of its question's words (the bench's questions, on average).
QUERIES_PER_RECALL: Final = 1 + sum(
    min(len(set(question_terms(question))), HOLDING_MOST) for question in QUESTIONS
) / len(QUESTIONS)
SIZES: Final = (10_000, 100_000, 1_000_000)


def per_million_recalls() -> dict[str, float]:
    """USD per 1M recalls taking the index's path, whatever the namespace's size: S3 Vectors' query requests and
    DynamoDB's reads of the id counter and the digests named; their total (without the data processed)."""
    parts = {"queries": round(QUERIES_PER_RECALL * QUERY_PER_M, 3), "digests": round(DIGEST_RRU * RRU_PER_M, 3)}
    return {**parts, "total": round(sum(parts.values()), 2)}


def storage_per_month(memories: int) -> float:
    """USD a month to keep `memories` vectors."""
    return round(memories * VECTOR_BYTES / 1e9 * STORAGE_PER_GB_MONTH, 4)


def put_once(memories: int) -> float:
    """USD to write `memories` vectors once (the backfill, or a re-embedding)."""
    return round(memories * VECTOR_BYTES / 1e9 * PUT_PER_GB, 4)


def vector_costs() -> dict[str, Any]:
    """What a run stores of it (result["vector_cost"]): the prices and their source, and per size the price of 1M
    recalls, a month's storage and one write of every vector."""
    return {
        "source": PRICES_SOURCE,
        "read": PRICES_READ,
        "prices": {"query_per_m": QUERY_PER_M, "storage_per_gb_month": STORAGE_PER_GB_MONTH, "put_per_gb": PUT_PER_GB},
        "dimensions": DIMENSIONS,
        "digest_rru": DIGEST_RRU,
        "queries_per_recall": QUERIES_PER_RECALL,
        "sizes": {str(size): {**COST[str(size)]} for size in SIZES},
    }


COST: Final = {
    str(size): {**per_million_recalls(), "storage_month": storage_per_month(size), "put_once": put_once(size)}
    for size in SIZES
}
