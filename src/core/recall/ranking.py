"""How recall ranks: six parts, each in [0, 1], and their weighted sum.

- lexical: BM25 over content and tags of the question's words (core.recall.lexical), against the recall's matches, on
  the scale where a memory holding each of them once scores about 1;
- semantic: the cosine of the query's and the memory's embeddings above the model's floor, scaled to [0, 1];
- recency: 1/2 per `recency_half_life_days` since `updated_at` (1 for a change at or after `as_of`);
- use: 1/2 per `use_half_life_days` since the stored `last_accessed_at`, 0 when never used;
- type: the prior of the memory's type;
- newer: 0, unless the memory restates an older match (core.recall.newer): then the share of its weight that ranks it
  just above that older match.
Every part is rounded to 6 decimals, and the score is the weighted sum of the rounded parts, rounded to 6 decimals, so
anyone can recompute a score from the parts and the weights an answer shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from itertools import repeat
from operator import add, mul, sub, truediv
from typing import Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.model import MemoryType

Part = Literal["lexical", "semantic", "recency", "use", "type", "newer"]
PARTS: Final[tuple[Part, ...]] = get_args(Part)
DIGITS: Final = 6

# The defaults, chosen on the development halves of eval/ (`python -m recall_eval --tune`; eval/recall/REPORT.md has
# the figures): paraphrased notes (eval/recall), facts that changed (eval/changed-facts) and conversations stored as
# raw turns and as notes (eval/conversations). Meaning carries the ranking. The lexical part, on a scale comparable
# with the semantic one, lifts exact words: more weight helped raw dialogue turns and cost paraphrased notes as much.
# Use is a tie-breaker: 0.001 cannot reorder scores that differ by more (recent use follows what recall returned
# before, so more weight would keep returning it). A match restating an older one may be lifted by up to 0.2 to rank
# above it when the two are surely versions of one fact, by up to a quarter of that otherwise (core.recall.newer): one
# weight of 0.05 for every pair put fewer newest versions first, and more for every pair cost the paraphrased notes
# their order. Recency and the type prior
# measured no gain, so they weigh nothing by default: both stay settings, and every answer shows their parts.
DEFAULT_WEIGHTS: Final[dict[Part, float]] = {
    "lexical": 0.15,
    "semantic": 0.849,
    "recency": 0.0,
    "use": 0.001,
    "type": 0.0,
    "newer": 0.2,
}
# What each part of an answer is, as the recall answer's schema describes `parts` (HTTP and MCP alike).
PARTS_DESCRIPTION: Final = (
    "Each part of the score, in [0, 1], rounded to 6 decimals: lexical (the question's words in content and tags, "
    "BM25), semantic (closeness in meaning), recency (of updated_at), use (of last_accessed_at), type (the memory "
    "type's prior), newer (0 unless the memory restates an older match, a version of the same fact: then the share of "
    "its weight that ranks it just above that older one)."
)
# The part a deployment's weights may leave out, taking its default: weights set before it existed keep working.
_ADDED_LATER: Final[frozenset[Part]] = frozenset({"newer"})
DEFAULT_RECENCY_HALF_LIFE_DAYS: Final = 180.0
DEFAULT_USE_HALF_LIFE_DAYS: Final = 90.0
DEFAULT_TYPE_PRIORS: Final[dict[MemoryType, float]] = {"identity": 1.0, "preference": 1.0, "fact": 1.0, "event": 1.0}


class RankingSettings(BaseModel):
    """Weights, half-lives and type priors: deployment settings, echoed (the weights) in every recall's answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    weights: dict[Part, float] = Field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    recency_half_life_days: float = Field(default=DEFAULT_RECENCY_HALF_LIFE_DAYS, gt=0, allow_inf_nan=False)
    use_half_life_days: float = Field(default=DEFAULT_USE_HALF_LIFE_DAYS, gt=0, allow_inf_nan=False)
    type_priors: dict[MemoryType, float] = Field(default_factory=lambda: dict(DEFAULT_TYPE_PRIORS))

    @field_validator("weights")
    @classmethod
    def _every_part_weighed(cls, weights: dict[Part, float]) -> dict[Part, float]:
        given = {**{part: DEFAULT_WEIGHTS[part] for part in _ADDED_LATER}, **weights}
        if set(given) != set(PARTS) or any(not 0 <= weight <= 1 for weight in given.values()):
            raise ValueError(
                f"must give each of {', '.join(PARTS)} a weight from 0 to 1 ({', '.join(sorted(_ADDED_LATER))} may be "
                "left out: its default)"
            )
        return {part: given[part] for part in PARTS}

    @field_validator("type_priors")
    @classmethod
    def _every_type_weighed(cls, priors: dict[MemoryType, float]) -> dict[MemoryType, float]:
        if set(priors) != set(get_args(MemoryType)) or any(not 0 <= prior <= 1 for prior in priors.values()):
            raise ValueError(f"must give each of {', '.join(get_args(MemoryType))} a prior from 0 to 1")
        return priors


@dataclass(frozen=True)
class Signals:
    """What one matched memory brings to its ranking, besides the query."""

    memory_id: int
    lexical: float
    similarity: float | None  # None: no vector of the ranking model (unembedded), or the query has none
    updated_at: str
    last_accessed_at: str | None
    memory_type: MemoryType
    newer: float = 0.0  # the `newer` part: how much of its weight lifts it above an older match it restates


@lru_cache(maxsize=65536)
def _moment(timestamp: str) -> datetime:
    return datetime.fromisoformat(timestamp)


def _days_between(earlier: str, later: datetime) -> float:
    return (later - _moment(earlier)).total_seconds() / 86400


def decay(timestamp: str | None, as_of: datetime, half_life_days: float) -> float:
    """1/2 per half-life from `timestamp` to `as_of` (1 when it is not before `as_of`), 0 without a timestamp."""
    if timestamp is None:
        return 0.0
    days = _days_between(timestamp, as_of)
    return 1.0 if days <= 0 else 0.5 ** (days / half_life_days)


def semantic(similarity: float | None, floor: float) -> float:
    """The similarity above the model's floor, scaled to [0, 1]; 0 without one."""
    if similarity is None:
        return 0.0
    return min(1.0, max(0.0, (similarity - floor) / (1 - floor)))


def parts(signals: Signals, as_of: datetime, floor: float, settings: RankingSettings) -> dict[Part, float]:
    values: dict[Part, float] = {
        "lexical": signals.lexical,
        "semantic": semantic(signals.similarity, floor),
        "recency": decay(signals.updated_at, as_of, settings.recency_half_life_days),
        "use": decay(signals.last_accessed_at, as_of, settings.use_half_life_days),
        "type": settings.type_priors[signals.memory_type],
        "newer": signals.newer,
    }
    return {part: round(value, DIGITS) for part, value in values.items()}


def score(values: dict[Part, float], settings: RankingSettings) -> float:
    return round(sum(settings.weights[part] * values[part] for part in PARTS), DIGITS)


def floors(
    lexicals: Sequence[float],
    similarities: Sequence[float | None],
    updated: Sequence[str],
    memory_types: Sequence[MemoryType],
    as_of: datetime,
    floor: float,
    settings: RankingSettings,
) -> list[float]:
    """Each match's score before its use is known and with no `newer` lift: to the bit what `score(parts(...))` gives
    its signals with no `last_accessed_at`, computed for every match of a recall at once (each step one `map` over
    them). The sum adds the same rounded parts in the same order, as `sum` adds them; a part weighing 0 adds exactly 0.0
    to it, which leaves it as it was (every part is finite and not negative), so it is not computed (by default
    recency, use, type and newer)."""
    parts = _weighted(lexicals, similarities, updated, memory_types, as_of, floor, settings, rounded=True)
    return list(map(round, map(sum, zip(*parts, strict=True)), repeat(DIGITS)))


def estimates(
    lexicals: Sequence[float],
    similarities: Sequence[float | None],
    updated: Sequence[str],
    memory_types: Sequence[MemoryType],
    as_of: datetime,
    floor: float,
    settings: RankingSettings,
) -> list[float]:
    """Each match's `floors` but its parts and their sum unrounded, added one after another: within
    `estimate_error(settings)` of it, and far cheaper (rounding a float to 6 decimals costs several times the rest),
    also when its lexical part is an estimate (core.recall.lexical.Okapi.estimates). A recall computes the floors of
    only the matches whose estimate could reach its page (core.recall.reach.near)."""
    parts = _weighted(lexicals, similarities, updated, memory_types, as_of, floor, settings, rounded=False)
    summed = parts[0]
    for weighted in parts[1:]:
        summed = map(add, summed, weighted)
    return list(summed)


def estimate_error(settings: RankingSettings) -> float:
    """How far an estimate may be from its floor: half a unit of the 6th decimal for each weighted part (at most its
    weight times that) and for the sum, plus far more than the floats' own errors (about 1e-16 an operation) and than
    an estimated lexical part's (at most 1e-12)."""
    return (sum(settings.weights.values()) + 1) * 0.5 * 10.0**-DIGITS + 1e-9


def _weighted(
    lexicals: Sequence[float],
    similarities: Sequence[float | None],
    updated: Sequence[str],
    memory_types: Sequence[MemoryType],
    as_of: datetime,
    floor: float,
    settings: RankingSettings,
    *,
    rounded: bool,
) -> list[Iterable[float]]:
    """Each weighted part of every match but use and newer, in PARTS' order, each part rounded to 6 decimals or not."""
    if not len(lexicals) == len(similarities) == len(updated) == len(memory_types):
        raise ValueError("every match needs each of its signals")

    def part(values: Iterable[float]) -> Iterable[float]:
        return map(round, values, repeat(DIGITS)) if rounded else values

    weights = settings.weights
    lexical_weight, semantic_weight = weights["lexical"], weights["semantic"]
    recency_weight, type_weight = weights["recency"], weights["type"]
    # semantic(similarity, floor) of each match: one without a similarity is at the floor (0.0, as semantic gives it)
    at_floor = [floor if similarity is None else similarity for similarity in similarities]
    meanings = map(
        min, repeat(1.0), map(max, repeat(0.0), map(truediv, map(sub, at_floor, repeat(floor)), repeat(1 - floor)))
    )
    weighted: list[Iterable[float]] = [
        map(mul, repeat(lexical_weight), part(lexicals)),
        map(mul, repeat(semantic_weight), part(meanings)),
    ]
    if recency_weight:
        half_life = settings.recency_half_life_days
        weighted.append(list(map(mul, repeat(recency_weight), part(decay(t, as_of, half_life) for t in updated))))
    if type_weight:
        priors = [settings.type_priors[kind] for kind in memory_types]
        weighted.append(list(map(mul, repeat(type_weight), part(priors))))
    return weighted
