"""The recall use case: every memory the filters match is ranked by the six parts, the page is returned in the
envelope with each item's score and parts, and the returned memories are stamped as retrieval stamps them.

The store hands over every match's digest, kept beside its record (`Candidate`, core.repository.digests: the record
but its stamp, and its vector), which ranking reads and the page is answered from: no record is read. The access
stamps live in the access items beside the records. Only the `use` part needs them, and it weighs at most
`weights["use"]`: so the stamps are learnt only for the matches whose score could still reach the page with their best
possible use (the rest cannot), by stamping them when they are the page whatever their use, else read first
(core.recall.reach); either way they also say whether a match is still shown (deleted since its digest was read). The
ranking is exact either way. Every match is estimated at once, and only those an estimate cannot rule out are scored
exactly (core.recall.scoring). A warm namespace's matches are ranked while its copy is brought up to date, and again
only when something changed (core.recall.warm).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from functools import cache
from typing import Final

from core.budget import carried
from core.clock import Clock, format_timestamp, utc_now
from core.digest import Vector
from core.model import Memory
from core.recall import lexical
from core.recall.answer import Ranking, RecallItem, RecallPage
from core.recall.embedding import Embedder, EmbedderUnavailableError
from core.recall.guard import EMBEDDING_WAIT_SECONDS, guarded
from core.recall.large import LARGE_NAMESPACE, NearestCandidates
from core.recall.query import RecallQuery
from core.recall.ranking import RankingSettings, Signals, parts, score
from core.recall.reach import Ranked, reached
from core.recall.related import RelatedService
from core.recall.scoring import Columns, Contenders, Matches, contending
from core.recall.warm import WARM_INDEX_BYTES, WarmIndex
from core.repository import MemoryRepository, fence_of
from core.repository.digests import Candidate, CandidateFilter
from core.repository.vectors import VectorSearch

# Each question is embedded while the digests are read, in one of these threads (started on first use, shared by the
# process): the model's call (Bedrock's round trip deployed) then adds nothing to the recall's latency but what it
# takes beyond the read.
_QUESTIONS: Final = ThreadPoolExecutor(max_workers=8, thread_name_prefix="question")

logger = logging.getLogger(__name__)


class RecallService:
    def __init__(
        self,
        store: MemoryRepository,
        embedder: Embedder,
        settings: RankingSettings | None = None,
        clock: Clock = utc_now,
        *,
        fenced: bool = False,
        wait_seconds: float | None = EMBEDDING_WAIT_SECONDS,
        warm_bytes: int = WARM_INDEX_BYTES,
        vectors: VectorSearch | None = None,
        large_namespace: int = LARGE_NAMESPACE,
    ) -> None:
        """`fenced` (what every deployed or served recall is): a recall answers and stamps only while the caller's
        API key is still live in the store (core.repository.LiveKey), as MemoryService's reads. `wait_seconds`: how
        long a recall waits for its question's vector (past it, it ranks without meaning; None: as long as it takes).
        The model is called behind the port's guard (core.recall.guard). `warm_bytes`: the budget of this process's warm
        index (core.recall.warm); 0: every recall reads its namespace's digests. `vectors`: a vector search engine,
        asked for the candidates of a namespace of more than `large_namespace` memories (core.recall.large); None: none
        is."""
        self._store = store
        warm = WarmIndex(store, warm_bytes) if warm_bytes > 0 else None
        self._candidates = store.recall_candidates if warm is None else warm.candidates
        self._ranked: _Ranks = (
            (lambda n, f, rank: rank(Columns(store.recall_candidates(n, f)))) if warm is None else warm.ranked
        )
        self._embedder = guarded(embedder)
        self._nearest = None if vectors is None else NearestCandidates(store, vectors, large_namespace)
        self._wait_seconds = wait_seconds
        self._settings = settings or RankingSettings()
        self._clock = clock
        self._fenced = fenced
        # Related memories compare the vectors this recall ranks by, behind the same fence.
        self.related = RelatedService(store, self._embedder, clock, fenced=fenced, candidates=self._candidates)

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    @property
    def settings(self) -> RankingSettings:
        return self._settings

    def recall(
        self, namespace: str, query: RecallQuery, *, stamp: bool = True, key_id: str | None = None
    ) -> RecallPage:
        """The page of `query`'s matches by score, ties by id descending; the returned memories are stamped (unless
        `stamp` is False), their `use` part computed from the stamp stored before. `key_id`: the caller's API key,
        behind whose fence the recall reads (`fenced`)."""
        arrived = self._clock()
        fence = fence_of(key_id, format_timestamp(arrived), fenced=self._fenced)
        as_of = datetime.fromisoformat(query.as_of) if query.as_of else arrived
        asked = _QUESTIONS.submit(carried(self._question), query.query)
        question = cache(lambda: self._answer(asked))
        wanted = query.offset + query.limit

        def rank(columns: Columns) -> Contenders:
            matches = Matches.of(query.query, columns, self._embedder.model)  # while the question is embedded
            return contending(matches, question(), as_of, wanted, self._embedder, self._settings)

        if query.matches_nothing:
            ranking = rank(Columns([]))
        elif self._nearest is not None and self._nearest.applies(namespace):
            ranking = rank(Columns(self._large(namespace, query, question())))
        else:
            ranking = self._ranked(namespace, query, rank)
        ranked = ranking.ranked
        read = reached(
            self._store,
            namespace,
            ranked,
            query,
            lambda signals: self._score(signals, as_of),
            format_timestamp(as_of),
            self._settings.weights["use"],
            lambda ids: [ranking.candidates[memory_id].record() for memory_id in ids],
            stamping=stamp,
        )
        if fence is not None:
            self._store.confirm_live(fence)  # the read fence: after every read, before any stamp or answer
        now = format_timestamp(arrived)
        records, gone = read.records, read.gone
        if read.unstamped:
            # The page is these records whatever their use: stamped now, each says the stamp it held before.
            priors = self._store.stamp_with_prior(namespace, [memory.id for memory in records], now)
            records = [
                memory.model_copy(update={"last_accessed_at": priors[memory.id].last_accessed_at})
                for memory in records
                if memory.id in priors and priors[memory.id].status == query.status
            ]
            gone += len(read.records) - len(records)
        items = self._page(records, ranked, as_of)
        if stamp and items:
            if not read.unstamped:
                self._store.stamp(namespace, [item.memory.id for item in items], now)
            items = [
                item.model_copy(update={"memory": item.memory.model_copy(update={"last_accessed_at": now})})
                for item in items
            ]
        # A match whose record is gone or no longer shown (deleted since its digest was read) is no match any more.
        total = ranking.total - gone
        return RecallPage.of(
            items,
            total,
            limit=query.limit,
            offset=query.offset,
            as_of=format_timestamp(as_of),
            ranking=Ranking(
                model=self._embedder.model,
                weights=self._settings.weights,
                unembedded=ranking.unembedded,
                semantic=question() is not None,
            ),
        )

    def _large(self, namespace: str, query: RecallQuery, question: Vector | None) -> list[Candidate]:
        """A large namespace's candidates: the nearest the engine names, or (no vector for the question, or no answer
        from the engine) every match."""
        nearest = (
            None
            if question is None or self._nearest is None
            else self._nearest.candidates(namespace, query, question, lexical.question_terms(query.query))
        )
        return self._candidates(namespace, query) if nearest is None else nearest

    def _question(self, text: str) -> Vector | None:
        try:
            return self._embedder.embed([text], "query")[0]
        except EmbedderUnavailableError:
            return None

    def _answer(self, asked: Future[Vector | None]) -> Vector | None:
        """The question's vector, once the model gives it within the wait (the guard's EMBEDDING_WAIT_SECONDS by
        default; None: as long as it takes); None past it, and the answer ranks without meaning."""
        try:
            return asked.result(timeout=self._wait_seconds)
        except TimeoutError:
            asked.cancel()  # when it has not started: no thread spent on a question no one waits for
            logger.warning(
                "embedding model %s took longer than %s s over a question: ranked without meaning",
                self._embedder.model,
                self._wait_seconds,
            )
            return None

    def _score(self, signals: Signals, as_of: datetime) -> float:
        """The score of `signals`' parts (its use as they say: none while the records are not read)."""
        return score(parts(signals, as_of, self._embedder.floor, self._settings), self._settings)

    def _page(self, records: Sequence[Memory], ranked: Sequence[Ranked], as_of: datetime) -> list[RecallItem]:
        """The records' items, each's use from its stored stamp, by score then id, both descending."""
        by_id = {entry.signals.memory_id: entry.signals for entry in ranked}
        items = []
        for memory in records:
            signals = by_id[memory.id]
            used = Signals(**{**signals.__dict__, "last_accessed_at": memory.last_accessed_at})
            values = parts(used, as_of, self._embedder.floor, self._settings)
            items.append(RecallItem(memory=memory, score=score(values, self._settings), parts=values))
        items.sort(key=lambda item: (item.score, item.memory.id), reverse=True)
        return items


# How a recall's matches are ranked: `rank` of them (WarmIndex.ranked, or a read of the digests).
_Ranks = Callable[[str, CandidateFilter, Callable[[Columns], Contenders]], Contenders]
