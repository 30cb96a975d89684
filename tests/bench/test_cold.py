"""The bench's cold-start check beside its timings: instruction counts read from cachegrind (none without valgrind,
an error when it counted nothing), and the floors and counts reported, never judged, while the target is judged on
the timed ratio alone."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bench import cold
from bench.targets import targets

CACHEGRIND = "==1== Collected : 1,234,567\n==1== \n==1== I   refs:      2,537,859,577\n"


def _finished(stderr: str) -> Any:
    def run(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(args[0], 0, stdout="", stderr=stderr)

    return run


def test_the_instructions_are_read_from_cachegrinds_summary(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(subprocess, "run", _finished(CACHEGRIND))

    assert cold.count_instructions(Path("python"), "pass", {}) == 2_537_859_577


def test_a_cachegrind_run_that_counted_nothing_is_an_error_not_a_zero(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(subprocess, "run", _finished("valgrind: no such tool\n"))

    with pytest.raises(RuntimeError, match="counted nothing"):
        cold.count_instructions(Path("python"), "pass", {})


def test_without_valgrind_no_instructions_are_counted(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)

    assert cold.instructions({"pass": (Path("python"), "pass")}, {}) is None


def test_instructions_are_net_of_pass_and_a_ratio_to_boto3s(monkeypatch: pytest.MonkeyPatch):
    counts = {"pass": 50, "import boto3": 250, "import door": 850}
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/valgrind")
    monkeypatch.setattr(cold, "count_instructions", lambda python, code, env: counts[code])
    cases = {case: (Path("python"), code) for case, code in (("pass", "pass"), ("boto3", "import boto3"))}
    cases["http"] = (Path("python"), "import door")

    counted = cold.instructions(cases, {})

    assert counted == {"boto3": {"net": 200, "ratio_to_boto3": 1.0}, "http": {"net": 800, "ratio_to_boto3": 4.0}}


def _door(ratio: float, floor: float) -> dict[str, Any]:
    return {"net_ms": ratio * 200, "ratio_to_boto3": ratio, "floor": {"net_ms": floor * 200, "ratio_to_boto3": floor}}


def test_the_door_is_judged_on_its_timed_ratio_and_its_floor_and_instructions_are_only_reported():
    counted = {"http": {"ratio_to_boto3": 3.04}, "http_floor": {"ratio_to_boto3": 2.71}}
    counted |= {"mcp": {"ratio_to_boto3": 4.45}, "mcp_floor": {"ratio_to_boto3": 4.06}}
    result = {"cold": {"rounds": 15, "http": _door(2.4, 2.63), "mcp": _door(4.3, 3.91), "instructions": counted}}

    found = {target["name"]: (target["measured"], target["verdict"]) for target in targets(result)}

    assert found["cold start: http"] == ("2.40x", "PASS")
    assert found["cold start: mcp"] == ("4.30x", "MISS")
    assert found["cold start: http, instructions"] == ("3.04x", "n/a")
    assert found["cold start floor: http"] == ("2.63x (2.71x in instructions)", "n/a")
    assert found["cold start floor: mcp"] == ("3.91x (4.06x in instructions)", "n/a")
