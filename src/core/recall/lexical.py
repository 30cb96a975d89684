"""Recall's lexical part: the words of a memory's content and tags, tokenised and stemmed, and Okapi BM25 of the
question's words over the memories a recall matched.

A memory's terms are its words as core.words tokenises and stems them, counted from the content and tags its digest
carries (core.repository.digests.Candidate.term_counts: once per digest a warm index keeps). A question's words are its
terms but the common English function words (`STOP_WORDS`: "what", "does", "the", "she"...), which say how it is asked
rather than what about; a question of nothing else keeps them all.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import repeat
from operator import add, mul, truediv
from typing import Final

from core.words import stem, terms

# BM25's usual constants: term frequency saturates around k1, and b weighs the document length fully.
K1: Final = 1.2
B: Final = 0.75

# English function words, left out of a question's words: BM25's IDF barely discounts them in a namespace of a few
# hundred memories, where "she" or "does" can be as rare as a name, so a memory sharing only those could outrank one
# sharing the word that matters (measured on eval/'s development halves: leaving them out helped dialogue turns most).
_FUNCTION_WORDS: Final = """
a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing done down during each few for from further had has have having he her
here hers herself him himself his how i if in into is it its itself just let me more most my myself no nor not
now of off on once only or other our ours ourselves out over own same shall she should so some such than that
the their theirs them themselves then there these they this those through to too under until up us very was we
were what when where which while who whom whose why will with would you your yours yourself yourselves
"""
STOP_WORDS: Final = frozenset(_FUNCTION_WORDS.split())


@lru_cache(maxsize=1)
def _stemmed_stop_words() -> frozenset[str]:
    return frozenset(stem(word) for word in STOP_WORDS)


def question_terms(text: str) -> list[str]:
    """What the lexical part looks for of a question: its terms but the stop words (all of them when it has only
    those)."""
    every = terms(text)
    stop = _stemmed_stop_words()
    return [term for term in every if term not in stop] or every


def scores(query: Sequence[str], documents: Sequence[Sequence[str]]) -> list[float]:
    """Each document's BM25 score for the query's terms, counted over `documents` alone (the recall's matches: their
    number, their mean length, and how many hold each term), divided by the score of a document of the mean length
    holding each query term once (the sum of their IDFs), at most 1: 0 when it holds none of the query's terms, about 1
    when it holds them all. (The semantic part's best match per question lands near 0.5, and so does this one's: the
    score no document can reach, every term infinitely often, would put it near 0.2.)"""
    return Okapi(query, [Counter(document) for document in documents], [len(d) for d in documents]).scores(
        range(len(documents))
    )


class Okapi:
    """BM25 of a question's terms over some documents, given as each one's count of every term it holds and its length
    (a warm index keeps the counts of its memories, core.repository.digests.Candidate.term_counts, so a recall looks up
    its few terms in each instead of counting every term again): the counts over them all (how many documents, of what
    mean length, hold each term), then each document's `scores`, or `estimates` of every one's.

    A document's score sums its terms in the question's order, computed a term at a time over the documents (each step
    one `map` over them): a term a document does not hold adds 0.0 to its sum, which leaves `sum`'s (compensated) sum of
    terms that are never negative as it was, to the bit."""

    def __init__(self, query: Sequence[str], counts: Sequence[dict[str, int]], lengths: Sequence[int]) -> None:
        wanted = list(dict.fromkeys(query))
        self._total = len(counts)
        self._lengths = lengths
        # Each term's count in each document
        self._held: list[list[int]] = (
            [list(map(dict.get, counts, repeat(term), repeat(0))) for term in wanted] if self._total else []
        )
        self._mean_length = sum(lengths) / self._total or 1.0 if self._total else 1.0
        self._idfs = [math.log(1 + (self._total - held + 0.5) / (held + 0.5)) for held in map(_holding, self._held)]
        self._once = sum(self._idfs)

    def scores(self, positions: Iterable[int]) -> list[float]:
        """The scores of the documents at `positions`, in that order."""
        at = list(positions)
        if not self._held:
            return [0.0] * len(at)
        lengths = [self._lengths[position] for position in at]
        # K1 * (1 - B + B * length / mean_length), each document's, as one expression computes it
        norms = list(
            map(
                mul,
                repeat(K1),
                map(add, repeat(1 - B), map(truediv, map(mul, repeat(B), lengths), repeat(self._mean_length))),
            )
        )
        added = []
        for idf, held in zip(self._idfs, self._held, strict=True):
            frequencies = [held[position] for position in at]
            # idf * tf * (K1 + 1) / (tf + norm)
            added.append(
                map(truediv, map(mul, map(mul, repeat(idf), frequencies), repeat(K1 + 1)), map(add, frequencies, norms))
            )
        # Summed as `sum` sums (compensated: not one addition after another), each document's terms in the question's
        # order
        return list(map(min, repeat(1.0), map(truediv, map(sum, zip(*added, strict=True)), repeat(self._once))))

    def estimates(self) -> list[float]:
        """Every document's score, but computed in fewer steps, whose roundings differ: each within 1e-12 of it."""
        if not self._held:
            return [0.0] * self._total
        # norm = K1 * (1 - B) + K1 * B / mean_length * length; a term adds idf * (K1 + 1) / once * tf / (tf + norm)
        norms = list(map(add, repeat(K1 * (1 - B)), map(mul, repeat(K1 * B / self._mean_length), self._lengths)))
        summed: Iterable[float] = repeat(0.0, self._total)
        for idf, held in zip(self._idfs, self._held, strict=True):
            weight = idf * (K1 + 1) / self._once
            summed = map(add, summed, map(mul, repeat(weight), map(truediv, held, map(add, held, norms))))
        return list(map(min, repeat(1.0), summed))


def _holding(frequencies: list[int]) -> int:
    """How many documents hold a term (its count in each)."""
    return len(frequencies) - frequencies.count(0)
