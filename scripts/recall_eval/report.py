"""eval/recall/REPORT.md, written by `make eval` (never by hand)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.recall.ranking import RankingSettings

KINDS = ("paraphrase", "rare-word", "superseded", "temporal", "multi", "type")
MEASURES = ("recall@5", "recall@10", "ndcg@10")
# Each set's measures: set -> half -> ranking -> "all" or a kind of question -> measure -> value.
Results = Mapping[str, Mapping[str, Mapping[str, Mapping[str, Mapping[str, float]]]]]


@dataclass(frozen=True)
class Quantisation:
    """One ranking's measures with the stored int8 vectors and with the model's float vectors, and the number of
    questions (of `asked`) whose first 10 memories differ between the two, in membership or order."""

    int8: Mapping[str, float]
    float: Mapping[str, float]
    changed: int
    asked: int


def render(
    results: Results,
    namespaces: Mapping[str, Sequence[Any]],
    model: str,
    settings: RankingSettings,
    quantised: Mapping[str, Mapping[str, Quantisation]] | None = None,
) -> str:
    lines = [
        "# Recall: evaluation report",
        "",
        "Written by `make eval` (scripts/recall_eval): every question of eval/recall, eval/changed-facts and",
        f"eval/conversations asked of the recall service with the offline model `{model}`, reading without",
        "stamping, at each namespace's `as_of`. The defaults are the deployment's default ranking settings:",
        "",
        f"- weights: {', '.join(f'{part} {weight}' for part, weight in settings.weights.items())}",
        f"- half-lives: recency {settings.recency_half_life_days:g} days, use {settings.use_half_life_days:g} days",
        f"- type priors: {', '.join(f'{kind} {prior}' for kind, prior in settings.type_priors.items())}",
        "",
        '"before #40" is the ranking they replace: lexical 0.1, semantic 0.88, use 0.02, no newer part, and the',
        "lexical part over every word of the question divided by the score no memory reaches (recall_eval.previous).",
        "The defaults were chosen on the development halves (`python -m recall_eval --tune`, and the alternatives",
        "core/recall/newer.py names); the test halves were not looked at while choosing. Relevance grades are 2",
        "(answers) and 1 (helps); nDCG@10 uses them.",
        "",
    ]
    for name, halves in results.items():
        if name == "changed facts":
            lines += _changed(halves, namespaces.get(name, ()))
        elif name.startswith("conversations"):
            continue
        else:
            lines += _paraphrases(halves, namespaces.get(name, ()))
    conversations = {name: halves for name, halves in results.items() if name.startswith("conversations")}
    if conversations:
        lines += _conversations(conversations, namespaces)
    return "\n".join(lines + _quantisation(model, quantised))


def _names(namespaces: Sequence[Any], split: str) -> str:
    return ", ".join(namespace.name for namespace in namespaces if namespace.split == split)


def _paraphrases(
    halves: Mapping[str, Mapping[str, Mapping[str, Mapping[str, float]]]], namespaces: Sequence[Any]
) -> list[str]:
    lines = ["## eval/recall: notes about a person, mostly paraphrased", ""]
    for split, variants in halves.items():
        count = int(next(iter(variants.values()))["all"]["n"])
        lines += [f"### {split} half ({_names(namespaces, split)}: {count} questions)", ""]
        lines += ["| ranking | recall@5 | recall@10 | nDCG@10 |", "|---|---|---|---|"]
        for label, measures in variants.items():
            row = measures["all"]
            lines.append(f"| {label} | {row['recall@5']:.3f} | {row['recall@10']:.3f} | {row['ndcg@10']:.3f} |")
        lines += ["", "nDCG@10 by kind of question:", ""]
        lines += ["| kind | n | " + " | ".join(variants) + " |", "|---|---|" + "---|" * len(variants)]
        for kind in KINDS:
            first = next(iter(variants.values())).get(kind)
            if first is None:
                continue
            cells = " | ".join(f"{variants[label][kind]['ndcg@10']:.3f}" for label in variants)
            lines.append(f"| {kind} | {int(first['n'])} | {cells} |")
        lines.append("")
    return lines


def _changed(
    halves: Mapping[str, Mapping[str, Mapping[str, Mapping[str, float]]]], namespaces: Sequence[Any]
) -> list[str]:
    lines = [
        "## eval/changed-facts: facts that changed, nobody said so",
        "",
        "Current-first: the newest version of the fact asked about is among the first 10 and above every older",
        "version; top-1: it is first. Nothing is superseded or marked invalid: every version is active.",
        "",
        "| half | people | questions | ranking | current-first | top-1 | recall@10 | nDCG@10 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for split, variants in halves.items():
        for label, measures in variants.items():
            row = measures["all"]
            lines.append(
                f"| {split} | {_names(namespaces, split)} | {int(row['n'])} | {label} | {row['current-first']:.3f} | "
                f"{row['top-1']:.3f} | {row['recall@10']:.3f} | {row['ndcg@10']:.3f} |"
            )
    return [*lines, ""]


def _conversations(sets: Results, namespaces: Mapping[str, Sequence[Any]]) -> list[str]:
    lines = [
        "## eval/conversations: dialogue as raw turns, turns tagged by speaker, and notes",
        "",
        "| stored as | half | conversations | questions | ranking | recall@5 | recall@10 | nDCG@10 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, halves in sets.items():
        form = name.split(": ", 1)[-1]
        for split, variants in halves.items():
            names = ", ".join(n.name.rsplit("-", 1)[0] for n in namespaces.get(name, ()) if n.split == split)
            for label, measures in variants.items():
                row = measures["all"]
                cells = " | ".join(f"{row[key]:.3f}" for key in MEASURES)
                lines.append(f"| {form} | {split} | {names} | {int(row['n'])} | {label} | {cells} |")
    return [*lines, ""]


def _quantisation(model: str, quantised: Mapping[str, Mapping[str, Quantisation]] | None) -> list[str]:
    lines = ["## eval/recall: int8 against float vectors", ""]
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
