"""What a new user copies from the README works from a fresh clone: its links stay inside the repository, and its
commands name the CLI where `make install` puts it (`.venv/bin/agent-memory`, or `make keys`)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def test_every_relative_link_of_the_readme_is_a_file_of_the_repository() -> None:
    links = [target for target in re.findall(r"\]\(([^)#\s]+)", README) if "://" not in target]
    assert "docs/contract.md" in links
    for target in links:
        path = (ROOT / target).resolve()
        assert path.is_relative_to(ROOT), target
        assert path.exists(), target


def test_the_readme_runs_the_cli_by_its_path_in_the_venv() -> None:
    # A bare `agent-memory keys ...` is "command not found": the venv's bin is not on PATH.
    bare = re.findall(r"(?<![/\w-])agent-memory (?:keys|serve|namespace|export|import|migrate) [-\w]", README)
    assert bare == []
    assert ".venv/bin/agent-memory keys create" in README


def test_make_keys_runs_the_cli_with_args() -> None:
    dry = subprocess.run(
        ["make", "--no-print-directory", "-n", "keys", "ARGS=list --namespace alice"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert dry.stdout.splitlines()[-1] == ".venv/bin/agent-memory keys list --namespace alice"
