"""Every figure about cost, units, latency, sizes, growth or cold start in the README and docs/ says where it comes
from and is checked against it (docs/performance.md aside: it is rendered from the run, test_performance_page.py).
The figure is followed by a marker, which the rendered page does not show:

- `65 ms<!-- perf: growth.p50_ms_per_1000 -->`: a path into the recorded bench run, docs/performance.json, where
  `growth` is recall's growth as the performance page computes it (bench.recall.growth);
- `$0.625<!-- code: bench.pricing.WRU_PER_M -->`: a constant of the code, a module then its attributes or keys.

A marker may do arithmetic on its names and numbers, each spaced out (`perf: cold.http.net_ms / 1000`). The figure
must be the value written to the precision it is written with: to its decimals, or, for a whole number ending in
zeros, to its last non-zero digit (`about 14,000` holds for 13,500 to 14,500). A figure of those kinds without a
marker must be on ALLOWED, which says why neither the bench nor the code holds it."""

from __future__ import annotations

import ast
import importlib
import json
import operator
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from bench.recall import growth

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *(page for page in sorted((ROOT / "docs").glob("*.md")) if page.name != "performance.md")]
RUN = json.loads((ROOT / "docs" / "performance.json").read_text())

# The pages write a range with an en dash and a ratio with an x or a multiplication sign.
EN_DASH, TIMES = "\u2013", "\u00d7"
NUMBER = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
MARKER = re.compile(r"<!-- (perf|code): ([^>]*?) -->")
# What a marker follows: a number, at most its unit (one or two words) between them.
MARKED = re.compile(rf"(?<![\d.,])({NUMBER})(?: ?[A-Za-zµ{TIMES}%]+(?:[ -][A-Za-z]+)?)?$")
# A figure of a performance kind: dollars, or a number (or a range) in time, bytes, DynamoDB units or a ratio. A bare
# `s` needs its space, so that "the 1990s" is no figure.
UNIT = rf"(?: s| ?(?:ms|µs|MB|MiB|KB|KiB|GB-s|GB|GiB|bytes|RCU|WCU|RRU|WRU|(?:read |write )?units|x|{TIMES}))"
FIGURE = re.compile(rf"\${NUMBER}|(?<![\w.,$]){NUMBER}(?:[{EN_DASH}-]{NUMBER})?{UNIT}(?![\w-])")

# Figures of those kinds that are neither measured by the bench nor held by the code, each with why. An entry must
# cover at least one figure (test_every_allowed_figure_is_still_on_a_page), so none outlives its text.
ALLOWED: list[tuple[str, str]] = [
    (
        rf"\| 12\.4{EN_DASH}12\.8 s \||\| 34\.0 s \||\| 55\.2 s \||the offline model's 87 MiB wheel the largest, and "
        r"DynamoDB Local's 49 MB npm package|about 235 MB into `\.venv` and 60 MB into `node_modules`",
        "the README's first `make serve`: dated measurements of fresh clones, each with its conditions (caches, the "
        "machine's load) beside it, and what they download and install",
    ),
    (
        r"351 s of pytest from a fresh clone on 6 December 2026 at 21:47 UTC, uv and npm caches warm, and 399 s",
        "`make test` on a clean clone: one dated measurement",
    ),
    (r"5 s or more on two cores", "the rule for marking a test slow, not a measurement"),
    (
        r"one 1 MB page|under 1 KB, 2 write units|API Gateway's 30 s",
        "DynamoDB's and API Gateway's own limits and unit rules, as AWS documents them",
    ),
    (r"\$\d[\d.]* per GB(?:-month|-s)?|400,000 GB-s", "AWS's published prices and free tier, as AWS lists them"),
    (r"2 s/5 s timeouts|2 s connect / 5 s read", "the DynamoDB client's timeouts (make_client's defaults)"),
    (r"256 MB heap", "DynamoDB Local's JVM option (local.serve.ENGINE_HEAP, a string: `256m`)"),
    (r"a 1 MiB string", "an input the event fuzz test sends, not a figure of the service"),
    (r"under 60 KB gzipped", "the console's script budget, which tests/handlers/console/test_console_route.py holds"),
]

OPERATORS: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def in_run(path: str) -> Any:
    """A path into the recorded run (`cost.10000.list.http.total`), or into recall's growth (`growth.digest_bytes`)."""
    found: Any = {**RUN, "growth": growth(RUN)}
    for part in path.split("."):
        found = found[part]
    return found


def in_code(name: str) -> Any:
    """A module's constant (`core.limits.CONTENT_MAX_CHARS`), or an attribute or key of one
    (`artifacts.BUDGET_MB.HttpFunction`)."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            found: Any = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for part in parts[cut:]:
            found = found[part] if isinstance(found, Mapping) else getattr(found, part)
        if isinstance(found, ModuleType):
            break
        return found
    raise LookupError(f"{name} names no constant of an importable module")


SOURCES: dict[str, Callable[[str], Any]] = {"perf": in_run, "code": in_code}


def calculated(node: ast.expr) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        return OPERATORS[type(node.op)](calculated(node.left), calculated(node.right))
    raise ValueError(f"a marker does only + - * / on names and numbers, not {ast.unparse(node)}")


def evaluate(expression: str, resolve: Callable[[str], Any]) -> float:
    """A marker's value: each name resolved, then the arithmetic done (operators spaced out, so names may hold `+`)."""
    spelled = [
        token if re.fullmatch(r"[-+*/()]|\d+(?:\.\d+)?", token) else repr(float(resolve(token)))
        for token in expression.split()
    ]
    return calculated(ast.parse(" ".join(spelled), mode="eval").body)


def to_precision_of(value: float, written: str) -> str:
    """`value` spelled with the precision of `written` (commas dropped): its decimals, or its trailing zeros."""
    digits = written.replace(",", "")
    if "." in digits:
        return f"{value:.{len(digits.split('.')[1])}f}"
    zeros = len(digits) - len(digits.rstrip("0")) if digits.strip("0") else 0
    return f"{round(value, -zeros):.0f}"


def line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def mismatches(text: str, where: str = "page") -> list[str]:
    """Each marker whose figure is missing, or is not its source's value at the figure's precision."""
    wrong = []
    for marker in MARKER.finditer(text):
        source, expression = marker.groups()
        at = f"{where}:{line_of(text, marker.start())}"
        figure = MARKED.search(text, max(0, marker.start() - 60), marker.start())
        if figure is None:
            wrong.append(f"{at}: no figure right before <!-- {source}: {expression} -->")
            continue
        written = figure.group(1)
        try:
            value = evaluate(expression, SOURCES[source])
        except (LookupError, AttributeError, TypeError, ValueError, SyntaxError) as exc:
            wrong.append(f"{at}: {written} <!-- {source}: {expression} --> does not resolve: {exc!r}")
            continue
        if to_precision_of(value, written) != written.replace(",", ""):
            wrong.append(f"{at}: {written} where {source} {expression} is {value:g}")
    return wrong


def allowed(pattern: str, text: str) -> list[tuple[int, int]]:
    """Where an ALLOWED pattern is on a page, a space in it standing for any run of spaces or line breaks."""
    return [match.span() for match in re.finditer(pattern.replace(" ", r"\s+"), text)]


def unmarked(text: str, where: str = "page") -> list[str]:
    """Each figure of a performance kind with no marker after it and no ALLOWED entry covering it."""
    spans = [span for pattern, _ in ALLOWED for span in allowed(pattern, text)]
    return [
        f"{where}:{line_of(text, figure.start())}: {figure.group(0)!r}"
        for figure in FIGURE.finditer(text)
        if not MARKER.match(text, figure.end())
        and not any(start <= figure.start() and figure.end() <= end for start, end in spans)
    ]


def test_every_marked_figure_is_its_sources_value_to_the_precision_written() -> None:
    # On a mismatch after `make perf-doc`: the run moved; write its figure (the message says it) beside the marker.
    wrong = [found for page in PAGES for found in mismatches(page.read_text(), str(page.relative_to(ROOT)))]
    assert wrong == []


def test_every_figure_of_a_performance_kind_is_marked_or_allowed() -> None:
    # A figure the bench measures gets a `perf:` marker, a bound or price of the code a `code:` one; anything else
    # is cut for a link to docs/performance.md, or (rarely, with its reason) goes on ALLOWED.
    found = [figure for page in PAGES for figure in unmarked(page.read_text(), str(page.relative_to(ROOT)))]
    assert found == []


def test_every_allowed_figure_is_still_on_a_page() -> None:
    texts = [page.read_text() for page in PAGES]
    stale = [
        pattern
        for pattern, _ in ALLOWED
        if not any(FIGURE.search(text, *span) for text in texts for span in allowed(pattern, text))
    ]
    assert stale == []


def test_the_pages_mark_the_recall_growth_and_the_prices_the_bench_uses() -> None:
    # The figures issue #39 found drifted are held by markers now, not by prose.
    readme = (ROOT / "README.md").read_text()
    operations = (ROOT / "docs" / "operations.md").read_text()
    assert "<!-- perf: growth.p50_ms_per_1000 -->" in readme
    assert "<!-- perf: growth.n_at_p50_limit -->" in readme
    assert "<!-- code: bench.pricing.WRU_PER_M -->" in operations
    assert "<!-- perf: cost.10000.list.http.total -->" in operations


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("grows 81 ms<!-- perf: growth.p50_ms_per_1000 --> a step", "81 where perf growth.p50_ms_per_1000 is 53.4"),
        ("at about 23,000<!-- perf: growth.n_at_p50_limit --> memories", "23,000 where perf"),
        ("$0.60<!-- code: bench.pricing.WRU_PER_M --> per 1M", "0.60 where code bench.pricing.WRU_PER_M is 0.625"),
        ("costs <!-- code: bench.pricing.WRU_PER_M --> each", "no figure right before"),
        ("a 3 WCU<!-- perf: ops.nowhere --> stamp", "does not resolve"),
        ("1 s<!-- perf: growth.p50_limit_ms ** 2 -->", "does not resolve"),
    ],
)
def test_a_figure_that_drifted_from_its_source_is_reported(text: str, problem: str) -> None:
    assert len(found := mismatches(text)) == 1
    assert problem in found[0]


@pytest.mark.parametrize(
    "text",
    [
        "grows 53 ms<!-- perf: growth.p50_ms_per_1000 --> a step",
        "about 20,000<!-- perf: growth.n_at_p50_limit --> memories",
        "about 19,060<!-- perf: growth.n_at_p50_limit --> memories",
        "passes 1 s<!-- perf: growth.p50_limit_ms / 1000 -->",
        "$0.625<!-- code: bench.pricing.WRU_PER_M --> per 1M, $1.25<!-- code: 2 * bench.pricing.WRU_PER_M --> a change",
        "1 to 8,192<!-- code: core.limits.CONTENT_MAX_CHARS --> characters",
        "HTTP 24 MB<!-- code: artifacts.BUDGET_MB.HttpFunction -->",
    ],
)
def test_a_figure_written_to_its_sources_precision_holds(text: str) -> None:
    assert mismatches(text) == []


def test_a_figure_of_a_performance_kind_needs_a_marker_or_a_reason() -> None:
    text = (
        "It takes 41 ms, $9.60 and 2.3x; 65 ms<!-- perf: growth.p50_ms_per_1000 -->; 5 s or more on two cores; 1990s."
    )
    assert [found.split(": ", 1)[1] for found in unmarked(text)] == ["'41 ms'", "'$9.60'", "'2.3x'"]
