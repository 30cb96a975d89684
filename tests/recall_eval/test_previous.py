"""`make eval`'s ranking before #40 (recall_eval.previous) is what the recall service ranks with while it is swapped
in: its lexical part (every word of the question, divided by the score no memory reaches) replaces today's."""

from __future__ import annotations

from collections import Counter

from adapters.memory import InMemoryMemoryRepository
from core import words
from core.memories import MemoryService
from core.model import NewMemory
from core.recall.indexing import RecallIndexer
from core.recall.query import RecallQuery
from core.recall.service import RecallService
from core.recall.standin import StandInEmbedder
from recall_eval import previous

CONTENTS = ("the user eats fish on fridays", "the user lives in Lyon", "fish market in Lyon")
QUESTION = "where does the user buy fish"


def lexical_parts() -> dict[int, float]:
    store = InMemoryMemoryRepository()
    memories = MemoryService(store, indexer=RecallIndexer(StandInEmbedder()))
    for content in CONTENTS:
        memories.create("ns", NewMemory.parse({"content": content}))
    page = RecallService(store, StandInEmbedder(), previous.SETTINGS).recall(
        "ns", RecallQuery(query=QUESTION), stamp=False
    )
    return {item.memory.id: item.parts["lexical"] for item in page.items}


def test_the_lexical_part_before_40_is_the_one_recall_ranks_with_while_it_is_swapped_in() -> None:
    documents = [words.memory_terms(content, []) for content in CONTENTS]
    expected = previous.counted_scores(
        words.terms(QUESTION), [Counter(document) for document in documents], [len(d) for d in documents]
    )
    today = lexical_parts()
    with previous.lexical_part():
        before = lexical_parts()

    assert before == {memory_id: round(score, 6) for memory_id, score in enumerate(expected, start=1)}
    assert before != today
