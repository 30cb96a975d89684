"""The ranking before #40, for `make eval` to compare with: its default weights (no `newer` part, use 0.02) and its
lexical part (every word of the question, function words too, divided by the score no memory can reach: every word
infinitely often), swapped into the recall service while its questions are asked."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Final
from unittest import mock

from core.recall import lexical
from core.recall.ranking import RankingSettings

SETTINGS: Final = RankingSettings(
    weights={"lexical": 0.1, "semantic": 0.88, "recency": 0.0, "use": 0.02, "type": 0.0, "newer": 0.0}
)


def scores(query: Sequence[str], documents: Sequence[Sequence[str]]) -> list[float]:
    """core.recall.lexical.scores as it was: BM25 divided by the sum of the query terms' IDFs times (k1 + 1)."""
    wanted = set(query)
    if not wanted or not documents:
        return [0.0] * len(documents)
    counts = [Counter(term for term in document if term in wanted) for document in documents]
    total = len(documents)
    mean_length = sum(len(document) for document in documents) / total or 1.0
    held = Counter(term for count in counts for term in count)
    idf = {term: math.log(1 + (total - held[term] + 0.5) / (held[term] + 0.5)) for term in wanted}
    ceiling = sum(idf.values()) * (lexical.K1 + 1)
    result = []
    for document, count in zip(documents, counts, strict=True):
        norm = lexical.K1 * (1 - lexical.B + lexical.B * len(document) / mean_length)
        score = sum(idf[term] * tf * (lexical.K1 + 1) / (tf + norm) for term, tf in count.items())
        result.append(score / ceiling)
    return result


@contextmanager
def lexical_part() -> Iterator[None]:
    """The lexical part as it was, while the block runs (the recall service reads it through the module)."""
    with mock.patch.object(lexical, "question_terms", lexical.terms), mock.patch.object(lexical, "scores", scores):
        yield
