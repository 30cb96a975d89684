"""A memory's words (core.words): ASCII text split on its separators is the same words, apostrophes and all, as the
Unicode word runs the module documents."""

from __future__ import annotations

import re
import string

from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.words import memory_terms, stem, terms

# What the module documents: Unicode word runs, an apostrophe (straight or curly) inside a word kept.
DOCUMENTED = re.compile(r"\w+(?:['\u2019]\w+)*")
ASCII_TEXT = st.text(alphabet=string.printable + "'''", max_size=80)
ANY_TEXT = st.text(alphabet=st.sampled_from([*string.printable, "'", "\u2019", "é", "Ü", "東", "\u00a0", "ß", "İ"]))


def documented(text: str) -> list[str]:
    return [stem(word) for word in DOCUMENTED.findall(text.casefold())]


@settings(max_examples=300)
@given(st.one_of(ASCII_TEXT, ANY_TEXT))
@example("Don't stop -- it's the user's 2nd_try: rock'n'roll, 'quoted' O'Brien''s")
@example("tab\tnew\nline\x0bvertical\x0cfeed\rreturn")
@example("ÉCOLE straße İstanbul")
def test_terms_are_the_stems_of_the_documented_word_runs(text: str) -> None:
    assert terms(text) == documented(text)


def test_a_tag_counts_as_its_words_and_no_tags_is_the_content_alone() -> None:
    assert memory_terms("Ships Friday", ["project:apollo"]) == ["ship", "friday", "project", "apollo"]
    assert memory_terms("Ships Friday", []) == terms("Ships Friday")
