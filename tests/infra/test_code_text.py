"""What the code says about itself stays true: the DynamoDB adapter's module index (its docstring, and the list in
docs/architecture.md) names every module of the package, and every `type: ignore` of src/ and scripts/ says why
after its code."""

from __future__ import annotations

import re
from pathlib import Path

import adapters.dynamodb

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = ROOT / "src" / "adapters" / "dynamodb"
MODULES = sorted(path.stem for path in ADAPTER.glob("*.py") if path.stem != "__init__")


def unnamed(text: str) -> list[str]:
    return [module for module in MODULES if f"`{module}`" not in text]


def test_the_adapters_docstring_names_every_module_of_the_package() -> None:
    assert "memories" in MODULES  # the adapter's folder is where this looks
    assert unnamed(adapters.dynamodb.__doc__ or "") == []


def test_the_architecture_page_names_every_module_of_the_adapter() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text()
    bullet = re.search(r"^- `dynamodb/`.*?(?=^- |^## )", page, re.MULTILINE | re.DOTALL)
    assert bullet is not None
    assert unnamed(bullet.group(0)) == []


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
