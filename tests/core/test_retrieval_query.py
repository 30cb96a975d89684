"""The retrieval query (CONTRACT.md, "Retrieval"): parsing, defaults, bounds and the `tag`/`q` filters."""

from __future__ import annotations

import string
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.contract import RetrievalQuery
from core.errors import InvalidInputError
from core.model import Memory
from handlers.http.input import retrieval_query


def memory(content: str = "remembered", tags: list[str] | None = None) -> Memory:
    return Memory(
        id=1,
        content=content,
        tags=tags if tags is not None else [],
        created_at="2026-04-06T14:12:00.000001Z",
        updated_at="2026-04-06T14:12:00.000001Z",
        last_accessed_at=None,
        memory_type="fact",
        status="active",
        version=1,
    )


def refused_fields(params: dict[str, Any]) -> list[str]:
    with pytest.raises(InvalidInputError) as caught:
        RetrievalQuery.parse(params)
    return [error.field for error in caught.value.errors]


def from_query_string(**params: str | list[str]) -> RetrievalQuery:
    return retrieval_query({k: v if isinstance(v, list) else [v] for k, v in params.items()})


# --- defaults and paging ---


def test_an_empty_query_sorts_by_id_and_serves_ten_from_offset_zero_without_filters() -> None:
    query = RetrievalQuery.parse({})
    assert (query.sort, query.limit, query.offset) == ("id", 10, 0)
    assert (query.status, query.memory_type, query.tag, query.q) == (None, None, None, None)


def test_no_query_string_parameters_give_the_same_defaults() -> None:
    assert retrieval_query({}) == RetrievalQuery.parse({})


@pytest.mark.parametrize(("given_limit", "served"), [(1, 1), (10, 10), (99, 99), (100, 100), (101, 100), (10**9, 100)])
def test_a_limit_over_one_hundred_is_served_as_one_hundred(given_limit: int, served: int) -> None:
    assert RetrievalQuery.parse({"limit": given_limit}).limit == served
    assert from_query_string(limit=str(given_limit)).limit == served


@pytest.mark.parametrize("limit", [0, -1, -100])
def test_a_limit_below_one_is_refused_naming_limit(limit: int) -> None:
    assert refused_fields({"limit": limit}) == ["limit"]
    assert refused_fields({"limit": str(limit)}) == ["limit"]


def test_offset_zero_and_above_are_served_as_given() -> None:
    assert RetrievalQuery.parse({"offset": 0}).offset == 0
    assert from_query_string(offset="250").offset == 250


@pytest.mark.parametrize("offset", [-1, "-1", "-50"])
def test_a_negative_offset_is_refused_naming_offset(offset: int | str) -> None:
    assert refused_fields({"offset": offset}) == ["offset"]


@pytest.mark.parametrize("text", ["abc", "1.5", "1e2", "", " ", "0x10", "ten", "1 2", "١٢", "+-1", "5a", "true"])
@pytest.mark.parametrize("field", ["limit", "offset"])
def test_a_non_integer_limit_or_offset_is_refused_by_name(field: str, text: str) -> None:
    assert refused_fields({field: text}) == [field]


@pytest.mark.parametrize("field", ["limit", "offset"])
def test_a_boolean_is_not_an_integer(field: str) -> None:
    assert refused_fields({field: True}) == [field]


@pytest.mark.parametrize("text", ["--5", "9" * 4301])
def test_every_non_integer_limit_is_refused_in_the_same_words(text: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        RetrievalQuery.parse({"limit": text})
    assert [(e.field, e.message) for e in caught.value.errors] == [("limit", "must be an integer")]


# --- exact filters and sort ---


@pytest.mark.parametrize("status", ["active", "invalid", "deleted"])
def test_each_status_is_an_accepted_filter(status: str) -> None:
    assert from_query_string(status=status).status == status


@pytest.mark.parametrize("memory_type", ["preference", "fact", "identity", "event"])
def test_each_memory_type_is_an_accepted_filter(memory_type: str) -> None:
    assert from_query_string(memory_type=memory_type).memory_type == memory_type


@pytest.mark.parametrize("sort", ["id", "created_at", "updated_at", "last_accessed_at"])
def test_each_sort_key_is_accepted(sort: str) -> None:
    assert from_query_string(sort=sort).sort == sort


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("status", "Active"),
        ("status", "archived"),
        ("status", "all"),
        ("status", ""),
        ("memory_type", "Fact"),
        ("memory_type", "note"),
        ("memory_type", ""),
        ("sort", "ID"),
        ("sort", "-id"),
        ("sort", "content"),
        ("sort", "created_at desc"),
        ("sort", ""),
    ],
)
def test_any_other_status_memory_type_or_sort_is_refused_by_name(field: str, value: str) -> None:
    assert refused_fields({field: value}) == [field]


def test_every_bad_field_of_one_query_is_named() -> None:
    bad = {"status": "x", "memory_type": "y", "sort": "z", "limit": "0", "offset": "-1", "q": "q" * 257}
    assert set(refused_fields(bad)) == set(bad)


# --- tag and q values ---


@pytest.mark.parametrize("field", ["tag", "q"])
def test_an_empty_tag_or_q_is_the_same_as_leaving_it_out(field: str) -> None:
    assert from_query_string(**{field: ""}) == RetrievalQuery.parse({})


def test_a_whitespace_only_tag_is_the_same_as_leaving_it_out() -> None:
    assert from_query_string(tag="   ").tag is None


def test_the_tag_filter_is_trimmed_and_lower_cased_like_stored_tags() -> None:
    assert from_query_string(tag="  Travel ").tag == "travel"


def test_q_of_256_characters_is_accepted() -> None:
    assert from_query_string(q="a" * 256).q == "a" * 256


def test_q_of_257_characters_is_refused_naming_q() -> None:
    assert refused_fields({"q": "a" * 257}) == ["q"]


@pytest.mark.parametrize("field", ["status", "memory_type", "tag", "q", "sort", "limit", "offset"])
def test_a_retrieval_field_given_twice_is_refused_by_name(field: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        from_query_string(**{field: ["1", "2"]})
    assert [error.field for error in caught.value.errors] == [field]


def test_a_retrieval_field_given_twice_with_the_same_value_is_still_refused() -> None:
    with pytest.raises(InvalidInputError):
        from_query_string(sort=["id", "id"])


def test_every_field_given_twice_is_named() -> None:
    with pytest.raises(InvalidInputError) as caught:
        from_query_string(tag=["a", "b"], limit=["1", "2"], q="fine")
    assert {error.field for error in caught.value.errors} == {"tag", "limit"}


# --- matches: tag ---


def test_the_tag_filter_matches_a_whole_stored_tag() -> None:
    assert from_query_string(tag="travel").matches(memory(tags=["work", "travel"]))


@pytest.mark.parametrize("stored", [["travel-plans"], ["travels"], ["air-travel"], ["trave"], []])
def test_the_tag_filter_never_matches_part_of_a_tag(stored: list[str]) -> None:
    assert not from_query_string(tag="travel").matches(memory(tags=stored))


def test_the_tag_filter_does_not_look_at_content() -> None:
    assert not from_query_string(tag="travel").matches(memory(content="travel", tags=[]))


def test_a_tag_filter_given_in_capitals_matches_the_lower_cased_stored_tag() -> None:
    assert from_query_string(tag=" TRAVEL ").matches(memory(tags=["travel"]))


# --- matches: q ---


def test_q_matches_a_substring_of_content_ignoring_case() -> None:
    assert from_query_string(q="GREEN tea").matches(memory(content="Likes green TEA in the morning"))


def test_q_matches_a_substring_of_any_one_tag() -> None:
    assert from_query_string(q="PLANS").matches(memory(content="unrelated", tags=["work", "travel-plans"]))


@pytest.mark.parametrize("q", ["kt", "k t", "k,t", "work travel", "k\nt"])
def test_q_does_not_match_across_two_tags(q: str) -> None:
    assert not from_query_string(q=q).matches(memory(content="unrelated", tags=["work", "travel"]))


@pytest.mark.parametrize("q", ["endwork", "end work", "end\nwork"])
def test_q_does_not_match_across_content_and_a_tag(q: str) -> None:
    assert not from_query_string(q=q).matches(memory(content="the end", tags=["work"]))


def test_q_that_appears_nowhere_does_not_match() -> None:
    assert not from_query_string(q="coffee").matches(memory(content="likes tea", tags=["drinks"]))


@pytest.mark.parametrize(
    ("q", "content", "matched"),
    [
        ("%", "100% sure", True),
        ("%", "no percent here", False),
        ("a%c", "abc", False),
        ("a%c", "a%c", True),
        ("_", "snake_case", True),
        ("_", "nothing", False),
        ("a_c", "abc", False),
        ("a_c", "xa_cx", True),
        ("\\", "C:\\path", True),
        ("\\", "no slash", False),
        ("\\d", "digit 5", False),
        ("\\d", "literal \\d", True),
        (".*", "anything", False),
        ("[a]", "a", False),
        ("%_\\", "odd %_\\ run", True),
    ],
)
def test_percent_underscore_and_backslash_in_q_are_ordinary_characters(q: str, content: str, matched: bool) -> None:
    assert from_query_string(q=q).matches(memory(content=content)) is matched


def test_tag_and_q_combine_with_and() -> None:
    query = from_query_string(tag="travel", q="paris")
    assert query.matches(memory(content="Paris in May", tags=["travel"]))
    assert not query.matches(memory(content="Paris in May", tags=["work"]))
    assert not query.matches(memory(content="Rome in May", tags=["travel"]))


def test_without_tag_or_q_every_memory_matches() -> None:
    assert RetrievalQuery.parse({}).matches(memory(content="anything", tags=[]))


printable = st.text(alphabet=string.ascii_letters + string.digits + " %_\\.-:'\"", min_size=1, max_size=60)


@given(printable, st.data())
def test_any_substring_of_the_content_in_any_case_matches(content: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(min_value=0, max_value=len(content) - 1))
    end = data.draw(st.integers(min_value=start + 1, max_value=len(content)))
    needle = "".join(c.upper() if data.draw(st.booleans()) else c.lower() for c in content[start:end])
    assert from_query_string(q=needle).matches(memory(content=content))


@given(printable, printable)
def test_q_matches_exactly_when_it_is_a_case_insensitive_substring(content: str, q: str) -> None:
    assert from_query_string(q=q).matches(memory(content=content)) is (q.lower() in content.lower())
