"""Recall's ranking: each part in [0, 1], the score their weighted sum, both rounded so anyone can recompute them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from core.recall.ranking import DEFAULT_WEIGHTS, PARTS, RankingSettings, Signals, decay, parts, score, semantic

AS_OF = datetime(2026, 12, 4, 10, 0, tzinfo=UTC)


def signals(**changes: object) -> Signals:
    fields: dict[str, object] = {
        "memory_id": 1,
        "lexical": 0.5,
        "similarity": 0.9,
        "updated_at": "2026-12-04T10:00:00.000000Z",
        "last_accessed_at": None,
        "memory_type": "fact",
    }
    return Signals(**{**fields, **changes})  # type: ignore[arg-type]


def test_recency_halves_every_half_life_and_a_change_at_or_after_as_of_counts_fully() -> None:
    assert decay("2026-12-04T10:00:00.000000Z", AS_OF, 30) == 1.0
    assert decay("2026-12-05T10:00:00.000000Z", AS_OF, 30) == 1.0
    assert decay("2026-11-04T10:00:00.000000Z", AS_OF, 30) == pytest.approx(0.5)
    assert decay("2026-10-05T10:00:00.000000Z", AS_OF, 30) == pytest.approx(0.25)


def test_a_memory_never_used_has_no_use() -> None:
    assert parts(signals(last_accessed_at=None), AS_OF, 0.0, RankingSettings())["use"] == 0.0


def test_the_semantic_part_is_the_similarity_above_the_models_floor_scaled_to_one() -> None:
    assert semantic(0.9, 0.8) == pytest.approx(0.5)
    assert semantic(0.7, 0.8) == 0.0
    assert semantic(1.0, 0.8) == 1.0
    assert semantic(None, 0.8) == 0.0


def test_the_score_is_the_weighted_sum_of_the_rounded_parts_rounded_to_six_decimals() -> None:
    settings = RankingSettings()
    values = parts(signals(lexical=1 / 3, similarity=0.123456789), AS_OF, 0.0, settings)
    assert all(round(value, 6) == value for value in values.values())
    assert score(values, settings) == round(sum(DEFAULT_WEIGHTS[part] * values[part] for part in PARTS), 6)


def test_the_type_prior_is_the_settings_and_weights_must_cover_every_part() -> None:
    priors = {"identity": 1.0, "preference": 0.5, "fact": 0.25, "event": 0.0}
    settings = RankingSettings(type_priors=priors)
    assert parts(signals(memory_type="preference"), AS_OF, 0.0, settings)["type"] == 0.5
    with pytest.raises(ValidationError, match="must give each of lexical"):
        RankingSettings(weights={"lexical": 1.0})
    with pytest.raises(ValidationError, match="from 0 to 1"):
        RankingSettings(weights={**DEFAULT_WEIGHTS, "use": 2.0})
