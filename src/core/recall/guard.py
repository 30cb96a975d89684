"""The embedding port's one guard: every call to a model (a write's digest, a recall's question, the backfill) goes
through it, so nothing a model does, raising or answering, fails a request. Any exception from the model (MemoryError
included; KeyboardInterrupt and SystemExit are no model's), and any answer that is not exactly one vector per text,
each of the model's dimensions and finite, is EmbedderUnavailableError: a write stores its memory without a vector
(the backfill embeds it later), a recall ranks without meaning. The cause is logged, never the text."""

from __future__ import annotations

import logging
import math
import traceback
from collections.abc import Sequence
from typing import Final

from core.digest import Vector
from core.recall.embedding import Embedder, EmbedderUnavailableError, Kind

# How long a request waits for the model: a write for its memory's vector (past it the memory is stored without one,
# and the backfill embeds it), a recall for its question's (past it the answer ranks without meaning). Deployed,
# Bedrock answers within a second; the offline model `serve` runs can take a minute over a long text in CJK, one
# text at a time. Short beside the request's budget for every call out (core.budget: 25 s), so a slow model never
# leaves the storage calls without time: its slowness is never answered as storage's.
EMBEDDING_WAIT_SECONDS: Final = 2.0

logger = logging.getLogger(__name__)


class GuardedEmbedder:
    """core.recall.embedding.Embedder over `model`, whose every failure is EmbedderUnavailableError (logged)."""

    def __init__(self, model: Embedder) -> None:
        self._model = model

    @property
    def model(self) -> str:
        return self._model.model

    @property
    def floor(self) -> float:
        return self._model.floor

    @property
    def related_floor(self) -> float:
        return self._model.related_floor

    @property
    def dimensions(self) -> int:
        return self._model.dimensions

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        """One vector per text, each of the model's dimensions and finite; EmbedderUnavailableError otherwise."""
        try:
            vectors = self._model.embed(texts, kind)
            fault = _fault(vectors, len(texts), self._model.dimensions)
        except EmbedderUnavailableError as exc:
            logger.warning("embedding model %s unavailable: %s", self.model, exc)
            raise
        # Whatever a model raises is the model failing, not the request: a missing engine's ImportError, a
        # MemoryError, a bug's TypeError. Its message may quote the text, so only its type and place are told.
        except Exception as exc:
            raise self._unavailable(f"it failed ({_cause(exc)})") from exc
        if fault is not None:
            raise self._unavailable(fault)
        return list(vectors)

    def _unavailable(self, why: str) -> EmbedderUnavailableError:
        logger.warning("embedding model %s unavailable: %s", self.model, why)
        return EmbedderUnavailableError(f"the embedding model {self.model} is unavailable: {why}")


def guarded(embedder: Embedder) -> GuardedEmbedder:
    """`embedder` behind the guard (once: one already guarded is returned as it is)."""
    return embedder if isinstance(embedder, GuardedEmbedder) else GuardedEmbedder(embedder)


def _fault(vectors: object, texts: int, dimensions: int) -> str | None:
    """What is wrong with a model's answer to `texts` texts, if anything."""
    if not isinstance(vectors, list | tuple):
        return f"it answered {type(vectors).__name__}, not a list of vectors"
    if len(vectors) != texts:
        return f"it answered {len(vectors)} vectors for {texts} texts"
    for vector in vectors:
        if not isinstance(vector, Vector) or not isinstance(vector.codes, bytes):
            return f"it answered {type(vector).__name__}, not a vector"
        if vector.dimensions != dimensions:
            return f"it answered a vector of {vector.dimensions} dimensions, not its {dimensions}"
        if not isinstance(vector.scale, float | int) or not (math.isfinite(vector.scale) and vector.scale > 0):
            return "it answered a vector whose values are not finite numbers"
    return None


def _cause(exc: BaseException) -> str:
    """An exception's type and the place it was raised, without its message."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return type(exc).__name__
    where = frames[-1]
    return f"{type(exc).__name__} at {where.filename.rsplit('/', 1)[-1]}:{where.lineno}"
