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
from typing import cast

from core.digest import Vector


def _python_dot(left: bytes, right: bytes) -> int:
    return sum(a * b for a, b in zip(array("b", left), array("b", right), strict=True))


try:
    import simsimd
except ImportError:  # pragma: no cover - where simsimd has no wheel, plain Python gives the same integers
    _dot = _python_dot
else:

    def _dot(left: bytes, right: bytes) -> int:
        # Read as signed bytes: a plain `bytes` buffer would be taken as unsigned.
        product = simsimd.dot(memoryview(left).cast("b"), memoryview(right).cast("b"))
        return int(cast("float", product))


def cosine(left: Vector, right: Vector) -> float:
    """The cosine similarity of two quantised vectors of the same dimensions (0 when either is all zeros)."""
    if left.dimensions != right.dimensions:
        raise ValueError(f"vectors of {left.dimensions} and {right.dimensions} dimensions cannot be compared")
    norms = _dot(left.codes, left.codes) * _dot(right.codes, right.codes)
    return _dot(left.codes, right.codes) / math.sqrt(norms) if norms else 0.0


def similarities(query: Vector, vectors: Sequence[Vector | None]) -> list[float | None]:
    """`query`'s cosine with each vector (None where there is none, or it has other dimensions: another model's)."""
    query_norm = _dot(query.codes, query.codes)
    result: list[float | None] = []
    for vector in vectors:
        if vector is None or vector.dimensions != query.dimensions or not query_norm:
            result.append(None)
            continue
        norm = _dot(vector.codes, vector.codes)
        result.append(_dot(query.codes, vector.codes) / math.sqrt(query_norm * norm) if norm else 0.0)
    return result
