"""Recall in the bench: the embedder its memories and questions go through (counted, as deployed each call is one
Bedrock request), the questions asked, and how far one namespace can grow before recall should take its candidates
from a vector index, computed from a run's figures."""

from __future__ import annotations

import math
import random
import threading
from collections.abc import Sequence
from typing import Any, Final

from bench.dataset import memory_body
from core.digest import Digest, Vector
from core.memories import MemoryService
from core.model import Memory, NewMemory
from core.recall.embedding import Embedder, Kind, passage_text
from core.recall.related import RelatedItem, RelatedService
from core.recall.standin import STAND_IN_DIMENSIONS, StandInEmbedder

# Questions an agent asks mid-conversation, in the dataset's words (bench.dataset.WORDS).
QUESTIONS: Final = (
    "what coffee does the user like in the morning",
    "when is the dentist appointment",
    "which hotel did they book in Berlin",
    "how does the team deploy to production",
    "what should I cook for dinner, they are vegan",
    "does the user have a food allergy",
    "what music do they listen to",
    "when is the quarterly report deadline",
)
# Amazon Titan Text Embeddings V2 counts tokens with its own tokenizer; English averages about 4 characters a token.
CHARACTERS_PER_TOKEN: Final = 4
# A recall costs this much more or answers this much later, and one namespace is too large for reading every digest:
# AgentCore Memory's list price per retrieval, and a second at the median.
GROWTH_COST_PER_M: Final = 500.0
GROWTH_P50_MS: Final = 1000.0
# The vector dimensions the deployment may choose beyond the default's (template parameter EmbeddingDimensions).
LARGEST_DIMENSIONS: Final = 1024


def question_tokens() -> float:
    """The estimated Titan V2 input tokens of a bench question, on average."""
    return sum(math.ceil(len(question) / CHARACTERS_PER_TOKEN) for question in QUESTIONS) / len(QUESTIONS)


def passage_tokens(memories: int = 1000) -> float:
    """The estimated Titan V2 input tokens of a bench memory's passage (content and tags), on average."""
    rng = random.Random(0)  # noqa: S311  # a benchmark dataset, not a secret
    bodies = [memory_body(rng) for _ in range(memories)]
    texts = [passage_text(body["content"], body["tags"]) for body in bodies]
    return sum(math.ceil(len(text) / CHARACTERS_PER_TOKEN) for text in texts) / len(texts)


def question(rng: random.Random) -> str:
    return rng.choice(QUESTIONS)


class CountingEmbedder:
    """What the bench's memories and questions are embedded with, counting the calls (deployed, each is one request
    to Amazon Bedrock). Passages get the stand-in's vectors: instant, and of the deployed default's size (256
    dimensions, one byte each), so the digests weigh what deployed ones do without an hour of model time to load
    21,000 memories. A question is also run through `question_model` (the offline model `serve` ranks with), so a
    recall's latency includes a real model's time to embed it; its vector is the stand-in's, comparable with the
    stored ones."""

    def __init__(self, question_model: Embedder) -> None:
        self._stand_in = StandInEmbedder()
        self._question_model = question_model
        self._lock = threading.Lock()
        self.calls: dict[Kind, int] = {"passage": 0, "query": 0}

    @property
    def model(self) -> str:
        return self._stand_in.model

    @property
    def floor(self) -> float:
        return self._stand_in.floor

    @property
    def related_floor(self) -> float:
        return self._stand_in.related_floor

    @property
    def question_model(self) -> str:
        return self._question_model.model

    @property
    def dimensions(self) -> int:
        return STAND_IN_DIMENSIONS

    def total(self) -> int:
        with self._lock:
            return sum(self.calls.values())

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        with self._lock:
            self.calls[kind] += 1
        if kind == "query":
            self._question_model.embed(texts, kind)
        return self._stand_in.embed(texts, kind)


def created_with_related(
    memories: MemoryService, related: RelatedService, namespace: str, new: NewMemory, key_id: str | None
) -> tuple[Memory, list[RelatedItem]]:
    """A create and the related memories its MCP answer names (handlers.mcp.related.written): found with the vector
    the write computed, so the check adds reads and no embedding call."""
    digests: list[Digest] = []
    memory = memories.create(namespace, new, indexed=digests.append)
    (digest,) = digests
    if digest.vector is None:
        return memory, []
    return memory, related.near(namespace, digest.vector, digest.model, {memory.id}, key_id)


def _slope(points: Sequence[tuple[int, float]]) -> tuple[float, float]:
    """The line through the two largest sizes' figures: (per memory, at none)."""
    (n1, y1), (n2, y2) = sorted(points)[-2:]
    per = (y2 - y1) / (n2 - n1) if n2 != n1 else 0.0
    return per, y1 - per * n1


def growth(result: dict[str, Any]) -> dict[str, Any] | None:
    """How recall's reads, cost and latency grow with the namespace, from the run's recall at each size: the sizes at
    which a recall would cost more than GROWTH_COST_PER_M per 1M (DynamoDB, Bedrock and Lambda, MCP door) and take
    longer than GROWTH_P50_MS at the median; the bytes each digest adds to a recall's read; None without two sizes."""
    sizes = {int(size): entry["ops"].get("recall") for size, entry in result.get("ops", {}).get("sizes", {}).items()}
    sizes = {size: entry for size, entry in sizes.items() if entry}
    cost = result.get("cost", {})
    if len(sizes) < 2:
        return None
    rcu, _ = _slope([(size, entry["rcu"]) for size, entry in sizes.items()])
    p50, p50_at_none = _slope([(size, entry["p50_ms"]) for size, entry in sizes.items()])
    priced = {size: cost.get(str(size), {}).get("recall") for size in sizes}
    dollars = [(size, entry["mcp"]["total"]) for size, entry in priced.items() if entry]
    usd, usd_at_none = _slope(dollars) if len(dollars) >= 2 else (0.0, 0.0)
    digest_bytes = rcu * 2 * 4096  # eventually consistent: 0.5 unit per 4 KB read
    dimensions = result["ops"].get("recall_dimensions", STAND_IN_DIMENSIONS)
    return {
        "rcu_per_1000": 1000 * rcu,
        "p50_ms_per_1000": 1000 * p50,
        "usd_per_m_per_1000": 1000 * usd,
        "digest_bytes": digest_bytes,
        "dimensions": dimensions,
        "largest_dimensions_factor": (digest_bytes + LARGEST_DIMENSIONS - dimensions) / digest_bytes
        if digest_bytes
        else None,
        "cost_limit": GROWTH_COST_PER_M,
        "n_at_cost_limit": (GROWTH_COST_PER_M - usd_at_none) / usd if usd > 0 else None,
        "p50_limit_ms": GROWTH_P50_MS,
        "n_at_p50_limit": (GROWTH_P50_MS - p50_at_none) / p50 if p50 > 0 else None,
    }
