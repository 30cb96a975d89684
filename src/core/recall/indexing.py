"""The digest of a memory, computed by the core before every write of its content or tags (core.digest.Indexer):
its embedding when the model can make one now."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Final

from core.budget import carried
from core.digest import Digest, Vector
from core.recall.embedding import Embedder, EmbedderUnavailableError, passage_text
from core.recall.guard import EMBEDDING_WAIT_SECONDS, GuardedEmbedder, guarded

# After the model failed, writes go on without asking it for this long: an unreachable model costs each write its
# timeouts (Bedrock's: seconds), and the backfill embeds what was written meanwhile.
PAUSE_AFTER_FAILURE_SECONDS: Final = 30.0
# Each write's embedding runs in one of these threads (started on first use, shared by the process), so that the write
# waits for it at most its wait: a model that is slow, or hangs, holds these threads, never a request's own (nor the
# worker threads `serve` runs storage calls in). A few, for a model that embeds texts in parallel (Bedrock's calls).
_PASSAGES: Final = ThreadPoolExecutor(max_workers=4, thread_name_prefix="passage")

logger = logging.getLogger(__name__)


class RecallIndexer:
    """core.digest.Indexer over `embedder`, behind the port's guard (core.recall.guard); without one (an import), while
    the model is unavailable, for PAUSE_AFTER_FAILURE_SECONDS after it failed, and while an embedding that outlasted
    its write's wait still runs, digests carry no vector and wait for the backfill to embed them: a write never
    fails, nor waits longer than `wait_seconds`, for want of a vector (None: as long as the model takes, for tools
    that are no request)."""

    def __init__(
        self,
        embedder: Embedder | None,
        clock: Callable[[], float] = time.monotonic,
        *,
        wait_seconds: float | None = EMBEDDING_WAIT_SECONDS,
    ) -> None:
        self._embedder = guarded(embedder) if embedder is not None else None
        self._clock = clock
        self._wait_seconds = wait_seconds
        self._paused_until = float("-inf")
        self._lock = threading.Lock()
        self._late = 0  # embeddings that outlasted their write's wait and still run

    def digest(self, content: str, tags: Sequence[str]) -> Digest:
        embedder = self._embedder
        if embedder is None or not self._asks():
            return Digest()
        vector = self._vector(embedder, passage_text(content, tags))
        return Digest() if vector is None else Digest(vector, embedder.model)

    def _asks(self) -> bool:
        """Whether to ask the model now. Not while it is busy with an embedding a write gave up on: the offline model
        embeds one text at a time, so this write would only wait out its own wait behind it."""
        with self._lock:
            return not self._late and self._clock() >= self._paused_until

    def _vector(self, embedder: GuardedEmbedder, text: str) -> Vector | None:
        asked = _PASSAGES.submit(carried(embedder.embed), [text], "passage")
        try:
            (vector,) = asked.result(timeout=self._wait_seconds)
        except TimeoutError:
            self._gave_up(asked, embedder.model)
            return None
        except EmbedderUnavailableError:
            self._paused_until = self._clock() + PAUSE_AFTER_FAILURE_SECONDS
            return None
        return vector

    def _gave_up(self, asked: Future[list[Vector]], model: str) -> None:
        logger.warning(
            "embedding model %s took longer than %s s: the memory is stored without its vector, which the backfill "
            "adds",
            model,
            self._wait_seconds,
        )
        if asked.cancel():
            return  # never started (no thread was free in time): nothing runs for it
        with self._lock:
            self._late += 1
        asked.add_done_callback(self._answered_late)

    def _answered_late(self, _: Future[list[Vector]]) -> None:
        with self._lock:
            self._late -= 1
