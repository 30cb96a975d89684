"""What the pages say of the repository itself holds: docs/development.md lists every `make` target the Makefile
documents, the npm test peers' package.json files name test files that exist, and no page points at marks that no
part of it carries (issue 42, item 9)."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def documented_targets() -> list[str]:
    """The targets `make help` lists: those whose rule line carries a `## ` help text."""
    return re.findall(r"^([a-z-]+):.*## ", (ROOT / "Makefile").read_text(), re.MULTILINE)


def tabled_targets() -> set[str]:
    """The targets named in the first column of docs/development.md's table of make targets."""
    section = (DOCS / "development.md").read_text().split("## The make targets", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `make ")]
    return {name for row in rows for name in re.findall(r"`make ([a-z-]+)", row)}


def test_the_development_page_lists_every_make_target_that_make_help_lists() -> None:
    targets = documented_targets()

    assert {"serve", "test", "eval", "python"} <= set(targets)
    assert sorted(set(targets) - tabled_targets()) == []
    assert sorted(tabled_targets() - set(targets)) == []


def test_every_test_path_an_npm_package_json_names_exists() -> None:
    manifests = sorted((ROOT / "tests").glob("*/package.json"))
    named = [
        (manifest.relative_to(ROOT), path)
        for manifest in manifests
        for path in re.findall(r"tests/[\w/.-]+\.py", json.loads(manifest.read_text()).get("description", ""))
    ]

    assert len(manifests) >= 4
    assert named, "no package.json names the tests that use it"
    assert [f"{manifest} -> {path}" for manifest, path in named if not (ROOT / path).is_file()] == []


def test_no_page_says_parts_are_marked_planned_unless_some_part_is() -> None:
    for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        text = page.read_text()
        if re.search(r"marked \*\*planned\*\*", text):
            marks = re.findall(r"\*\*planned\*\*", text)
            assert len(marks) > 1, f"{page.name} says parts are marked planned and marks none"
