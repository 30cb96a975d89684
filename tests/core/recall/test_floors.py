"""Every match's score without use, computed for a recall's matches at once (core.recall.ranking.floors), is to the bit
the score of its parts (`score(parts(...))`) whatever the weights, priors and half-lives; and the matches whose signals
a recall builds (core.recall.reach.contenders) leave `within_reach` keeping exactly what it keeps over every match."""

from __future__ import annotations

import heapq
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from core.model import MEMORY_TYPES
from core.recall.ranking import PARTS, RankingSettings, Signals, estimate_error, estimates, floors, parts, score
from core.recall.reach import Ranked, contenders, near, within_reach

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


@given(matches, ranking_settings, st.sampled_from([0.0, 0.34, 0.72]))
def test_every_estimate_is_within_its_error_of_the_floor(
    rows: list[tuple[float, float | None, str, str]], settings: RankingSettings, floor: float
) -> None:
    signals = ([row[0] for row in rows], [row[1] for row in rows], [row[2] for row in rows], [row[3] for row in rows])
    exact = floors(*signals, AS_OF, floor, settings)  # type: ignore[arg-type]
    estimated = estimates(*signals, AS_OF, floor, settings)  # type: ignore[arg-type]

    error = estimate_error(settings)
    assert all(abs(estimate - value) <= error for estimate, value in zip(estimated, exact, strict=True))


TWO_PARTS = RankingSettings(
    weights={"lexical": 1.0, "semantic": 1.0, "recency": 0.0, "use": 0.001, "type": 0.0, "newer": 0.0}
)
# Close scores, so that many matches sit within an estimate's error or use's weight of one another.
close_units = st.sampled_from([0.5, 0.5000004, 0.4999996, 0.501, 0.499, 0.3]) | unit


@given(
    st.lists(st.tuples(close_units, st.none() | close_units, st.booleans()), max_size=40),
    ranking_settings,
    st.integers(min_value=1, max_value=12),
    st.integers(min_value=1, max_value=6),
    st.lists(st.sampled_from([0.0, 0.0000004, 0.001, 0.05]), max_size=6),
    st.sampled_from([0.0, 0.34]),
)
# Two parts rounded down as far as they go on one match, up as far on another, which ties it and wins by its id: an
# estimate is as far from its floor as each part's rounding, and the pool's and the page's marks are estimates.
@example(
    [(0.9, 0.9, True), (0.1000004999, 0.1000004999, True), (0.0999995001, 0.0999995001, True)], TWO_PARTS, 1, 2, [], 0.0
).via("the pool's mark: two errors below")
@example([(0.1000004999, 0.1000004999, False), (0.0994995001, 0.0994995001, False)], TWO_PARTS, 1, 1, [], 0.0).via(
    "the page's mark: two errors and use's weight below"
)
def test_the_matches_near_the_page_hold_its_contenders_and_the_pool_whatever_the_pool_s_lifts(
    rows: list[tuple[float, float | None, bool]],
    settings: RankingSettings,
    wanted: int,
    pool: int,
    lifts: list[float],
    floor: float,
) -> None:
    """What a recall computes over the matches `near` keeps (their floors alone) is what it computes over them all: the
    `pool` best-scoring pooled matches, each lifted by as much as it is (core.recall.newer), then the contenders."""
    lexicals, similarities, pooled = [row[0] for row in rows], [row[1] for row in rows], [row[2] for row in rows]
    updated, kinds = ["2026-01-01T00:00:00.000000Z"] * len(rows), ["fact"] * len(rows)
    use = settings.weights["use"]
    scores = floors(lexicals, similarities, updated, kinds, AS_OF, floor, settings)  # type: ignore[arg-type]
    ids = [position + 1 for position in range(len(rows))]

    def ranked(positions: list[int]) -> tuple[list[int], list[int]]:
        best = heapq.nlargest(pool, [(scores[i], ids[i], i) for i in positions if pooled[i]])
        lifted = {i: scores[i] + lift for (_, _, i), lift in zip(best, lifts, strict=False)}
        final = [lifted.get(i, scores[i]) for i in positions]
        return [i for _, _, i in best], [
            positions[at] for at in contenders(final, [ids[i] for i in positions], wanted, use)
        ]

    estimated = estimates(lexicals, similarities, updated, kinds, AS_OF, floor, settings)  # type: ignore[arg-type]
    close = near(estimated, pooled, wanted, pool, use, estimate_error(settings))

    assert ranked(close) == ranked(list(range(len(rows))))
