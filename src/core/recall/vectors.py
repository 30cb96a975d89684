"""Embedding vectors as recall compares them: int8 codes with one scale per vector (core.digest.Vector: a vector of
256 dimensions is 256 bytes), compared by cosine similarity computed exactly on the integer codes.

The dot products run in `simsimd` (SIMD over Python buffers, no numpy) when it is installed, else in plain Python; the
sums of int8 products are exact integers either way, so the similarity, and every ranking built on it, is the same on
every machine.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from typing import Final, cast

from core.digest import Vector


def _python_dot(left: bytes, right: bytes) -> int:
    return sum(a * b for a, b in zip(array("b", left), array("b", right), strict=True))


try:
    import simsimd
except ImportError:  # pragma: no cover - where simsimd has no wheel, plain Python gives the same integers

    def _signed(codes: bytes) -> object:
        return codes

    def _dot_signed(asked: object, codes: bytes) -> int:
        return _python_dot(cast("bytes", asked), codes)

else:

    def _signed(codes: bytes) -> object:
        # Read as signed bytes: a plain `bytes` buffer would be taken as unsigned.
        return memoryview(codes).cast("b")

    def _dot_signed(asked: object, codes: bytes) -> int:
        product = simsimd.dot(cast("memoryview[int]", asked), memoryview(codes).cast("b"))
        return int(cast("float", product))


def _dot(left: bytes, right: bytes) -> int:
    return _dot_signed(_signed(left), right)


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
    dimensions, asked, dot, norms, sqrt = query.dimensions, _signed(query.codes), _dot_signed, _SQUARE_NORMS, math.sqrt
    result: list[float | None] = []
    for vector in vectors:
        if vector is None or len(vector.codes) != dimensions:
            result.append(None)
            continue
        codes = vector.codes
        norm = norms.get(codes)
        if norm is None:
            norm = _square_norm(codes)
        result.append(dot(asked, codes) / sqrt(query_norm * norm) if norm else 0.0)
    return result
