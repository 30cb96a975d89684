"""Every match's score without use, computed for a recall's matches at once (core.recall.ranking.floors), is to the bit
the score of its parts (`score(parts(...))`) whatever the weights, priors and half-lives; and the matches whose signals
a recall builds (core.recall.reach.contenders) leave `within_reach` keeping exactly what it keeps over every match."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from core.model import MEMORY_TYPES
from core.recall.ranking import PARTS, RankingSettings, Signals, floors, parts, score
from core.recall.reach import Ranked, contenders, within_reach

AS_OF = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
weights = st.fixed_dictionaries({part: st.sampled_from([0.0, 0.001, 0.15, 0.2, 0.849, 1.0]) | unit for part in PARTS})
ranking_settings = st.builds(
    RankingSettings,
    weights=weights,
    recency_half_life_days=st.floats(min_value=0.01, max_value=1000),
    use_half_life_days=st.floats(min_value=0.01, max_value=1000),
    type_priors=st.fixed_dictionaries(dict.fromkeys(MEMORY_TYPES, unit)),
)
moments = st.integers(min_value=-(10**9), max_value=10**7).map(
    lambda micros: (AS_OF + timedelta(microseconds=micros * 997)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
)
matches = st.lists(
    st.tuples(unit, st.none() | st.floats(min_value=-1, max_value=1), moments, st.sampled_from(MEMORY_TYPES)),
    max_size=30,
)


@given(matches, ranking_settings, st.sampled_from([0.0, 0.34, 0.72]))
def test_floors_are_to_the_bit_the_score_of_the_parts_of_each_match(
    rows: list[tuple[float, float | None, str, str]], settings: RankingSettings, floor: float
) -> None:
    expected = [
        score(parts(Signals(n, lexical, similarity, updated, None, kind), AS_OF, floor, settings), settings)  # type: ignore[arg-type]
        for n, (lexical, similarity, updated, kind) in enumerate(rows)
    ]
    computed = floors(
        [row[0] for row in rows],
        [row[1] for row in rows],
        [row[2] for row in rows],
        [row[3] for row in rows],  # type: ignore[misc]
        AS_OF,
        floor,
        settings,
    )
    assert [value.hex() for value in computed] == [value.hex() for value in expected]


@given(
    st.lists(st.sampled_from([0.1, 0.199, 0.1989996, 0.2, 0.2005, 0.3]) | unit, max_size=40),
    st.integers(min_value=1, max_value=12),
    st.sampled_from([0.0, 0.001, 0.05]),
)
# Its best score rounds up to the mark's floor by use alone, and its larger id ranks it above the mark.
@example([0.3, 0.2, 0.1989996], 2, 0.001)
def test_within_reach_keeps_over_the_contenders_what_it_keeps_over_every_match(
    scores: list[float], wanted: int, use_weight: float
) -> None:
    ranked = [
        Ranked(Signals(n + 1, 0.0, None, "2026-01-01T00:00:00.000000Z", None, "fact"), s) for n, s in enumerate(scores)
    ]

    def best(entry: Ranked) -> float:
        return round(entry.floor + use_weight, 6)

    kept = [ranked[index] for index in contenders(scores, [n + 1 for n in range(len(scores))], wanted, use_weight)]
    assert within_reach(kept, wanted, best, use_weight) == within_reach(ranked, wanted, best, use_weight)
    assert len(kept) >= min(wanted, len(ranked))


def test_floors_refuse_matches_missing_a_signal() -> None:
    with pytest.raises(ValueError, match="each of its signals"):
        floors([0.5, 0.1], [0.9], ["2026-01-01T00:00:00.000000Z"] * 2, ["fact", "fact"], AS_OF, 0.0, RankingSettings())
