"""Whose stamps a recall learns: only those of the matches that can still reach its page (core.recall.service).

A match's score is the sum of its parts, and one part, use, only its stored stamp says (it lives in the access item
beside the record, not in the digest). Use weighs at most `weights["use"]` and can only raise a score: ranked by its
score without use (`floor`), a match can at best reach its score with the best use there is (`best`). It cannot rank
among the first `wanted` when `wanted` matches rank above its best whatever their use (by their floor, ties by id
descending, as the ranking breaks them), and its stamp is not read; every other one can, and is. With meaning, that is
about the page.
A first page that is stamped learns its matches' stamps from stamping them (MemoryRepository.stamp_with_prior: no stamp
read): a match fewer than the page's size of the others could outrank at its worst is on it whatever anyone's use, and
only the uncertain rest within reach have their stamps read, to fill the places left. Otherwise their stamps are read
first (far less than a record for ids close together), which rank them exactly. Either way a stamp also says whether
its match is still shown (deleted since its digest was read: gone). Without meaning (a question the model did
not embed in time, or a model none of whose vectors is stored yet: a model change before `agent-memory embed --all`
ends), matches that share none of the question's words tie, only use sets them apart, and all of them are within
reach: their stamps are read first. The ranking is exact either way; the backfill re-embeds the digests meanwhile
(core.recall.backfill). The page's records come from `records` (the matches' digests: core.repository.digests).
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import compress
from typing import Final

from core.model import Memory
from core.recall.query import RecallQuery
from core.recall.ranking import Signals
from core.repository.digests import DigestReads, StoredStamp

# Scores are rounded to 6 decimals: a match's best and its floor differ by its use at most, give or take this.
_ROUNDING: Final = 2e-6


@dataclass(frozen=True)
class Ranked:
    """A match as ranked before its stamp is read: its signals (no `last_accessed_at`) and its score without use."""

    signals: Signals
    floor: float


@dataclass(frozen=True)
class Reached:
    """The records of the page's matches (in rank order once their stamps are known); how many matches were found
    gone or no longer shown (deleted since their digest was read); and whether their stamps are still to be learnt
    (`unstamped`: the records are the page, whatever its order, and stamping them says what each held before:
    core.recall.service), else each record holds its stored stamp."""

    records: list[Memory]
    gone: int
    unstamped: bool = False


# The score of a match's signals, its stamp as they say.
Score = Callable[[Signals], float]
# The records of some matches (by id, in that order), as their digests stand for them: `last_accessed_at` unknown.
Records = Callable[[Sequence[int]], list[Memory]]


def reached(
    store: DigestReads,
    namespace: str,
    ranked: Sequence[Ranked],
    query: RecallQuery,
    score: Score,
    best_use: str,
    use_weight: float,
    records: Records,
    *,
    stamping: bool,
) -> Reached:
    """The records of `ranked` that can reach `query`'s page, read as cheaply as exactness allows. `score` scores
    signals; `best_use` is the stamp that gives the best use there is (the moment use is computed at); `use_weight`
    the weight of use; `records` answers records; `stamping`: the page will be stamped (then, when no more matches than
    the page can reach it from its start, their stamps are left to be learnt from stamping them)."""
    if query.offset >= len(ranked):
        # A page past the last match is empty whatever the records say: nothing is read for it.
        return Reached([], 0)

    def best(entry: Ranked) -> float:
        return score(replace(entry.signals, last_accessed_at=best_use))

    reach = within_reach(ranked, query.offset + query.limit, best, use_weight)
    if stamping and query.offset == 0:
        # The page's matches, whose order alone waits for their stamps (learnt from stamping them).
        page, gone = (
            (list(reach), 0)
            if len(reach) <= query.limit
            else _filled(store, namespace, ranked, reach, query, score, use_weight)
        )
        return Reached(records([entry.signals.memory_id for entry in page]), gone, unstamped=True)
    return _by_stamps(store, namespace, reach, query, score, records)


def _filled(
    store: DigestReads,
    namespace: str,
    ranked: Sequence[Ranked],
    reach: Sequence[Ranked],
    query: RecallQuery,
    score: Score,
    use_weight: float,
) -> tuple[list[Ranked], int]:
    """A first page's matches when more than its size can reach it: those on it whatever anyone's use (fewer than the
    page's size of the others could outrank one at its worst: its floor), and the best of the rest by their stored
    stamps, read for them alone; and how many of those were found gone or no longer shown. Only matches in `ranked`
    can outrank a match on the page (every other one's best is below the page's floors)."""
    floors = sorted(entry.floor for entry in ranked)

    def rivals(entry: Ranked) -> int:
        # The others whose best score (floor and use's weight, give or take the rounding) may reach its floor.
        return len(floors) - bisect_left(floors, entry.floor - use_weight - _ROUNDING) - 1

    sure = [entry for entry in reach if rivals(entry) < query.limit]
    unsure = [entry for entry in reach if rivals(entry) >= query.limit]
    scored = _stamped_scores(store, namespace, unsure, query, score)
    best = heapq.nlargest(query.limit - len(sure), scored, key=_by_rank)
    return [*sure, *(entry for _, entry, _ in best)], len(unsure) - len(scored)


def _stamped_scores(
    store: DigestReads, namespace: str, entries: Sequence[Ranked], query: RecallQuery, score: Score
) -> list[tuple[float, Ranked, StoredStamp]]:
    """The score of each of `entries` still shown by its stored stamp (read for them alone), with the stamp."""
    stamps = store.stored_stamps(namespace, [entry.signals.memory_id for entry in entries])
    scored = []
    for entry in entries:
        stamp = stamps.get(entry.signals.memory_id)
        if stamp is None or stamp.status != query.status:
            continue
        used = entry.floor
        if stamp.last_accessed_at is not None:  # never used: its score is its floor
            used = score(replace(entry.signals, last_accessed_at=stamp.last_accessed_at))
        scored.append((used, entry, stamp))
    return scored


def _by_rank(scored: tuple[float, Ranked, StoredStamp]) -> tuple[float, int]:
    """A scored match's place: by score, then id (both descending, as recall ranks)."""
    return scored[0], scored[1].signals.memory_id


def contenders(floors: Sequence[float], memory_ids: Sequence[int], wanted: int, use_weight: float) -> list[int]:
    """The positions of the matches, by their score without use (`floors`) and their ids, that `within_reach` may keep
    for the first `wanted`: every one whose best score could reach the `wanted`-th floor. Only these need their signals
    built: the rest cannot reach the page, and `within_reach` over these alone keeps what it keeps over all."""
    if len(floors) <= wanted:
        return list(range(len(floors)))
    mark = heapq.nlargest(wanted, zip(floors, memory_ids, strict=True))[-1][0]
    return [position for position, floor in enumerate(floors) if floor + use_weight + _ROUNDING >= mark]


def near(
    estimates: Sequence[float], pooled: Sequence[bool], wanted: int, pool: int, use_weight: float, error: float
) -> list[int]:
    """The positions of the matches whose floor, within `error` of its estimate (core.recall.ranking.estimates), may
    rank it among the first `wanted` with its best use (`contenders`), or among the `pool` best-scoring of the `pooled`
    (core.recall.newer). Every other match's floor is below the `wanted`-th floor by more than use can add, and below
    the `pool`-th pooled floor: it reaches neither, whatever its floor is exactly."""
    if len(estimates) <= wanted:
        return list(range(len(estimates)))
    # The `wanted`-th estimate: `wanted` floors are at most `error` below it, each one more than `error` above an
    # estimate 2 * `error` below it, so an estimate below that and use's weight cannot reach it.
    mark = heapq.nlargest(wanted, estimates)[-1] - 2 * error - use_weight - _ROUNDING
    by_pool = list(compress(estimates, pooled))
    pool_mark = heapq.nlargest(pool, by_pool)[-1] - 2 * error if len(by_pool) > pool else -math.inf
    return [
        position
        for position, (estimate, in_pool) in enumerate(zip(estimates, pooled, strict=True))
        if estimate >= mark or (in_pool and estimate >= pool_mark)
    ]


def within_reach(
    ranked: Sequence[Ranked], wanted: int, best: Callable[[Ranked], float], use_weight: float
) -> list[Ranked]:
    """The matches that can rank among the first `wanted`: each whose best score, with its id, reaches the `wanted`-th
    match by score without use (ties by id descending), which that many matches reach whatever their use."""
    if len(ranked) <= wanted:
        return list(ranked)
    mark = _without_use(heapq.nlargest(wanted, ranked, key=_without_use)[-1])

    def reaches(entry: Ranked) -> bool:
        # A best score is its floor plus use's weight, give or take _ROUNDING: computed only where that cannot tell.
        if entry.floor + use_weight + _ROUNDING < mark[0]:
            return False
        if entry.floor + use_weight - _ROUNDING > mark[0] or _without_use(entry) >= mark:
            return True
        return (best(entry), entry.signals.memory_id) >= mark

    return [entry for entry in ranked if reaches(entry)]


def _without_use(entry: Ranked) -> tuple[float, int]:
    return entry.floor, entry.signals.memory_id


def _by_stamps(
    store: DigestReads, namespace: str, reach: Sequence[Ranked], query: RecallQuery, score: Score, records: Records
) -> Reached:
    """The page's records, the matches within reach still shown ranked exactly by their stored stamps first."""
    scored = _stamped_scores(store, namespace, reach, query, score)
    stamped_at = {entry.signals.memory_id: stamp.last_accessed_at for _, entry, stamp in scored}
    ranked = sorted(scored, key=_by_rank, reverse=True)[query.offset : query.offset + query.limit]
    page = records([entry.signals.memory_id for _, entry, _ in ranked])
    return Reached(
        [memory.model_copy(update={"last_accessed_at": stamped_at[memory.id]}) for memory in page],
        len(reach) - len(scored),
    )
