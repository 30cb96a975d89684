"""A memory's words as recall's lexical part reads them (core.recall.lexical): the Unicode word runs of the case-folded
text (letters, digits and `_` of any script, an apostrophe inside a word kept), each reduced by Snowball's English
stemmer (Porter2: "eats" and "eating" are "eat", "user's" is "user"); a tag counts as its words (`project:apollo` is
"project apollo").

Below the storage port, because a digest read from the store (core.repository.digests.Candidate) counts its own terms
from the content and tags it carries. Needs no package at import: the stemmer is loaded on first use.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Final

_WORD: Final = re.compile(r"\w+(?:['\u2019]\w+)*")
_TAG_SEPARATORS: Final = re.compile(r"[-_.:]")
# ASCII text's separators (every ASCII character but a word character or an apostrophe) as spaces: in ASCII, `\w` is
# [a-z0-9_] once case-folded, so its words are then `str.split`'s runs when it holds no apostrophe. Reading a
# namespace's digests tokenises every memory, and translating and splitting takes about half of what the regex takes.
_ASCII_SPACES: Final = {code: " " for code in range(128) if not (chr(code).isalnum() or chr(code) in "_'")}
# Each word's stem, once stemmed: a recall that reads its namespace's digests counts the terms of every one of them,
# and a dictionary lookup takes half of what a call through a cache takes. Emptied when it reaches this many words
# (about 10 MB), so that no stream of distinct words grows it without bound.
_STEMS_KEPT: Final = 65536
_stems: dict[str, str] = {}
# Snowball's stemmer keeps the word it works on in itself: one word at a time, whatever thread asks.
_stemming = threading.Lock()


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    # Loaded on first use, not at import: the package loads the stemmers of all its 36 languages, which a cold start
    # that writes or recalls nothing should not pay for.
    import snowballstemmer

    return snowballstemmer.stemmer("english")


def stem(word: str) -> str:
    """`word`'s stem (a case-folded word run)."""
    stemmed = _stems.get(word)
    if stemmed is None:
        with _stemming:
            if len(_stems) >= _STEMS_KEPT:
                _stems.clear()
            stemmed = _stems[word] = _stemmer().stemWord(word)
    return stemmed


def terms(text: str) -> list[str]:
    """The stemmed words of `text`, in order, repeats kept."""
    folded = text.casefold()
    if folded.isascii():
        spaced = folded.translate(_ASCII_SPACES)
        words = _WORD.findall(spaced) if "'" in spaced else spaced.split()
    else:
        words = _WORD.findall(folded)
    stems = _stems
    return [stems.get(word) or stem(word) for word in words]


def memory_terms(content: str, tags: Sequence[str]) -> list[str]:
    """What the lexical part reads of a memory: the terms of its content and of its tags' words."""
    return terms(" ".join([content, *(_TAG_SEPARATORS.sub(" ", tag) for tag in tags)]) if tags else content)
