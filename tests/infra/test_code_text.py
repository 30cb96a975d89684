"""What the code says about itself stays true: the DynamoDB adapter's module index (its docstring, and the list in
docs/architecture.md) names every module of the package, `agent-memory migrate --help` names every job migrate
does, and every `type: ignore` of src/ and scripts/ says why after its code."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

import adapters.dynamodb
from adapters.dynamodb import Migrated
from local import cli

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = ROOT / "src" / "core" / "repository" / "dynamodb"
MODULES = sorted(path.stem for path in ADAPTER.glob("*.py") if path.stem != "__init__")

# Each count migrate reports, by the job it counts (what `migrate --help` must name), or as that job's
# run-again count.
JOBS = {
    "copied": "tag copies",
    "searchable": "search copy",
    "accessed": "access item",
    "digested": "recall digest",
    "dated": "deletion time",
    "namespaces": "marks each namespace",
}
RUN_AGAIN = {"skipped", "unsearchable", "unaccessed", "undigested"}


def unnamed(text: str) -> list[str]:
    return [module for module in MODULES if f"`{module}`" not in text]


def test_the_adapters_docstring_names_every_module_of_the_package() -> None:
    assert unnamed(adapters.dynamodb.__doc__ or "") == []


def test_the_architecture_page_names_every_module_of_the_adapter() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text()
    bullet = re.search(r"^- `repository/`.*?(?=^- |^## )", page, re.MULTILINE | re.DOTALL)
    assert bullet is not None
    assert unnamed(bullet.group(0)) == []


def test_migrate_help_names_every_job_migrate_does(capsys: pytest.CaptureFixture[str]) -> None:
    # A new count in Migrated is a new job (or its run-again count): name it here and in the help.
    assert {field.name for field in dataclasses.fields(Migrated)} == set(JOBS) | RUN_AGAIN
    with pytest.raises(SystemExit):
        cli.main(["migrate", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert [job for job in JOBS.values() if job not in shown] == []


def test_every_type_ignore_in_src_and_scripts_gives_its_code_and_a_reason() -> None:
    reasonless = re.compile(r"# type: ignore(?!\[[\w,-]+\]  # \S)")
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("src", "scripts")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if reasonless.search(line)
    ]
    assert found == []
