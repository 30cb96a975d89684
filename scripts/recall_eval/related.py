"""Each embedding model's related floor, measured (CONTRACT.md, Keeping memories true: "only those above the model's
documented similarity floor"): the memories of eval/related/groups.json (one person's, each group a fact with its
versions and repeats) embedded as the service embeds them, the cosine of every pair of their int8 vectors as related
memories compute it, and the floor that best separates the pairs within a group (versions of one fact, repeats) from
the pairs across groups (other facts of the same person): the threshold, in steps of 0.01, where the share of
within-group pairs above it minus the share of across-group pairs above it (Youden's J) is highest, the higher on a
tie. Also: what the write's check (up to 3 related memories, above the floor) would name for each memory of the set.

    PYTHONPATH=src:scripts python -m recall_eval.related [--write]   (--write: eval/related/REPORT.md)
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from core.recall.embedding import Embedder, passage_text
from core.recall.standin import StandInEmbedder
from core.recall.vectors import cosine

ROOT: Final = Path(__file__).resolve().parents[2]
GROUPS: Final = ROOT / "eval" / "related" / "groups.json"
REPORT: Final = ROOT / "eval" / "related" / "REPORT.md"
# Floors are chosen among these (cosines are in [-1, 1]).
THRESHOLDS: Final = tuple(step / 100 for step in range(-100, 100))
# What a write's answer names at most (core.limits.RELATED_DEFAULT_LIMIT).
WRITE_CHECK: Final = 3
# Similarities as related memories give them.
_DECIMALS: Final = 6


@dataclass(frozen=True)
class Entry:
    group: int
    value: str
    content: str
    tags: tuple[str, ...]


@dataclass(frozen=True)
class Measured:
    """One model over the set: every pair's similarity and kind (`version`, `repeat`, or `other` across groups)."""

    model: str
    documented: float
    entries: tuple[Entry, ...]
    similarity: dict[tuple[int, int], float]

    def kinds(self) -> dict[str, list[float]]:
        found: dict[str, list[float]] = {"version": [], "repeat": [], "other": []}
        for (i, j), value in self.similarity.items():
            if i < j:
                found[_kind(self.entries[i], self.entries[j])].append(value)
        return found

    def floor(self) -> float:
        """The threshold with the highest J (within-group share above it minus across-group share), the higher on a
        tie."""
        kinds = self.kinds()
        within, across = kinds["version"] + kinds["repeat"], kinds["other"]
        return max(THRESHOLDS, key=lambda t: (round(_above(within, t) - _above(across, t), 9), t))

    def write_check(self, floor: float) -> tuple[float, float]:
        """For each memory, the others the write's check names (the most similar above `floor`, ties by the later
        entry, at most WRITE_CHECK): the share of memories for which it names at least one of their group, and how
        many of another group it names on average."""
        hits, others = 0, 0
        for i, entry in enumerate(self.entries):
            ranked = sorted(((self.similarity[i, j], j) for j in range(len(self.entries)) if j != i), reverse=True)
            named = [j for value, j in ranked if value > floor][:WRITE_CHECK]
            hits += any(self.entries[j].group == entry.group for j in named)
            others += sum(self.entries[j].group != entry.group for j in named)
        return hits / len(self.entries), others / len(self.entries)


def _kind(left: Entry, right: Entry) -> str:
    if left.group != right.group:
        return "other"
    return "repeat" if left.value == right.value else "version"


def _above(values: Sequence[float], threshold: float) -> float:
    return sum(value > threshold for value in values) / len(values) if values else 0.0


def load(path: Path = GROUPS) -> tuple[Entry, ...]:
    groups: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["groups"]
    return tuple(
        Entry(index, memory["value"], memory["content"], tuple(memory["tags"]))
        for index, group in enumerate(groups)
        for memory in group["memories"]
    )


def measure(embedder: Embedder, entries: Sequence[Entry]) -> Measured:
    """Every pair's cosine of the entries' passage vectors (content and tags, as a memory's digest embeds them)."""
    vectors = embedder.embed([passage_text(entry.content, entry.tags) for entry in entries], "passage")
    similarity = {}
    for i, j in itertools.permutations(range(len(entries)), 2):
        similarity[i, j] = round(cosine(vectors[i], vectors[j]), _DECIMALS)
    return Measured(embedder.model, embedder.related_floor, tuple(entries), similarity)


def _quantile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def report(results: Sequence[Measured]) -> str:
    entries = results[0].entries
    lines = [
        "# Related memories: each model's floor",
        "",
        f"Measured by `python -m recall_eval.related --write` on [groups.json](groups.json): {len(entries)} memories "
        f"of one person in {len({entry.group for entry in entries})} groups. A pair within a group is a version of "
        "one fact (its value changed) or a repeat (the same value); a pair across groups is two facts of the same "
        "person, the pairs a floor must keep out. Cosines of the int8 passage vectors, as related memories compare "
        "them. The floor is the threshold (steps of 0.01) where the share of within-group pairs above it minus the "
        "share of across-group pairs above it is highest.",
        "",
        "| model | pairs: versions / repeats / other facts | versions: min / median | repeats: min / median | other "
        "facts: median / 99th pct / max | chosen floor | documented floor | above it: versions / repeats / other "
        "facts | write's check: names one of its group / other facts named |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for result in results:
        kinds, floor = result.kinds(), result.floor()
        versions, repeats, other = kinds["version"], kinds["repeat"], kinds["other"]
        found, noise = result.write_check(result.documented)
        lines.append(
            f"| {result.model} | {len(versions)} / {len(repeats)} / {len(other)} "
            f"| {min(versions):.3f} / {statistics.median(versions):.3f} "
            f"| {min(repeats):.3f} / {statistics.median(repeats):.3f} "
            f"| {statistics.median(other):.3f} / {_quantile(other, 0.99):.3f} / {max(other):.3f} "
            f"| {floor:.2f} | {result.documented:.2f} "
            f"| {_above(versions, result.documented):.0%} / {_above(repeats, result.documented):.0%} / "
            f"{_above(other, result.documented):.1%} "
            f"| {found:.0%} / {noise:.2f} |"
        )
    lines += [
        "",
        "The write's check: for each memory of the set, the up to 3 others most similar above the documented floor, as "
        "create_memory's answer names them; the share of memories for which one of them is of its own group, and how "
        "many of another group it names on average. Amazon Bedrock's models are not measured (no AWS here): their "
        "floor is a stated, conservative one (adapters/bedrock.py), to be measured with this script against Bedrock.",
        "",
    ]
    return "\n".join(lines)


def models() -> list[Embedder]:
    """The stand-in, and the offline model `serve` runs when its package is installed."""
    from adapters.offline import offline_embedder

    offline = offline_embedder()
    return [StandInEmbedder()] + ([offline] if offline.model != StandInEmbedder.model else [])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m recall_eval.related", description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write the report to {REPORT.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    entries = load()
    text = report([measure(model, entries) for model in models()])
    print(text)
    if args.write:
        REPORT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
