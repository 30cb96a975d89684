"""Embedding vectors as recall compares them: int8 codes with one scale per vector (core.digest.Vector: a vector of
256 dimensions is 256 bytes), compared by cosine similarity computed exactly on the integer codes.

The dot products run in `simsimd` (SIMD over Python buffers, no numpy) when it is installed, else in plain Python; the
sums of int8 products are exact integers either way, so the similarity, and every ranking built on it, is the same on
every machine.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Buffer, Sequence
from itertools import repeat
from operator import mul, truediv
from typing import Final, cast

from core.digest import Vector


def _python_dot(left: bytes, right: bytes) -> int:
    return sum(a * b for a, b in zip(array("b", left), array("b", right), strict=True))


try:
    import simsimd
except ImportError:  # pragma: no cover - where simsimd has no wheel, plain Python gives the same integers

    def _dot(left: bytes, right: bytes) -> int:
        return _python_dot(left, right)

    def _dots(query: bytes, rows: Sequence[bytes]) -> Sequence[float]:
        return [_python_dot(query, row) for row in rows]

else:

    def _signed(codes: bytes) -> memoryview[int]:
        # Read as signed bytes: a plain `bytes` buffer would be taken as unsigned.
        return memoryview(codes).cast("b")

    def _dot(left: bytes, right: bytes) -> int:
        return int(cast("float", simsimd.dot(_signed(left), _signed(right))))

    def _dots(query: bytes, rows: Sequence[bytes]) -> Sequence[float]:
        # One call for every row: the rows side by side as one matrix of signed bytes. Each product is a sum of int8
        # products (at most 2**24 in magnitude at 1,024 dimensions, well within the kernel's 32-bit sums), handed back
        # exact as a float.
        dimensions = len(query)
        matrix = memoryview(b"".join(rows)).cast("b", (len(rows), dimensions))
        found = simsimd.cdist(memoryview(query).cast("b", (1, dimensions)), matrix, metric="dot", dtype="int8")
        return cast("list[list[float]]", memoryview(cast("Buffer", found)).tolist())[0]


# Each stored vector's squared norm, by its codes, computed once while the vector is compared again and again (a warm
# index's, core.recall.warm): one dot product a vector instead of two. Emptied whole past this many (about 30 MB of
# codes at 384 dimensions, which a warm index holds anyway while it keeps them).
_SQUARE_NORMS: dict[bytes, int] = {}
_SQUARE_NORMS_KEPT: Final = 65536


def _square_norm(codes: bytes) -> int:
    norm = _SQUARE_NORMS.get(codes)
    if norm is None:
        if len(_SQUARE_NORMS) >= _SQUARE_NORMS_KEPT:
            _SQUARE_NORMS.clear()
        norm = _SQUARE_NORMS[codes] = _dot(codes, codes)
    return norm


def cosine(left: Vector, right: Vector) -> float:
    """The cosine similarity of two quantised vectors of the same dimensions (0 when either is all zeros)."""
    if left.dimensions != right.dimensions:
        raise ValueError(f"vectors of {left.dimensions} and {right.dimensions} dimensions cannot be compared")
    norms = _square_norm(left.codes) * _square_norm(right.codes)
    return _dot(left.codes, right.codes) / math.sqrt(norms) if norms else 0.0


def similarities(query: Vector, vectors: Sequence[Vector | None]) -> list[float | None]:
    """`query`'s cosine with each vector (None where there is none, or it has other dimensions: another model's)."""
    query_norm = _dot(query.codes, query.codes)
    if not query_norm:
        return [None] * len(vectors)
    dimensions = query.dimensions
    compared = [
        (position, vector.codes)
        for position, vector in enumerate(vectors)
        if vector is not None and len(vector.codes) == dimensions
    ]
    result: list[float | None] = [None] * len(vectors)
    if not compared:
        return result
    positions, codes = zip(*compared, strict=True)
    norms = list(map(_SQUARE_NORMS.get, codes))
    if None in norms:
        norms = list(map(_square_norm, codes))
    # dot / sqrt(query_norm * norm), each vector's, as one expression computes it (0.0 for an all-zero vector)
    divisors = map(math.sqrt, map(mul, repeat(query_norm), cast("list[int]", norms)))
    if 0 in norms:
        found = [
            dot / divisor if divisor else 0.0 for dot, divisor in zip(_dots(query.codes, codes), divisors, strict=True)
        ]
    else:
        found = list(map(truediv, _dots(query.codes, codes), divisors))
    if len(found) == len(vectors):
        return cast("list[float | None]", found)
    for position, similarity in zip(positions, found, strict=True):
        result[position] = similarity
    return result
