"""Recall's lexical part: stemmed Unicode words of content and tags, a question's words but its function words, and
BM25 over the matches on the scale where a memory holding each of the question's words once scores about 1."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from core.recall.lexical import K1, B, Okapi, question_terms, scores
from core.words import memory_terms, terms


def test_words_are_case_folded_and_stemmed_with_snowballs_english_stemmer() -> None:
    assert terms("The user EATS; eating, eaten? Dentist's") == ["the", "user", "eat", "eat", "eaten", "dentist"]


def test_words_of_any_script_and_digits_are_tokens() -> None:
    assert terms("Café Zürich INC-20931 東京") == ["café", "zürich", "inc", "20931", "東京"]


def test_a_tag_counts_as_its_words() -> None:
    assert memory_terms("Ships Friday", ["project:apollo", "writing-style"]) == [
        "ship",
        "friday",
        "project",
        "apollo",
        "write",
        "style",
    ]


def test_a_memory_sharing_the_querys_rare_word_outranks_one_sharing_a_common_one() -> None:
    documents = [
        terms(text) for text in ("the user likes tea", "the user likes coffee", "the user takes Levothyroxine")
    ]
    ranked = scores(terms("does the user take levothyroxine"), documents)
    assert ranked[2] > max(ranked[0], ranked[1])
    assert ranked[0] == ranked[1]


def test_a_document_without_any_query_term_scores_zero_and_no_query_term_scores_all_zero() -> None:
    documents = [terms("tea"), terms("coffee")]
    assert scores(terms("tea"), documents)[1] == 0.0
    assert scores([], documents) == [0.0, 0.0]
    assert scores(terms("tea"), []) == []


@given(
    st.lists(st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=8), min_size=1, max_size=8),
    st.lists(st.sampled_from(["a", "b", "x"]), max_size=4),
)
def test_every_score_is_in_zero_to_one(documents: list[list[str]], query: list[str]) -> None:
    assert all(0.0 <= score <= 1.0 for score in scores(query, documents))


def test_a_memory_of_the_mean_length_holding_each_question_word_once_scores_one() -> None:
    documents = [terms("ana eats tofu"), terms("jonas plays cello"), terms("pixel sleeps daily")]

    assert scores(terms("tofu cello"), documents)[:2] == [pytest.approx(0.5), pytest.approx(0.5)]
    assert scores(terms("eats tofu"), documents)[0] == pytest.approx(1.0)


def test_a_questions_function_words_are_not_looked_for_unless_it_has_nothing_else() -> None:
    assert question_terms("What does she do for a living?") == ["live"]
    assert question_terms("Where is the user's dentist") == ["user", "dentist"]
    assert question_terms("who is she") == ["who", "is", "she"]


@pytest.mark.parametrize("text", ["", "   ", "!!! ???"])
def test_a_text_without_words_has_no_terms(text: str) -> None:
    assert terms(text) == []


def okapi(query: list[str], documents: list[list[str]]) -> list[float]:
    """BM25 as the module documents it, one document at a time: its terms' scores summed in the question's order (the
    terms it holds only), over the sum of the question terms' IDFs, at most 1."""
    wanted = list(dict.fromkeys(query))
    if not wanted or not documents:
        return [0.0] * len(documents)
    mean = sum(map(len, documents)) / len(documents) or 1.0
    holding = {term: sum(1 for document in documents if term in document) for term in wanted}
    idf = {term: math.log(1 + (len(documents) - holding[term] + 0.5) / (holding[term] + 0.5)) for term in wanted}
    result = []
    for document in documents:
        found = [(term, document.count(term)) for term in wanted if term in document]
        if not found:
            result.append(0.0)
            continue
        norm = K1 * (1 - B + B * len(document) / mean)
        total = sum(idf[term] * tf * (K1 + 1) / (tf + norm) for term, tf in found)
        result.append(min(1.0, total / sum(idf.values())))
    return result


@given(
    st.lists(st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=40), max_size=30),
    st.lists(st.sampled_from(["a", "b", "c", "x"]), max_size=6),
)
@example([["a", "b"], ["b"], ["c", "c", "a"], []], ["c", "a", "b"])
def test_the_scores_computed_a_term_at_a_time_are_to_the_bit_those_of_each_document_alone(
    documents: list[list[str]], query: list[str]
) -> None:
    counted = Okapi(query, [Counter(document) for document in documents], list(map(len, documents)))
    computed = counted.scores(range(len(documents)))
    assert [value.hex() for value in computed] == [value.hex() for value in okapi(query, documents)]


@given(
    st.lists(st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=40), min_size=1, max_size=30),
    st.lists(st.sampled_from(["a", "b", "c", "x"]), max_size=6),
    st.data(),
)
def test_the_scores_of_some_documents_are_theirs_among_all_and_every_estimate_is_within_1e_12_of_its_score(
    documents: list[list[str]], query: list[str], data: st.DataObject
) -> None:
    counted = Okapi(query, [Counter(document) for document in documents], list(map(len, documents)))
    every = okapi(query, documents)
    positions = data.draw(st.lists(st.integers(0, len(documents) - 1), unique=True))

    assert [value.hex() for value in counted.scores(positions)] == [every[position].hex() for position in positions]
    assert all(abs(estimate - score) <= 1e-12 for estimate, score in zip(counted.estimates(), every, strict=True))
