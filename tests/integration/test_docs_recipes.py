"""The curl recipes of the README and of docs/http-api.md run as written, saved as a script (no alias), against
`serve` with a key of a fresh namespace (the docs' "fresh serve"), and every output the docs show after a command is
what that command printed: its status line, the headers shown, and every string, integer or literal a shown JSON
body holds (timestamps, key ids and scores aside: they differ on every run; `...` stands for what is left out)."""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.browser.console_scene import keys_create
from tests.conftest import serve_env

ROOT = Path(__file__).resolve().parents[2]
MARK = "@@@ agent-memory recipe step @@@"
# "key":value pairs a shown body holds: strings, integers and literals (a float is a score: left out).
PAIR = re.compile(r'"([a-z_]+)":("(?:[^"\\]|\\.)*"|-?\d+|null|true|false)(?=[,}\]])')
TIMESTAMP = re.compile(r'^"\d{4}-\d\d-\d\dT')
STATUS = re.compile(r"HTTP/1\.1 (\d{3})")
HEADER = re.compile(r"^([a-z][a-z-]*): (\S.*)$")
RUN_APART = ("key_id",)  # a key's id is random: the docs show one


@dataclass
class Step:
    command: str
    shown: list[str]


def recipe(page: Path, first_line: str) -> list[Step]:
    """The bash block of `page` that starts with `first_line`: its commands (continuation lines joined), each with the
    comment lines printed right under it (its shown output; a comment after a blank line describes the next one)."""
    blocks = re.findall(r"```bash\n(.*?)```", page.read_text(), flags=re.DOTALL)
    (block,) = [block for block in blocks if block.startswith(first_line)]
    steps: list[Step] = []
    pending: list[str] = []
    after_command = False
    for line in block.splitlines():
        if not line.strip():
            after_command = False
        elif line.startswith("#"):
            if after_command:
                steps[-1].shown.append(line.removeprefix("#").strip())
        else:
            pending.append(line)
            if not line.endswith("\\"):
                steps.append(Step("\n".join(pending), []))
                pending, after_command = [], True
    return steps


def run_recipe(steps: list[Step], base: str, key: str) -> list[str]:
    """Every step's output, the recipe run by bash as one script with the docs' address and key in place."""
    lines = []
    for step in steps:
        command = step.command.replace("http://127.0.0.1:8787", base)
        command = re.sub(r"^KEY=am_\.\.\..*$", f"KEY={key}", command, flags=re.MULTILINE)
        lines += [command, f"printf '\\n%s\\n' '{MARK}'"]
    done = subprocess.run(
        ["bash", "-c", "\n".join(lines)], env=serve_env(), capture_output=True, text=True, timeout=120, check=True
    )
    outputs = done.stdout.split(f"\n{MARK}\n")
    assert len(outputs) == len(steps) + 1, done.stdout
    return outputs[:-1]


def compact(output: str) -> str:
    """The output with each JSON body written as the docs show bodies (no spaces), headers as they came."""
    lines = []
    for line in output.splitlines():
        try:
            lines.append(json.dumps(json.loads(line), separators=(",", ":"), ensure_ascii=False))
        except ValueError:
            lines.append(line.strip())
    return "\n".join(lines)


def differences(step: Step, output: str) -> list[str]:
    """What the docs show after `step` that its output does not hold."""
    shown, printed = " ".join(step.shown), compact(output)
    missing = []
    for status in STATUS.findall(shown):
        if f"HTTP/1.1 {status}" not in printed:
            missing.append(f"status {status}")
    headers = {name.lower(): value.strip() for name, value in re.findall(r"^([A-Za-z-]+): (.*)$", printed, re.M)}
    for line in step.shown:
        header = HEADER.match(line)
        if header and headers.get(header.group(1)) != header.group(2).strip():
            missing.append(f"header {line}")
    for name, value in PAIR.findall(shown):
        if name not in RUN_APART and not TIMESTAMP.match(value) and f'"{name}":{value}' not in printed:
            missing.append(f'"{name}":{value}')
    return missing


@pytest.mark.parametrize(
    ("page", "first_line"),
    [("README.md", "API=http://127.0.0.1:8787"), ("docs/http-api.md", "API=http://127.0.0.1:8787")],
)
def test_the_curl_recipes_print_what_the_docs_show(
    shared_serve_engine: tuple[str, str, int], page: str, first_line: str
) -> None:
    base, _, ddb_port = shared_serve_engine
    steps = recipe(ROOT / page, first_line)
    assert sum(step.command.startswith("curl") for step in steps) >= 3
    assert sum(bool(step.shown) for step in steps) >= 3  # the docs show outputs, and they are checked
    key = keys_create(ddb_port, f"recipe-{uuid.uuid4().hex[:12]}", "read,write", "docs recipe")

    outputs = run_recipe(steps, base, key)

    assert {step.command.splitlines()[0]: differences(step, out) for step, out in zip(steps, outputs, strict=True)} == {
        step.command.splitlines()[0]: [] for step in steps
    }


def test_a_shown_output_that_differs_is_found() -> None:
    step = Step("curl ...", ["HTTP/1.1 412 Precondition Failed", 'etag: "2"', '{"id":1,"status":"invalid","x":"y"}'])
    printed = 'HTTP/1.1 412 Precondition Failed\r\netag: "3"\r\n\r\n{"id": 1, "status": "active", "x": "y"}'

    assert differences(step, printed) == ['header etag: "2"', '"status":"invalid"']
