"""Recall's ranking settings as the environment gives them (read by handlers.bootstrap.Settings.from_env, which
validates them as core.recall.ranking.RankingSettings): the weights and type priors as JSON objects, in the shape every
recall's `ranking.weights` echoes, and the half-lives in days. Each left out (or empty, as the template passes a
parameter left at its default) keeps core.recall.ranking's documented default."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

# Each ranking setting and the variable that gives it.
RANKING_VARIABLES: Final = {
    "weights": "RECALL_WEIGHTS",
    "type_priors": "RECALL_TYPE_PRIORS",
    "recency_half_life_days": "RECALL_RECENCY_HALF_LIFE_DAYS",
    "use_half_life_days": "RECALL_USE_HALF_LIFE_DAYS",
}
_JSON_OBJECTS: Final = frozenset({"weights", "type_priors"})


def ranking_from_env(env: Mapping[str, str]) -> tuple[dict[str, Any], list[str]]:
    """The ranking settings the environment gives, not yet validated, and a problem naming each variable that should
    hold JSON and does not."""
    raw: dict[str, Any] = {}
    problems: list[str] = []
    for name, variable in RANKING_VARIABLES.items():
        text = (env.get(variable) or "").strip()
        if not text:
            continue
        if name not in _JSON_OBJECTS:
            raw[name] = text
            continue
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, dict):
            raw[name] = value
        else:
            problems.append(f"{variable}: {text[:80]!r} is not a JSON object")
    return raw, problems
