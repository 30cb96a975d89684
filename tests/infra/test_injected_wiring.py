"""The composition root (handlers.bootstrap) is called, never patched: tests and scripts build their doors through it
with parts of their own (tests/conftest.py lambda_functions), and a process that must run a real entrypoint is given
the environment the root reads. A patched root tests a wiring no function runs, and a cache cleared between tests
hides one that is built twice."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import SERVE_ROOT

# Setting, deleting or replacing a name of the root (monkeypatch's string form included, and inside the code a test
# hands a fresh interpreter), or clearing a cache of one of its functions.
PATCHES = re.compile(
    r"(?:set|del)attr\(\s*(?:bootstrap\b|[\"']handlers\.bootstrap)"
    r"|\bbootstrap\.\w+\s*=(?!=)"
    r"|\bbootstrap\.\w+\.cache_clear\("
)


def patches_of_the_root() -> list[str]:
    found = []
    for folder in ("tests", "scripts"):
        for path in sorted((SERVE_ROOT / folder).rglob("*.py")):
            if path == Path(__file__):
                continue  # its own examples of what the check finds
            text = path.read_text(encoding="utf-8")
            for match in PATCHES.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path.relative_to(SERVE_ROOT)}:{line}: {match.group(0)}")
    return found


def test_no_test_or_script_patches_or_clears_the_composition_root() -> None:
    assert patches_of_the_root() == []


def test_the_check_finds_each_way_of_patching_the_root() -> None:
    for patch in (
        "monkeypatch.setattr(bootstrap, 'bedrock_embedder', stand_in)",
        'monkeypatch.setattr("handlers.bootstrap.KeyService", factory)',
        "setattr(bootstrap, 'from_environment', lambda: services)",
        "bootstrap.from_environment = lambda: services",
        "bootstrap.default_services.cache_clear()",
    ):
        assert PATCHES.search(patch), patch
    assert not PATCHES.search("services = bootstrap.from_environment()")
    assert not PATCHES.search("assert bootstrap.VERSION == version")
