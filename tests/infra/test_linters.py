"""template.yaml passes cfn-lint (errors, warnings and informational rules) and `sam validate --lint`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cfnlint.api import ManualArgs, lint_file  # type: ignore[import-untyped]

from local.template import TEMPLATE

SAM = Path(__file__).resolve().parents[2] / ".tools" / "sam" / "bin" / "sam"


SNAPSTART_DEFAULT = "    Default: None\n    AllowedValues: [PublishedVersions, None]\n"


def _with_snapstart(default: str, directory: Path) -> Path:
    """A copy of the template whose SnapStart parameter defaults to `default` (cfn-lint resolves a Ref to a
    parameter's default, so each setting is linted in its own copy)."""
    text = TEMPLATE.read_text(encoding="utf-8")
    assert text.count(SNAPSTART_DEFAULT) == 1
    copy = directory / f"template-snapstart-{default}.yaml"
    copy.write_text(text.replace(SNAPSTART_DEFAULT, SNAPSTART_DEFAULT.replace("None", default, 1)), encoding="utf-8")
    return copy


@pytest.mark.parametrize("snapstart", ["None", "PublishedVersions"])
def test_cfn_lint_reports_nothing_on_the_template_including_informational_rules(snapstart: str, tmp_path: Path):
    matches = lint_file(_with_snapstart(snapstart, tmp_path), config=ManualArgs(include_checks=["I"]))
    assert [str(match) for match in matches] == []


def test_cfn_lint_would_catch_snapstart_on_a_function_without_published_versions(tmp_path: Path):
    copy = _with_snapstart("PublishedVersions", tmp_path)
    copy.write_text(copy.read_text(encoding="utf-8").replace("      AutoPublishAlias: live\n", "", 1), encoding="utf-8")
    matches = [str(match) for match in lint_file(copy, config=ManualArgs(include_checks=["I"]))]
    assert any("'SnapStart' is enabled but 'AutoPublishAlias' is not configured" in match for match in matches)


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
