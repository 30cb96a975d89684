"""The labelled set (eval/recall/*.json: one namespace a file) loaded into the in-memory store the recall service
reads, each memory with its digest (embedded once), each question's embedding kept for every variant asked."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from core.digest import Digest, Vector
from core.model import Memory
from core.recall.embedding import Embedder, Kind, passage_text
from core.recall.lexical import memory_terms
from core.recall.query import RecallQuery
from core.recall.ranking import RankingSettings
from core.recall.service import RecallService
from core.repository.memory import InMemoryMemoryRepository


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    kind: str
    relevant: dict[str, int]


class _Remembered:
    """An embedder that embeds each text once (the questions are asked under many settings), with its own floor."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._seen: dict[tuple[str, Kind], Vector] = {}
        self.floor = embedder.floor

    @property
    def model(self) -> str:
        return self._embedder.model

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        missing = [text for text in dict.fromkeys(texts) if (text, kind) not in self._seen]
        if missing:
            self._seen.update(zip(((text, kind) for text in missing), self._embedder.embed(missing, kind), strict=True))
        return [self._seen[text, kind] for text in texts]


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

    def ask(self, settings: RankingSettings, floor: float | None = None) -> Iterator[tuple[Question, list[str]]]:
        self.embedder.floor = self.embedder_floor if floor is None else floor
        # Asked without stamping: every question sees the set's own stamps.
        service = RecallService(self.store, self.embedder, settings)
        for question in self.questions:
            query = RecallQuery.parse({"query": question.text, "as_of": self.as_of, "limit": 10})
            page = service.recall(self.name, query, stamp=False)
            yield question, [self.refs[item.memory.id] for item in page.items]

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
            digest = Digest(tuple(memory_terms(memory.content, memory.tags)), vector, embedder.model)
            store.add(data["namespace"], memory, digest=digest)
        questions = [Question(q["id"], q["question"], q["kind"], q["relevant"]) for q in data["questions"]]
        namespace = Namespace(
            data["namespace"], data["split"], data["as_of"], memories, store, questions, remembered, refs
        )
        namespace._floor = embedder.floor
        namespaces.append(namespace)
    return namespaces
