"""Vectors as recall stores them: int8 codes and one scale, compared by an exact integer cosine."""

from __future__ import annotations

import math
from array import array

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from core.digest import Vector
from core.recall.vectors import cosine, similarities


def test_quantising_keeps_the_largest_magnitude_at_127_and_the_signs() -> None:
    vector = Vector.quantise([0.5, -1.0, 0.25, 0.0])
    assert list(memoryview(vector.codes).cast("b")) == [64, -127, 32, 0]
    assert vector.scale == pytest.approx(1.0 / 127)


def test_an_all_zero_embedding_quantises_to_zeros_and_is_similar_to_nothing() -> None:
    zero = Vector.quantise([0.0, 0.0])
    assert cosine(zero, Vector.quantise([1.0, 0.0])) == 0.0


@given(
    st.lists(st.floats(-1, 1, allow_nan=False), min_size=8, max_size=8),
    st.lists(st.floats(-1, 1, allow_nan=False), min_size=8, max_size=8),
)
def test_the_quantised_cosine_is_close_to_the_float_cosine(left: list[float], right: list[float]) -> None:
    norms = math.sqrt(sum(a * a for a in left) * sum(b * b for b in right))
    if norms < 0.5:
        return  # tiny vectors quantise coarsely; embeddings are normalised
    exact = sum(a * b for a, b in zip(left, right, strict=True)) / norms
    assert cosine(Vector.quantise(left), Vector.quantise(right)) == pytest.approx(exact, abs=0.03)


def plain_dot(left: bytes, right: bytes) -> int:
    """The exact integer dot product of two int8 code strings, in plain Python."""
    return sum(a * b for a, b in zip(array("b", left), array("b", right), strict=True))


def test_simd_and_plain_python_give_the_same_integer_products() -> None:
    # Whether simsimd or plain Python computed them, the dot products are the same integers, so the cosine built on
    # them is the plain-Python integer cosine to the last bit (codes read as unsigned bytes would not be).
    left, right = Vector.quantise([0.3, -0.9, 0.1] * 100), Vector.quantise([-0.2, 0.5, 0.7] * 100)
    norms = plain_dot(left.codes, left.codes) * plain_dot(right.codes, right.codes)
    exact = plain_dot(left.codes, right.codes) / math.sqrt(norms)

    assert cosine(left, right) == exact
    assert similarities(left, [right]) == [exact]


def test_a_vector_of_other_dimensions_or_none_has_no_similarity() -> None:
    query = Vector.quantise([1.0, 0.0])
    assert similarities(query, [None, Vector.quantise([1.0, 0.0, 0.0]), Vector.quantise([1.0, 0.0])]) == [
        None,
        None,
        1.0,
    ]
    with pytest.raises(ValueError, match="cannot be compared"):
        cosine(query, Vector.quantise([1.0, 0.0, 0.0]))


codes = st.binary(min_size=6, max_size=6) | st.sampled_from([bytes([128] * 6), bytes([127] * 6), bytes(6)])


@given(codes, st.lists(st.none() | codes | st.binary(min_size=5, max_size=5), max_size=40))
@example(bytes([128] * 6), [bytes([128] * 6), bytes([127] * 6), None, bytes(6)])
def test_similarities_are_to_the_bit_the_plain_python_integer_cosine_of_each_vector(
    query: bytes, rows: list[bytes | None]
) -> None:
    # Every vector compared at once, int8 extremes among them, beside those it cannot be compared with.
    vectors = [None if row is None else Vector(row, 0.01) for row in rows]
    query_norm = plain_dot(query, query)
    expected = [
        None
        if row is None or len(row) != len(query) or not query_norm
        else (plain_dot(query, row) / math.sqrt(query_norm * plain_dot(row, row)) if any(row) else 0.0)
        for row in rows
    ]
    computed = similarities(Vector(query, 0.01), vectors)
    assert [None if value is None else value.hex() for value in computed] == [
        None if value is None else value.hex() for value in expected
    ]
