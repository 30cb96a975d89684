"""A labelled set (eval/recall, eval/changed-facts, eval/conversations: *.json, one namespace a file) loaded into the
in-memory store the recall service reads, each memory with its digest (embedded once), each question's embedding kept
for every variant asked.

With a model that also gives its float vectors (adapters.offline's), the questions can be asked `exact`: the service
then compares the model's float vectors instead of their int8 codes, everything else the same, which measures what
storing vectors as int8 costs.
"""

from __future__ import annotations

import contextlib
import json
import math
import operator
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable
from unittest import mock

from adapters.memory import InMemoryMemoryRepository
from core import writes
from core.digest import Digest, Vector
from core.model import Memory
from core.recall import scoring as recall_scoring
from core.recall.embedding import Embedder, Kind, passage_text
from core.recall.query import RecallQuery
from core.recall.ranking import RankingSettings
from core.recall.service import RecallService
from recall_eval import previous


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    kind: str
    relevant: dict[str, int]
    current: str | None = None  # a changed fact's newest version (eval/changed-facts)
    older: tuple[str, ...] = ()  # its older versions


@runtime_checkable
class Unquantised(Protocol):
    """A model that gives its float vectors too (the ones its `embed` quantises)."""

    def embed_values(self, texts: Sequence[str], kind: Kind) -> list[list[float]]: ...


class _Remembered:
    """An embedder that embeds each text once (the questions are asked under many settings), with its own floor, and
    keeps the float vector behind each int8 one when the model gives it."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._seen: dict[tuple[str, Kind], Vector] = {}
        self._values: dict[Vector, tuple[tuple[float, ...], float]] = {}
        self.floor = embedder.floor
        self.related_floor = embedder.related_floor

    @property
    def model(self) -> str:
        return self._embedder.model

    @property
    def dimensions(self) -> int:
        return self._embedder.dimensions

    @property
    def unquantised(self) -> bool:
        return isinstance(self._embedder, Unquantised)

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        missing = [text for text in dict.fromkeys(texts) if (text, kind) not in self._seen]
        if missing:
            self._seen.update(zip(((text, kind) for text in missing), self._embed(missing, kind), strict=True))
        return [self._seen[text, kind] for text in texts]

    def _embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        if not isinstance(self._embedder, Unquantised):
            return self._embedder.embed(texts, kind)
        vectors = []
        for row in self._embedder.embed_values(texts, kind):
            vector, values = Vector.quantise(row), tuple(row)
            known = self._values.setdefault(vector, (values, math.sqrt(_dot(values, values))))
            if known[0] != values:
                raise ValueError("two different float vectors have the same int8 codes: the float ranking is unknown")
            vectors.append(vector)
        return vectors

    def exact_similarities(self, query: Vector, vectors: Sequence[Vector | None]) -> list[float | None]:
        """core.recall.vectors.similarities over the float vectors the int8 ones were quantised from."""
        values, norm = self._values[query]
        result: list[float | None] = []
        for vector in vectors:
            if vector is None:
                result.append(None)
                continue
            other, other_norm = self._values[vector]
            result.append(_dot(values, other) / (norm * other_norm) if norm and other_norm else 0.0)
        return result


def _dot(left: Sequence[float], right: Sequence[float]) -> float:
    return math.fsum(map(operator.mul, left, right))


@dataclass
class Namespace:
    name: str
    split: str
    as_of: str
    memories: list[Memory]
    store: InMemoryMemoryRepository
    questions: list[Question]
    embedder: _Remembered
    refs: dict[int, str] = field(default_factory=dict)
    form: str = ""  # how a conversation is stored (eval/conversations): turns, tagged or notes

    def ask(
        self, settings: RankingSettings, floor: float | None = None, *, exact: bool = False, before: bool = False
    ) -> list[tuple[Question, list[str]]]:
        """Each question with the refs of its first 10 memories, ranked by the recall service with `settings` (and the
        model's `floor`, when given); `exact`: with the float vectors instead of the int8 ones; `before`: with the
        lexical part as it was before #40 (recall_eval.previous)."""
        if exact and not self.embedder.unquantised:
            raise ValueError(f"{self.embedder.model} gives no float vectors")
        self.embedder.floor = self.embedder_floor if floor is None else floor
        # Asked without stamping: every question sees the set's own stamps; and however long the model takes over a
        # question (a request would rank without meaning past its wait), so that every run ranks the same.
        service = RecallService(self.store, self.embedder, settings, wait_seconds=None)
        # Recall's one comparison of vectors (core.recall.scoring), swapped for the float one while these questions
        # are asked.
        swapped: AbstractContextManager[object] = (
            mock.patch.object(recall_scoring, "similarities", self.embedder.exact_similarities)
            if exact
            else contextlib.nullcontext()
        )
        answers = []
        with swapped, previous.lexical_part() if before else contextlib.nullcontext():
            for question in self.questions:
                query = RecallQuery.parse({"query": question.text, "as_of": self.as_of, "limit": 10})
                page = service.recall(self.name, query, stamp=False)
                answers.append((question, [self.refs[item.memory.id] for item in page.items]))
        return answers

    @property
    def embedder_floor(self) -> float:
        return self._floor

    _floor: float = 0.0


def load(directory: Path, embedder: Embedder) -> list[Namespace]:
    remembered = _Remembered(embedder)
    namespaces = []
    for path in sorted(directory.glob("*.json")):
        data = json.loads(path.read_text())
        memories, refs = [], {}
        for number, entry in enumerate(data["memories"], start=1):
            refs[number] = entry["ref"]
            memories.append(
                Memory(
                    id=number,
                    content=entry["content"],
                    tags=entry["tags"],
                    created_at=entry["created_at"],
                    updated_at=entry["updated_at"],
                    last_accessed_at=entry["last_accessed_at"],
                    memory_type=entry["memory_type"],
                    status=entry["status"],
                    version=1,
                )
            )
        vectors = remembered.embed([passage_text(m.content, m.tags) for m in memories], "passage")
        store = InMemoryMemoryRepository()
        for memory, vector in zip(memories, vectors, strict=True):
            digest = Digest(vector, embedder.model)
            writes.add(store, data["namespace"], memory, digest=digest)
        questions = [
            Question(q["id"], q["question"], q["kind"], q["relevant"], q.get("current"), tuple(q.get("older", ())))
            for q in data["questions"]
        ]
        namespace = Namespace(
            data["namespace"],
            data["split"],
            data["as_of"],
            memories,
            store,
            questions,
            remembered,
            refs,
            data.get("form", ""),
        )
        namespace._floor = embedder.floor
        namespaces.append(namespace)
    return namespaces
