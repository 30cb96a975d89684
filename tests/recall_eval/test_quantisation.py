"""`make eval`'s int8-against-float measure: the questions asked `exact` are ranked by the recall service over the
model's float vectors (not their int8 codes), the count of changed answers is right, and the report states both."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import pytest

from core.digest import Vector
from core.recall.embedding import Kind
from core.recall.ranking import PARTS, RankingSettings
from core.recall.standin import StandInEmbedder
from recall_eval.__main__ import quantisation
from recall_eval.dataset import load
from recall_eval.report import Quantisation, render

SEMANTIC_ONLY = RankingSettings(weights={part: 1.0 if part == "semantic" else 0.0 for part in PARTS})
QUESTION, TEA, COFFEE = "what does the user drink?", "The user drinks green tea.", "The user drinks black coffee."
# The tea's one small value rounds up to a code of 1, the coffee's three smaller ones down to 0: by their int8 codes the
# coffee is the question's direction exactly and the tea is not, by their floats the tea is the closer.
VALUES = {
    QUESTION: [0.5, 0.0, 0.0, 0.0, 0.0],
    TEA: [1.0, 0.004, 0.0, 0.0, 0.0],
    COFFEE: [1.0, 0.0, 0.0039, 0.0039, 0.0039],
}


class FloatModel:
    """A model that gives float vectors (from VALUES) and the int8 ones they quantise to, as adapters.offline's."""

    model = "test:floats"
    floor = 0.0
    related_floor = 0.5
    dimensions = 5

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        return [Vector.quantise(row) for row in self.embed_values(texts, kind)]

    values: ClassVar[dict[str, list[float]]] = VALUES

    def embed_values(self, texts: Sequence[str], kind: Kind) -> list[list[float]]:
        return [self.values[text] for text in texts]


def write_set(directory: Path) -> Path:
    stamp = "2026-01-01T00:00:00.000000Z"
    memories: list[dict[str, object]] = [
        {
            "ref": ref,
            "content": content,
            "tags": [],
            "created_at": stamp,
            "updated_at": stamp,
            "last_accessed_at": None,
            "memory_type": "preference",
            "status": "active",
        }
        for ref, content in (("m001", TEA), ("m002", COFFEE))
    ]
    question = {"id": "q1", "question": QUESTION, "kind": "paraphrase", "relevant": {"m001": 2}}
    data = {
        "namespace": "ns",
        "split": "test",
        "as_of": "2026-02-01T00:00:00.000000Z",
        "memories": memories,
        "questions": [question],
    }
    (directory / "ns.json").write_text(json.dumps(data))
    return directory


def cosine(left: Sequence[float], right: Sequence[float]) -> float:
    return sum(a * b for a, b in zip(left, right, strict=True)) / math.sqrt(
        sum(a * a for a in left) * sum(b * b for b in right)
    )


def test_the_int8_codes_and_the_floats_order_the_two_memories_differently() -> None:
    question, tea, coffee = (Vector.quantise(VALUES[text]) for text in (QUESTION, TEA, COFFEE))

    assert cosine(question.codes, coffee.codes) > cosine(question.codes, tea.codes)
    assert cosine(VALUES[QUESTION], VALUES[TEA]) > cosine(VALUES[QUESTION], VALUES[COFFEE])


def test_asked_exact_the_service_ranks_by_the_float_vectors(tmp_path: Path) -> None:
    (namespace,) = load(write_set(tmp_path), FloatModel())

    ((_, int8),) = namespace.ask(SEMANTIC_ONLY)
    ((_, floats),) = namespace.ask(SEMANTIC_ONLY, exact=True)

    assert int8 == ["m002", "m001"]
    assert floats == ["m001", "m002"]
    assert namespace.ask(SEMANTIC_ONLY) == [(namespace.questions[0], int8)]  # the swap ends with the questions


def test_the_float_similarities_are_the_cosines_of_the_model_values(tmp_path: Path) -> None:
    (namespace,) = load(write_set(tmp_path), FloatModel())
    question, tea = namespace.embedder.embed([QUESTION], "query")[0], namespace.embedder.embed([TEA], "passage")[0]

    assert namespace.embedder.exact_similarities(question, [tea, None]) == [
        pytest.approx(cosine(VALUES[QUESTION], VALUES[TEA]), abs=1e-15),
        None,
    ]


def test_quantisation_counts_the_questions_whose_first_ten_changed(tmp_path: Path) -> None:
    namespaces = load(write_set(tmp_path), FloatModel())

    measured = quantisation(namespaces, SEMANTIC_ONLY)

    assert (measured.changed, measured.asked) == (1, 1)
    assert measured.int8["ndcg@10"] < measured.float["ndcg@10"] == 1.0
    assert measured.int8["recall@5"] == measured.float["recall@5"] == 1.0


def test_a_model_without_float_vectors_cannot_be_asked_exact(tmp_path: Path) -> None:
    (namespace,) = load(write_set(tmp_path), StandInEmbedder())

    with pytest.raises(ValueError, match="gives no float vectors"):
        namespace.ask(SEMANTIC_ONLY, exact=True)


def test_two_float_vectors_with_the_same_codes_and_scale_are_refused(tmp_path: Path) -> None:
    class Colliding(FloatModel):
        # Both memories quantise to (127, 0, 0, 0, 0) with the scale 1/127.
        values: ClassVar[dict[str, list[float]]] = {
            **VALUES,
            TEA: [1.0, 0.0, 0.0, 0.0, 0.0],
            COFFEE: [1.0, 0.001, 0.0, 0.0, 0.0],
        }

    with pytest.raises(ValueError, match="same int8 codes"):
        load(write_set(tmp_path), Colliding())


def test_the_report_states_both_and_their_difference_or_why_not() -> None:
    measured = Quantisation(
        int8={"recall@5": 0.8, "recall@10": 0.9, "ndcg@10": 0.75},
        float={"recall@5": 0.81, "recall@10": 0.9, "ndcg@10": 0.7},
        changed=3,
        asked=10,
    )
    results = {"recall": {"test": {"blend": {"all": {"recall@5": 0.8, "recall@10": 0.9, "ndcg@10": 0.75, "n": 10}}}}}

    shown = render(results, {}, "test:floats", RankingSettings(), {"test": {"blend": measured}})
    missing = render(results, {}, "stand-in", RankingSettings(), None)

    assert "| test | blend | float | 0.810 | 0.900 | 0.700 | |" in shown
    assert "| test | blend | int8 | 0.800 | 0.900 | 0.750 | |" in shown
    assert "| test | blend | **difference** | -0.010 | +0.000 | +0.050 | 3 of 10 questions |" in shown
    assert "Not measured: `stand-in` gives no float vectors" in missing
