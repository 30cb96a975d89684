"""`make eval`: every question of eval/recall asked of the recall service (offline model, in-memory store), for the
lexical part alone, the semantic part alone and the blend of the deployment's default settings, and the last two again
with the model's float vectors in place of the int8 ones recall stores (what the quantisation costs); the report goes
to eval/recall/REPORT.md. Exit status 1 when the blend does not beat both parts on either half of the set.

    python -m recall_eval [--report PATH] [--tune]

`--tune` searches the weights, half-lives and the model's floor on the development half only, and prints the best.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from adapters.offline import offline_embedder
from core.recall.ranking import PARTS, Part, RankingSettings
from recall_eval.dataset import Namespace, Question, load
from recall_eval.metrics import ndcg_at, recall_at
from recall_eval.report import Quantisation, render

ROOT = Path(__file__).resolve().parents[2]
SET = ROOT / "eval" / "recall"
Scores = dict[str, float]
Answers = list[tuple[Question, list[str]]]


def only(part: Part) -> RankingSettings:
    return RankingSettings(weights={name: 1.0 if name == part else 0.0 for name in PARTS})


def asked(
    namespaces: Sequence[Namespace], settings: RankingSettings, floor: float | None = None, *, exact: bool = False
) -> Answers:
    """Every question of `namespaces` with the refs of its first 10 memories (`exact`: ranked with float vectors)."""
    return [answer for namespace in namespaces for answer in namespace.ask(settings, floor, exact=exact)]


def measure(answers: Answers) -> dict[str, Scores]:
    """recall@5, recall@10 and nDCG@10 averaged over the questions, for all of them and per kind."""
    sums: dict[str, list[float]] = {}
    for question, ranked in answers:
        row = [
            recall_at(ranked, question.relevant, 5),
            recall_at(ranked, question.relevant, 10),
            ndcg_at(ranked, question.relevant),
        ]
        for key in ("all", question.kind):
            totals = sums.setdefault(key, [0.0, 0.0, 0.0, 0.0])
            totals[:3] = [total + value for total, value in zip(totals, row, strict=False)]
            totals[3] += 1
    return {
        key: {"recall@5": s[0] / s[3], "recall@10": s[1] / s[3], "ndcg@10": s[2] / s[3], "n": s[3]}
        for key, s in sums.items()
    }


def quantisation(namespaces: Sequence[Namespace], settings: RankingSettings) -> Quantisation:
    """The measures with the int8 vectors and with the float ones, and how many questions' first 10 differ."""
    stored, exact = asked(namespaces, settings), asked(namespaces, settings, exact=True)
    changed = sum(1 for (_, int8), (_, floats) in zip(stored, exact, strict=True) if int8 != floats)
    return Quantisation(measure(stored)["all"], measure(exact)["all"], changed, len(stored))


def tune(namespaces: Sequence[Namespace]) -> None:
    """Every combination of the grid on the development half, best first by the smallest gain over the semantic part
    alone across recall@5, recall@10 and nDCG@10 (the blend must beat it on each)."""
    development = [namespace for namespace in namespaces if namespace.split == "dev"]
    baseline = measure(asked(development, only("semantic")))["all"]
    results = []
    for floor, lexical, recency, use, half_life in itertools.product(
        (0.72, 0.75, 0.78), (0.04, 0.07, 0.1, 0.13), (0.0, 0.02, 0.04), (0.02, 0.04, 0.06), (180.0, 365.0)
    ):
        weights: dict[Part, float] = {
            "lexical": lexical,
            "semantic": round(1 - lexical - recency - use, 6),
            "recency": recency,
            "use": use,
            "type": 0.0,
        }
        settings = RankingSettings(weights=weights, recency_half_life_days=half_life)
        scores = measure(asked(development, settings, floor))["all"]
        gain = min(scores[name] - baseline[name] for name in ("recall@5", "recall@10", "ndcg@10"))
        results.append((round(gain, 4), {k: round(v, 4) for k, v in scores.items()}, floor, half_life, weights))
    results.sort(key=lambda row: row[0], reverse=True)
    print("semantic only:", baseline)
    for row in results[:15]:
        print(row)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="recall_eval")
    parser.add_argument("--report", type=Path, default=SET / "REPORT.md")
    parser.add_argument("--tune", action="store_true")
    args = parser.parse_args(argv)
    embedder = offline_embedder()
    started = time.perf_counter()
    namespaces = load(SET, embedder)
    print(
        f"embedded {sum(len(n.memories) for n in namespaces)} memories with {embedder.model} in "
        f"{time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    if args.tune:
        tune(namespaces)
        return 0
    variants = {
        "lexical only": only("lexical"),
        "semantic only": only("semantic"),
        "blend (defaults)": RankingSettings(),
    }
    halves = {split: [n for n in namespaces if n.split == split] for split in ("dev", "test")}
    results = {
        split: {name: measure(asked(part, settings)) for name, settings in variants.items()}
        for split, part in halves.items()
    }
    # Only the parts that compare vectors: the lexical part reads none.
    quantised = (
        {
            split: {name: quantisation(part, variants[name]) for name in ("semantic only", "blend (defaults)")}
            for split, part in halves.items()
        }
        if all(namespace.embedder.unquantised for namespace in namespaces)
        else None
    )
    args.report.write_text(render(results, namespaces, embedder.model, RankingSettings(), quantised))
    print(f"wrote {args.report}", file=sys.stderr)
    beaten = all(
        results[split]["blend (defaults)"]["all"][measure_name] > results[split][other]["all"][measure_name]
        for split in results
        for other in ("lexical only", "semantic only")
        for measure_name in ("recall@5", "recall@10", "ndcg@10")
    )
    verdict = "beats both parts on every measure" if beaten else "DOES NOT BEAT both parts on every measure"
    print(f"the blend {verdict}, on both halves", file=sys.stderr)
    return 0 if beaten else 1


if __name__ == "__main__":
    sys.exit(main())
