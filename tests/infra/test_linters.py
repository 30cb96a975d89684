"""template.yaml passes cfn-lint (errors, warnings and informational rules) and `sam validate --lint`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cfnlint.api import ManualArgs, lint_file  # type: ignore[import-untyped]

from local.template import TEMPLATE

SAM = Path(__file__).resolve().parents[2] / ".tools" / "sam" / "bin" / "sam"


def test_cfn_lint_reports_nothing_on_the_template_including_informational_rules():
    matches = lint_file(TEMPLATE, config=ManualArgs(include_checks=["I"]))
    assert [str(match) for match in matches] == []


def test_sam_validate_lint_accepts_the_template():
    if not SAM.exists():
        reason = f"the SAM CLI is not installed at {SAM}; `make sam` (or `make test`) installs it"
        if os.environ.get("CI"):
            pytest.fail(f"the SAM CLI is required in CI: {reason}")
        pytest.skip(reason)
    result = subprocess.run(
        [str(SAM), "validate", "--lint", "--template", str(TEMPLATE), "--region", "us-east-1"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "SAM_CLI_TELEMETRY": "0"},
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "is a valid SAM Template" in result.stdout
