"""How a recall ranks its matches before their stamps are known (core.recall.service, core.recall.reach): every match
is estimated at once (ranking.estimates, of lexical.Okapi.estimates and vectors.similarities), and only those an
estimate cannot rule out (about the page and the `newer` pool: reach.near) are scored exactly (ranking.floors) and get
their signals. The ranking is exact: the estimates only rule out.

What needs no question's vector (`Matches`: the lexical part's estimates, the vectors of the model ranking, each
match's time and type) is computed while the question is embedded; the rest once its vector is there.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cached_property
from itertools import repeat
from operator import attrgetter, is_not

from core.digest import Vector
from core.model import MemoryType
from core.recall import lexical
from core.recall.embedding import Embedder
from core.recall.newer import POOL, Scored, newer_parts
from core.recall.ranking import RankingSettings, Signals, estimate_error, estimates, floors, parts, score
from core.recall.reach import Ranked, contenders, near
from core.recall.vectors import similarities
from core.repository.digests import Candidate

_TERM_COUNTS, _TERM_TOTAL = attrgetter("term_counts"), attrgetter("term_total")
_UPDATED_AT, _MEMORY_TYPE = attrgetter("updated_at"), attrgetter("memory_type")


class Columns:
    """Some matches of a recall, and what ranking them needs of each whatever the question, each computed once (a warm
    index keeps them with its copy, core.recall.warm: recall after recall of a namespace that did not change computes
    them once)."""

    def __init__(self, candidates: Sequence[Candidate]) -> None:
        self.candidates = candidates
        self._vectors: dict[str, tuple[list[Vector | None], list[bool], int]] = {}

    @cached_property
    def counts(self) -> list[Counter[str]]:
        return list(map(_TERM_COUNTS, self.candidates))

    @cached_property
    def totals(self) -> list[int]:
        return list(map(_TERM_TOTAL, self.candidates))

    @cached_property
    def updated(self) -> list[str]:
        return list(map(_UPDATED_AT, self.candidates))

    @cached_property
    def kinds(self) -> list[MemoryType]:
        return list(map(_MEMORY_TYPE, self.candidates))

    def vectors(self, model: str) -> tuple[list[Vector | None], list[bool], int]:
        """Each match's vector of `model` (else None), whether it has one, and how many have none."""
        found = self._vectors.get(model)
        if found is None:
            vectors = [candidate.vector if candidate.model == model else None for candidate in self.candidates]
            pooled = list(map(is_not, vectors, repeat(None)))
            found = self._vectors[model] = (vectors, pooled, pooled.count(False))
        return found


@dataclass(frozen=True)
class Matches:
    """A recall's matches, and what ranking them needs but the question's vector."""

    columns: Columns
    words: lexical.Okapi  # BM25 of the question's words over them
    lexicals: list[float]  # each one's lexical part, estimated
    vectors: list[Vector | None]  # each one's vector of the model ranking, else None
    pooled: list[bool]  # whether it has a vector (only those can restate one another: core.recall.newer)
    unembedded: int  # how many have none

    @classmethod
    def of(cls, text: str, columns: Columns, model: str) -> Matches:
        """The matches of the question `text` ranked by `model`: BM25 over the counts a warm index keeps
        (Candidate.term_counts)."""
        words = lexical.Okapi(lexical.question_terms(text), columns.counts, columns.totals)
        return cls(columns, words, words.estimates(), *columns.vectors(model))


@dataclass(frozen=True)
class Contenders:
    """A recall's matches ranked: those that can reach the first `wanted` (core.recall.reach.contenders), each with
    its signals and its score without use, and their candidates by id; how many matched, and how many of them have no
    vector of the model ranking (unembedded)."""

    ranked: list[Ranked]
    candidates: dict[int, Candidate]
    total: int
    unembedded: int


def contending(
    matches: Matches,
    question: Vector | None,
    as_of: datetime,
    wanted: int,
    embedder: Embedder,
    settings: RankingSettings,
) -> Contenders:
    """The matches that can reach the first `wanted`, ranked by `settings` for `question` (None: without meaning)."""
    candidates, vectors, pooled = matches.columns.candidates, matches.vectors, matches.pooled
    updated, kinds = matches.columns.updated, matches.columns.kinds
    sims = similarities(question, vectors) if question is not None else [None] * len(candidates)
    floor, use = embedder.floor, settings.weights["use"]
    estimated = estimates(matches.lexicals, sims, updated, kinds, as_of, floor, settings)
    close = near(estimated, pooled, wanted, POOL, use, estimate_error(settings))
    lexicals = dict(zip(close, matches.words.scores(close), strict=True))
    picked = ([sims[i] for i in close], [updated[i] for i in close], [kinds[i] for i in close])
    scores = dict(zip(close, floors(list(lexicals.values()), *picked, as_of, floor, settings), strict=True))

    def signals(index: int) -> Signals:
        found = candidates[index]
        return Signals(found.memory_id, lexicals[index], sims[index], found.updated_at, None, found.memory_type)

    # Only the best-scoring matches with a vector can restate one another (core.recall.newer).
    pooling = ((scores[index], candidates[index].memory_id, index) for index in close if pooled[index])
    pool = [index for _, _, index in heapq.nlargest(POOL, pooling)]
    lifted = newer_parts(
        [_scored(signals(index), scores[index], vectors[index]) for index in pool],
        embedder.related_floor,
        settings.weights["newer"],
        use,
    )
    lifts: dict[int, Signals] = {}
    for index in pool:
        lift = lifted.get(candidates[index].memory_id)
        if lift is not None:
            lifts[index] = replace(signals(index), newer=lift)
            scores[index] = score(parts(lifts[index], as_of, floor, settings), settings)
    ids = [candidates[index].memory_id for index in close]
    kept = [close[at] for at in contenders([scores[index] for index in close], ids, wanted, use)]
    return Contenders(
        [Ranked(lifts.get(index) or signals(index), scores[index]) for index in kept],
        {candidates[index].memory_id: candidates[index] for index in kept},
        len(candidates),
        matches.unembedded,
    )


def _scored(signals: Signals, without_use: float, vector: Vector | None) -> Scored:
    return Scored(signals.memory_id, without_use, vector, signals.updated_at, signals.memory_type)
