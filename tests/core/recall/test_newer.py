"""Recall's `newer` part (CONTRACT.md, Keeping memories true: unmarked changes): a match that restates an older match
(their vectors above the model's related floor less a little,
the same memory type) ranks just above it, whatever their lexical and
semantic order, its `newer` part saying how much it was lifted; unrelated matches are left where they are; equal
inputs give equal rankings; and every score stays the weighted sum of the parts the answer shows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.memory import InMemoryMemoryRepository
from core import writes
from core.digest import Digest, Vector
from core.model import Memory
from core.recall.answer import RecallPage
from core.recall.newer import Scored, newer_parts
from core.recall.query import RecallQuery
from core.recall.ranking import DEFAULT_WEIGHTS, PARTS, RankingSettings
from core.recall.service import RecallService
from core.recall.standin import StandInEmbedder

NS = "alice"
AS_OF = "2026-12-01T00:00:00.000000Z"
FLOOR = 0.9  # the related floor of the tests' vectors: above it, two memories restate one fact


def vector(*values: float) -> Vector:
    return Vector.quantise([*values, 0.0, 0.0][:4])


# Three directions: two versions of one fact lie close together (cosine 0.995 > FLOOR), the other fact far from both.
JOB_OLD = vector(1.0, 0.1, 0.0, 0.0)
JOB_NEW = vector(1.0, 0.0, 0.1, 0.0)
JOB_NEWEST = vector(1.0, 0.05, 0.05, 0.05)
CITY = vector(0.0, 0.0, 0.0, 1.0)


class FixedQuestion(StandInEmbedder):
    """The stand-in, but every question is embedded as `question` and the related floor is the tests' own."""

    related_floor = FLOOR
    dimensions = 4

    def __init__(self, question: Vector) -> None:
        self.question = question

    def embed(self, texts: Sequence[str], kind: Any) -> list[Vector]:
        return [self.question for _ in texts]


def stored(
    rows: list[tuple[str, Vector, str, str]], question: Vector, used: tuple[int, ...] = (), **ranking: Any
) -> RecallService:
    """A store holding each (content, vector, updated_at, memory_type) as memory 1, 2, ..., those numbered in `used`
    last used when the questions are asked, and a recall over it whose questions are embedded as `question`."""
    store = InMemoryMemoryRepository()
    embedder = FixedQuestion(question)
    for number, (content, vec, updated, kind) in enumerate(rows, start=1):
        memory = Memory(
            id=number,
            content=content,
            tags=[],
            created_at=updated,
            updated_at=updated,
            last_accessed_at=AS_OF if number in used else None,
            memory_type=kind,
            status="active",
            version=1,
        )
        writes.add(store, NS, memory, digest=Digest(vec, embedder.model))
    return RecallService(store, embedder, RankingSettings(**ranking), wait_seconds=None)


def ask(recall: RecallService, query: str) -> RecallPage:
    return recall.recall(NS, RecallQuery.parse({"query": query, "as_of": AS_OF}), stamp=False)


def ids(page: RecallPage) -> list[int]:
    return [item.memory.id for item in page.items]


def test_the_newer_of_two_versions_ranks_first_though_the_older_shares_the_questions_words() -> None:
    rows = [
        ("Maya is an engineer at Quillpay", JOB_OLD, "2025-06-01T10:00:00.000000Z", "fact"),
        ("Maya is now an engineer with Ferrox", JOB_NEW, "2026-06-01T10:00:00.000000Z", "fact"),
    ]
    question = "which company employs Maya the engineer"
    without = ask(stored(rows, question=JOB_OLD, weights={**DEFAULT_WEIGHTS, "newer": 0.0}), question)

    page = ask(stored(rows, question=JOB_OLD), question)  # the older one is also the closer in meaning

    assert ids(without) == [1, 2]
    assert ids(page) == [2, 1]
    older, newer = page.items[1], page.items[0]
    assert older.parts["lexical"] > newer.parts["lexical"]
    assert older.parts["semantic"] > newer.parts["semantic"]
    assert older.parts["newer"] == 0.0 < newer.parts["newer"] <= 1.0


def test_the_older_versions_recent_use_does_not_put_it_back_above_the_newer() -> None:
    rows = [
        ("Maya is an engineer at Quillpay", JOB_OLD, "2025-06-01T10:00:00.000000Z", "fact"),
        ("Maya is now an engineer with Ferrox", JOB_NEW, "2026-06-01T10:00:00.000000Z", "fact"),
    ]

    page = ask(stored(rows, question=JOB_OLD, used=(1,)), "which company employs Maya the engineer")

    assert ids(page) == [2, 1]
    assert [item.parts["use"] for item in page.items] == [0.0, 1.0]


def test_a_newer_version_already_ranking_above_the_older_is_not_lifted() -> None:
    rows = [
        ("Maya is an engineer at Quillpay", JOB_OLD, "2025-06-01T10:00:00.000000Z", "fact"),
        ("Maya is now an engineer with Ferrox", JOB_NEW, "2026-06-01T10:00:00.000000Z", "fact"),
    ]

    page = ask(stored(rows, question=JOB_NEW), "which company employs Maya the engineer with Ferrox")

    assert ids(page) == [2, 1]
    assert [item.parts["newer"] for item in page.items] == [0.0, 0.0]


def test_three_versions_rank_newest_first_whatever_order_they_were_written_in() -> None:
    rows = [
        ("works at Quillpay", JOB_OLD, "2025-06-01T10:00:00.000000Z", "fact"),
        ("started at Ferrox", JOB_NEWEST, "2026-09-01T10:00:00.000000Z", "fact"),  # written second, changed last
        ("joined Brightly", JOB_NEW, "2026-01-01T10:00:00.000000Z", "fact"),
    ]

    page = ask(stored(rows, question=JOB_OLD), "who employs her")

    assert ids(page) == [2, 3, 1]


def test_an_unrelated_match_keeps_its_place_and_gets_no_newer_part() -> None:
    rows = [
        ("Maya works at Quillpay", JOB_OLD, "2025-06-01T10:00:00.000000Z", "fact"),
        ("Maya lives in Kreuzberg", CITY, "2026-10-01T10:00:00.000000Z", "fact"),
    ]

    page = ask(stored(rows, question=JOB_OLD), "where does Maya work")

    assert ids(page) == [1, 2]
    assert [item.parts["newer"] for item in page.items] == [0.0, 0.0]


def test_matches_of_different_types_are_not_versions_of_one_fact() -> None:
    rows = [
        ("Maya works as an engineer at Quillpay", JOB_OLD, "2025-06-01T10:00:00.000000Z", "fact"),
        ("Maya started at Ferrox in June", JOB_NEW, "2026-06-01T10:00:00.000000Z", "event"),
    ]

    page = ask(stored(rows, question=JOB_OLD), "where does Maya work as an engineer")

    assert ids(page) == [1, 2]


def test_a_newer_version_too_far_behind_to_lift_within_the_newer_weight_is_left_where_it_is() -> None:
    rows = [
        ("Maya works as an engineer at Quillpay", JOB_OLD, "2025-06-01T10:00:00.000000Z", "fact"),
        ("Maya started at Ferrox in June", JOB_NEW, "2026-06-01T10:00:00.000000Z", "fact"),
    ]

    weights = {**DEFAULT_WEIGHTS, "newer": 0.05}
    page = ask(stored(rows, question=JOB_OLD, weights=weights), "where does Maya work as an engineer")  # far ahead

    assert ids(page) == [1, 2]
    assert [item.parts["newer"] for item in page.items] == [0.0, 0.0]


def test_a_newer_weight_of_zero_turns_it_off() -> None:
    rows = [
        ("Maya works as an engineer at Quillpay", JOB_OLD, "2025-06-01T10:00:00.000000Z", "fact"),
        ("Maya started at Ferrox in June", JOB_NEW, "2026-06-01T10:00:00.000000Z", "fact"),
    ]

    page = ask(stored(rows, question=JOB_OLD, weights={**DEFAULT_WEIGHTS, "newer": 0.0}), "works as an engineer")

    assert ids(page) == [1, 2]


def test_each_score_is_the_weighted_sum_of_the_parts_the_answer_shows() -> None:
    rows = [
        ("Maya works as an engineer at Quillpay", JOB_OLD, "2025-06-01T10:00:00.000000Z", "fact"),
        ("Maya started at Ferrox in June", JOB_NEW, "2026-06-01T10:00:00.000000Z", "fact"),
        ("Maya joined Brightly", JOB_NEWEST, "2026-09-01T10:00:00.000000Z", "fact"),
        ("Maya lives in Kreuzberg", CITY, "2026-10-01T10:00:00.000000Z", "fact"),
    ]

    page = ask(stored(rows, question=JOB_OLD), "where does Maya work as an engineer")

    assert page.ranking.weights == RankingSettings().weights
    for item in page.items:
        assert item.score == round(sum(page.ranking.weights[part] * item.parts[part] for part in PARTS), 6)
        assert set(item.parts) == set(PARTS)


def test_a_deployments_weights_from_before_the_newer_part_keep_working_and_take_its_default() -> None:
    before = {part: weight for part, weight in DEFAULT_WEIGHTS.items() if part != "newer"}

    assert RankingSettings(weights=before).weights["newer"] == DEFAULT_WEIGHTS["newer"]


SCORED = st.lists(
    st.builds(
        Scored,
        memory_id=st.integers(1, 40),
        score=st.floats(0, 1).map(lambda value: round(value, 6)),
        vector=st.sampled_from([JOB_OLD, JOB_NEW, JOB_NEWEST, CITY, None]),
        updated_at=st.sampled_from(["2025-06-01T10:00:00.000000Z", "2026-01-01T10:00:00.000000Z"]),
        memory_type=st.sampled_from(["fact", "event"]),
    ),
    max_size=30,
    unique_by=lambda scored: scored.memory_id,
)


@settings(max_examples=200, deadline=None)
@given(matches=SCORED, shuffled=st.randoms(use_true_random=False))
def test_equal_matches_in_any_order_give_equal_newer_parts_each_in_zero_to_one_and_only_with_a_vector(
    matches: list[Scored], shuffled: Any
) -> None:
    parts = newer_parts(matches, FLOOR, weight=0.1, use_weight=0.001)
    again = list(matches)
    shuffled.shuffle(again)

    assert newer_parts(again, FLOOR, weight=0.1, use_weight=0.001) == parts
    assert all(0.0 < value <= 1.0 for value in parts.values())
    assert set(parts) <= {match.memory_id for match in matches if match.vector is not None}


@pytest.mark.parametrize("weight", [0.0, -0.0])
def test_no_newer_weight_lifts_nothing(weight: float) -> None:
    matches = [
        Scored(1, 0.5, JOB_OLD, "2025-06-01T10:00:00.000000Z", "fact"),
        Scored(2, 0.4, JOB_NEW, "2026-06-01T10:00:00.000000Z", "fact"),
    ]
    assert newer_parts(matches, FLOOR, weight=weight, use_weight=0.001) == {}


def test_a_newer_version_just_below_the_related_floor_is_still_lifted_and_one_further_below_is_not() -> None:
    just_below = vector(1.0, 0.0, 0.47, 0.0)  # cosine 0.899 with JOB_OLD: within 0.01 below FLOOR
    further_below = vector(1.0, 0.0, 0.5, 0.0)  # cosine 0.888
    older = Scored(1, 0.5, JOB_OLD, "2025-06-01T10:00:00.000000Z", "fact")

    lifted = newer_parts([older, Scored(2, 0.49, just_below, "2026-06-01T10:00:00.000000Z", "fact")], FLOOR, 0.2, 0.001)
    left = newer_parts(
        [older, Scored(2, 0.49, further_below, "2026-06-01T10:00:00.000000Z", "fact")], FLOOR, 0.2, 0.001
    )

    assert 0.0 < lifted[2] <= 1.0
    assert left == {}


def test_a_pair_close_enough_to_be_sure_may_take_the_whole_weight_and_a_closer_call_only_a_quarter() -> None:
    unsure = vector(1.0, 0.0, 0.47, 0.0)  # cosine 0.899 with JOB_OLD: a version, but not far above FLOOR
    older = Scored(1, 0.5, JOB_OLD, "2025-06-01T10:00:00.000000Z", "fact")

    def lifted(newer: Vector, behind: float) -> dict[int, float]:
        return newer_parts(
            [older, Scored(2, 0.5 - behind, newer, "2026-06-01T10:00:00.000000Z", "fact")], FLOOR, 0.2, 0
        )

    assert 0.0 < lifted(JOB_NEW, 0.1)[2] <= 1.0  # cosine 0.995: sure
    assert lifted(unsure, 0.1) == {}
    assert 0.0 < lifted(unsure, 0.04)[2] <= 0.25
