"""The measures: recall@k (the share of a question's relevant memories among the first k), nDCG@10 (graded), and for a
changed fact current-first (its newest version in the first 10, above every older one) and top-1 (the newest first)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def recall_at(ranked: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    wanted = {ref for ref, grade in relevant.items() if grade > 0}
    return len(wanted & set(ranked[:k])) / len(wanted) if wanted else 0.0


def ndcg_at(ranked: Sequence[str], relevant: Mapping[str, int], k: int = 10) -> float:
    gained = sum(relevant.get(ref, 0) / math.log2(rank + 2) for rank, ref in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    best = sum(grade / math.log2(rank + 2) for rank, grade in enumerate(ideal))
    return gained / best if best else 0.0


def current_first(ranked: Sequence[str], current: str, older: Sequence[str]) -> bool:
    """A changed fact's newest version is among the first 10 and above every older version of it."""
    top = list(ranked[:10])
    return current in top and not set(older) & set(top[: top.index(current)])


def top_one(ranked: Sequence[str], current: str) -> bool:
    """A changed fact's newest version is first."""
    return bool(ranked) and ranked[0] == current
