"""The ranking before #40, for `make eval` to compare with: its default weights (no `newer` part, use 0.02) and its
lexical part (every word of the question, function words too, divided by the score no memory can reach: every word
infinitely often), swapped into the recall service while its questions are asked."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Final
from unittest import mock

from core import words
from core.recall import lexical
from core.recall.ranking import RankingSettings

SETTINGS: Final = RankingSettings(
    weights={"lexical": 0.1, "semantic": 0.88, "recency": 0.0, "use": 0.02, "type": 0.0, "newer": 0.0}
)


def counted_scores(query: Sequence[str], counts: Sequence[Mapping[str, int]], lengths: Sequence[int]) -> list[float]:
    """The lexical part (core.recall.lexical) as it was before #40: BM25 divided by the sum of the query terms' IDFs
    times (k1 + 1), a document's terms summed in its own order."""
    wanted = set(query)
    if not wanted or not counts:
        return [0.0] * len(counts)
    held = Counter(term for count in counts for term in count if term in wanted)
    total = len(counts)
    mean_length = sum(lengths) / total or 1.0
    idf = {term: math.log(1 + (total - held[term] + 0.5) / (held[term] + 0.5)) for term in wanted}
    ceiling = sum(idf.values()) * (lexical.K1 + 1)
    result = []
    for count, length in zip(counts, lengths, strict=True):
        norm = lexical.K1 * (1 - lexical.B + lexical.B * length / mean_length)
        found = [(term, tf) for term, tf in count.items() if term in wanted]
        result.append(sum(idf[term] * tf * (lexical.K1 + 1) / (tf + norm) for term, tf in found) / ceiling)
    return result


class Okapi(lexical.Okapi):
    """lexical.Okapi (what the recall service scores the lexical part with) as it was: `counted_scores`, its
    estimates exact."""

    def __init__(self, query: Sequence[str], counts: Sequence[dict[str, int]], lengths: Sequence[int]) -> None:
        self._every = counted_scores(query, counts, lengths)

    def scores(self, positions: Iterable[int]) -> list[float]:
        return [self._every[position] for position in positions]

    def estimates(self) -> list[float]:
        return list(self._every)


@contextmanager
def lexical_part() -> Iterator[None]:
    """The lexical part as it was, while the block runs (the recall service reads it through the module)."""
    with mock.patch.object(lexical, "question_terms", words.terms), mock.patch.object(lexical, "Okapi", Okapi):
        yield
