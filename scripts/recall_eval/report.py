"""eval/recall/REPORT.md, written by `make eval` (never by hand)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.recall.ranking import RankingSettings

KINDS = ("paraphrase", "rare-word", "superseded", "temporal", "multi", "type")
MEASURES = ("recall@5", "recall@10", "ndcg@10")


@dataclass(frozen=True)
class Quantisation:
    """One ranking's measures with the stored int8 vectors and with the model's float vectors, and the number of
    questions (of `asked`) whose first 10 memories differ between the two, in membership or order."""

    int8: Mapping[str, float]
    float: Mapping[str, float]
    changed: int
    asked: int


def render(
    results: Mapping[str, Mapping[str, Mapping[str, Mapping[str, float]]]],
    namespaces: Sequence[Any],
    model: str,
    settings: RankingSettings,
    quantised: Mapping[str, Mapping[str, Quantisation]] | None = None,
) -> str:
    lines = [
        "# Recall: evaluation report",
        "",
        "Written by `make eval` (scripts/recall_eval): every question of this folder's set asked of the recall service",
        f"with the offline model `{model}`, reading without stamping, at each namespace's `as_of`. The blend is the",
        "deployment's default ranking settings:",
        "",
        f"- weights: {', '.join(f'{part} {weight}' for part, weight in settings.weights.items())}",
        f"- half-lives: recency {settings.recency_half_life_days:g} days, use {settings.use_half_life_days:g} days",
        f"- type priors: {', '.join(f'{kind} {prior}' for kind, prior in settings.type_priors.items())}",
        "",
        "The defaults were chosen on the development half (`python -m recall_eval --tune`); the test half was not",
        "looked at while choosing. Relevance grades are 2 (answers) and 1 (helps); nDCG@10 uses them.",
        "",
    ]
    for split, variants in results.items():
        names = ", ".join(n.name for n in namespaces if n.split == split)
        count = int(next(iter(variants.values()))["all"]["n"])
        lines += [f"## {split} half ({names}: {count} questions)", ""]
        lines += ["| ranking | recall@5 | recall@10 | nDCG@10 |", "|---|---|---|---|"]
        for name, measures in variants.items():
            row = measures["all"]
            lines.append(f"| {name} | {row['recall@5']:.3f} | {row['recall@10']:.3f} | {row['ndcg@10']:.3f} |")
        lines += ["", "nDCG@10 by kind of question:", ""]
        lines += ["| kind | n | " + " | ".join(variants) + " |", "|---|---|" + "---|" * len(variants)]
        for kind in KINDS:
            first = next(iter(variants.values())).get(kind)
            if first is None:
                continue
            cells = " | ".join(f"{variants[name][kind]['ndcg@10']:.3f}" for name in variants)
            lines.append(f"| {kind} | {int(first['n'])} | {cells} |")
        lines.append("")
    return "\n".join(lines + _quantisation(model, quantised))


def _quantisation(model: str, quantised: Mapping[str, Mapping[str, Quantisation]] | None) -> list[str]:
    lines = ["## int8 against float vectors", ""]
    if quantised is None:
        return [*lines, f"Not measured: `{model}` gives no float vectors (the offline model is not installed).", ""]
    lines += [
        "Recall stores each vector as int8 codes with one scale (a byte a dimension) and compares those. The same",
        "questions asked with the model's float vectors instead (its output before quantisation, compared by float",
        "cosine), everything else the recall service's; the lexical part reads no vector. Difference: int8 - float.",
        "",
        "| half | ranking | vectors | recall@5 | recall@10 | nDCG@10 | first 10 differ |",
        "|---|---|---|---|---|---|---|",
    ]
    for split, rankings in quantised.items():
        for name, measured in rankings.items():
            for label, row in (("float", measured.float), ("int8", measured.int8)):
                cells = " | ".join(f"{row[key]:.3f}" for key in MEASURES)
                lines.append(f"| {split} | {name} | {label} | {cells} | |")
            cells = " | ".join(f"{measured.int8[key] - measured.float[key]:+.3f}" for key in MEASURES)
            changed = f"{measured.changed} of {measured.asked} questions"
            lines.append(f"| {split} | {name} | **difference** | {cells} | {changed} |")
    return [*lines, ""]
