"""Pydantic models and the MCP SDK's type adapters built on first use in the door functions (handlers.aws.models),
each in a fresh interpreter, since what the module changes is process-wide: a model made while builds are deferred
is not built until first used, then validates and dumps as one built when made; resuming restores pydantic's
default. These fail if a later pydantic drops the default the module turns on (the models would then be built at
import again). That the entrypoints defer what they import and their SnapStart warm-up builds it all is
tests/handlers/aws/test_snapstart.py's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from tests.conftest import SERVE_ROOT

SRC = SERVE_ROOT / "src"

MODELS_PROBE = """
import json
import handlers.aws.models as models
from pydantic import BaseModel, TypeAdapter
from pydantic_core import ValidationError

class Deferred(BaseModel):
    name: str
    count: int = 0

adapter_outside = TypeAdapter(list[int])
with models.adapters_deferred():
    adapter_inside = TypeAdapter(dict[str, Deferred])

class Unresolved(BaseModel):
    later: "NotDefinedAnywhere"

report = {
    "deferred_at_first": not Deferred.__pydantic_complete__,
    "adapter_outside_built": adapter_outside.pydantic_complete,
    "adapter_inside_deferred": not adapter_inside.pydantic_complete,
    "listed": sorted(model.__name__ for model in models.deferred()[0] if model.__module__ == "__main__"),
    "adapters_listed": len(models.deferred()[1]),
}
try:
    Deferred.model_validate({"name": 3})
except ValidationError as error:
    report["invalid"] = [entry["loc"] for entry in error.errors()]
report["validated"] = Deferred.model_validate({"name": "a", "count": "2"}).model_dump()
report["built_on_use"] = Deferred.__pydantic_complete__
report["adapter_dump"] = adapter_inside.dump_python({"k": Deferred(name="b")})
report["built"] = models.build_deferred()
report["left"] = sorted(model.__name__ for model in models.deferred()[0] if model.__module__ == "__main__")
try:
    Unresolved.model_validate({"later": 1})
except Exception as error:
    report["unresolved"] = type(error).__name__
models.resume_builds()

class BuiltWhenMade(BaseModel):
    name: str

report["resumed"] = BuiltWhenMade.__pydantic_complete__
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    """What MODELS_PROBE saw, in a fresh interpreter (once for the module's tests)."""
    environment = {**os.environ, "PYTHONPATH": str(SRC), "AWS_REGION": "us-east-1"}
    result = subprocess.run(
        [sys.executable, "-c", MODELS_PROBE],
        capture_output=True,
        text=True,
        env=environment,
        check=True,
        cwd=SERVE_ROOT,
    )
    seen: dict[str, Any] = json.loads(result.stdout.splitlines()[-1])
    return seen


def test_a_model_made_while_builds_are_deferred_is_built_on_first_use_and_behaves_the_same(report: dict[str, Any]):
    assert report["deferred_at_first"] is True
    assert report["listed"] == ["Deferred", "Unresolved"]
    assert report["invalid"] == [["name"]]
    assert report["validated"] == {"name": "a", "count": 2}
    assert report["built_on_use"] is True
    assert report["adapter_dump"] == {"k": {"name": "b", "count": 0}}


def test_only_adapters_made_inside_adapters_deferred_wait_for_their_first_use(report: dict[str, Any]):
    assert report["adapter_outside_built"] is True
    assert report["adapter_inside_deferred"] is True
    assert report["adapters_listed"] == 1


def test_build_deferred_builds_what_it_can_and_leaves_a_model_that_cannot_be_built_to_fail_on_use(
    report: dict[str, Any],
):
    assert report["left"] == ["Unresolved"]
    assert report["unresolved"] == "PydanticUserError"


def test_after_resume_builds_a_model_is_built_when_made(report: dict[str, Any]):
    assert report["resumed"] is True
