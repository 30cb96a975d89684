"""Recall's `newer` part (CONTRACT.md, Keeping memories true: unmarked changes): when a match restates an older one,
it is ranked just above it, so what is true now comes before what used to be, without anything stored changing.

A match restates an older one when, among the `POOL` highest-scoring matches, that older match is the one closest to it
in meaning of those of the same memory type written (last changed, `updated_at`; then id) before it, and their
vectors' cosine is above the model's related floor (core.recall.embedding.Embedder.related_floor: the similarity above
which two memories are versions or repeats of one fact, as related memories use it) less `BELOW_RELATED`. Its `newer`
part is then the share of the `newer` weight that lifts its score just above the older one's best possible score (its
score, its own lift included, and the most its use can add); none when it already ranks above, or when the lift would
need more than the whole weight (then they match the question too differently to be two versions of its answer), or,
unless their cosine is `SURE_ABOVE_RELATED` above the related floor, more than `UNSURE_SHARE` of it (a pair that close
to the floor may be two facts about one subject, and may move a match only a little). Pairs are taken oldest first, so
a chain of versions ranks newest first.

Deterministic and cheap: each comparison is one cosine of int8 vectors, over at most POOL * (POOL - 1) / 2 pairs
whatever the number of matches. Chosen on the development halves of eval/ (`make eval`; eval/recall/REPORT.md). Lifting
the newer version, rather than demoting the older, is what can bring a newest version ranked below the first 10 into
them; demoting older matches (by a fixed weight, or to just below their newer version) and a recency weight on every
match put fewer newest versions first for more lost elsewhere; pairing each older match with its closest newer one
lost dialogue turns' order; pools of 50 or 100 matches and vectors centred on the pool's mean did no better. Nor did:
pairing a match with every older one above the floor, or with the best-scoring of them; lifting the newest of a group
(pairs connected) above every older member; requiring the two to be closer to each other than to the question, or both
within a band of the best match's similarity to the question, or written a day or a week apart; a lower floor; one
larger weight for every pair. None put more than 69 % of the newest versions first, and each such gain cost the
paraphrased notes or the dialogue turns their order; the whole weight only for the sure pairs, a quarter of it for the
others, put more newest versions first than any variant that kept that order. What limits it is the model: memories
about one person lie close together whatever fact they state, so versions of a fact are not always each other's
closest (a job and a manager at the same company are closer than two jobs).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from core.digest import Vector
from core.model import MemoryType
from core.recall.vectors import cosine

# The matches compared: the highest-scoring ones, where an answer and its older versions are.
POOL: Final = 20
# Above the older match's best possible score by this much: more than its rounding (scores have 6 decimals).
_MARGIN: Final = 3e-6
# Pairs this far below the related floor still restate one fact: versions are phrased further apart than repeats, and
# 0.01 below the floor (e5: 0.86) kept the paraphrased notes' order and put more newest versions first on eval/'s
# development halves (0.02 below and more lifted notes that were not versions).
BELOW_RELATED: Final = 0.01
# A pair this far above the related floor (e5: 0.92) is sure to be two versions, and its newer match may take the whole
# weight to rank above the older; a pair closer to the floor may take only UNSURE_SHARE of it, as far as a wrong pair
# may move a match (eval/'s development halves: a quarter of 0.2 kept the notes' and the dialogue's order, while the
# whole of it for every pair cost them; the sure pairs alone put a tenth more newest versions first).
SURE_ABOVE_RELATED: Final = 0.05
UNSURE_SHARE: Final = 0.25
_STEPS: Final = 1_000_000  # parts have 6 decimals; a lift is rounded up, so that it always lifts far enough


@dataclass(frozen=True)
class Scored:
    """A match as the `newer` part reads it: its score from its other parts but use, its vector of the ranking model
    (None: it has none yet, and is compared with nothing), and when and what kind of memory it is."""

    memory_id: int
    score: float
    vector: Vector | None
    updated_at: str
    memory_type: MemoryType


def newer_parts(matches: Sequence[Scored], related_floor: float, weight: float, use_weight: float) -> dict[int, float]:
    """The `newer` part of each match that restates an older one (by id; every other match's is 0), in [0, 1]."""
    if weight <= 0:
        return {}
    pool = heapq.nlargest(
        POOL, (match for match in matches if match.vector is not None), key=lambda m: (m.score, m.memory_id)
    )
    order = sorted(pool, key=lambda match: (match.updated_at, match.memory_id))
    reach = {match.memory_id: match.score for match in order}
    parts: dict[int, float] = {}
    for position, match in enumerate(order):
        closest = _closest_older(match, order[:position], related_floor)
        if closest is None:
            continue
        restated, similarity = closest
        sure = similarity >= round(related_floor + SURE_ABOVE_RELATED, 6)
        lift = reach[restated.memory_id] + use_weight + _MARGIN - match.score
        if 0 < lift <= (weight if sure else weight * UNSURE_SHARE):
            part = min(1.0, math.ceil(lift / weight * _STEPS) / _STEPS)
            parts[match.memory_id] = part
            reach[match.memory_id] = match.score + weight * part
    return parts


def _closest_older(match: Scored, older: Sequence[Scored], related_floor: float) -> tuple[Scored, float] | None:
    """The older match of the same type closest to `match` in meaning (ties by id) and their similarity, if it is above
    the related floor less BELOW_RELATED."""
    if match.vector is None:
        return None
    best: tuple[float, int, Scored] | None = None
    for other in older:
        if other.memory_type != match.memory_type or other.vector is None:
            continue
        similarity = round(cosine(other.vector, match.vector), 6)
        if best is None or (similarity, other.memory_id) > best[:2]:
            best = (similarity, other.memory_id, other)
    return (best[2], best[0]) if best is not None and best[0] > round(related_floor - BELOW_RELATED, 6) else None
