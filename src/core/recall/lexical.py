"""Recall's lexical part: the words of a memory's content and tags, tokenised and stemmed, and Okapi BM25 over the
memories a recall matched.

Tokens are the Unicode word runs of the case-folded text (letters, digits and `_` of any script, an apostrophe inside a
word kept), each reduced by Snowball's English stemmer (Porter2: "eats" and "eating" are "eat", "user's" is "user"); a
tag counts as its words (`project:apollo` is "project apollo"). A memory's terms are computed once, when its content
or tags are written, and stored with it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Final

# BM25's usual constants: term frequency saturates around k1, and b weighs the document length fully.
K1: Final = 1.2
B: Final = 0.75

_WORD: Final = re.compile(r"\w+(?:['\u2019]\w+)*")
_TAG_SEPARATORS: Final = re.compile(r"[-_.:]")


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    # Loaded on first use, not at import: the package loads the stemmers of all its 36 languages, which a cold start
    # that writes or recalls nothing should not pay for.
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    stemmed: str = _stemmer().stemWord(word)
    return stemmed


def terms(text: str) -> list[str]:
    """The stemmed words of `text`, in order, repeats kept."""
    return [_stem(word) for word in _WORD.findall(text.casefold())]


def memory_terms(content: str, tags: Sequence[str]) -> list[str]:
    """What the lexical part reads of a memory: the terms of its content and of its tags' words."""
    return terms(" ".join([content, *(_TAG_SEPARATORS.sub(" ", tag) for tag in tags)]))


def scores(query: Sequence[str], documents: Sequence[Sequence[str]]) -> list[float]:
    """Each document's BM25 score for the query's terms, counted over `documents` alone (the recall's matches: their
    number, their mean length, and how many hold each term), divided by the score no document can reach (every query
    term infinitely often), so each is in [0, 1): 0 when it holds none of the query's terms."""
    wanted = set(query)
    if not wanted or not documents:
        return [0.0] * len(documents)
    counts = [Counter(term for term in document if term in wanted) for document in documents]
    total = len(documents)
    mean_length = sum(len(document) for document in documents) / total or 1.0
    held = Counter(term for count in counts for term in count)
    idf = {term: math.log(1 + (total - held[term] + 0.5) / (held[term] + 0.5)) for term in wanted}
    ceiling = sum(idf.values()) * (K1 + 1)
    result = []
    for document, count in zip(documents, counts, strict=True):
        norm = K1 * (1 - B + B * len(document) / mean_length)
        score = sum(idf[term] * tf * (K1 + 1) / (tf + norm) for term, tf in count.items())
        result.append(score / ceiling)
    return result
