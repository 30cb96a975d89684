"""FastAPI's check for pydantic v1 models, answered without importing pydantic.v1 until something has
(handlers.http.pydantic_v1): the HTTP door builds its routes and answers without loading it, and once it is loaded
FastAPI refuses a v1 model as a response model and as a value to encode, as it always did. In a fresh interpreter,
since whether pydantic.v1 is loaded is process-wide."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from handlers.http.pydantic_v1 import once_imported
from tests.conftest import SERVE_ROOT

PROBE = """
import json, sys, warnings
from fastapi.testclient import TestClient
from pydantic import BaseModel
import handlers.http
from fastapi import FastAPI
from fastapi.encoders import jsonable_encoder

class Answer(BaseModel):
    value: int

app = FastAPI()

@app.get("/answer", response_model=Answer)
def answer() -> Answer:
    return Answer(value=42)

report = {"served": TestClient(app).get("/answer").json(), "v1_after_serving": "pydantic.v1" in sys.modules}
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from pydantic import v1

class Old(v1.BaseModel):
    value: int

try:
    app.get("/old", response_model=Old)(lambda: None)
except Exception as error:
    report["route"] = type(error).__name__
try:
    jsonable_encoder(Old(value=1))
except Exception as error:
    report["encode"] = type(error).__name__
print(json.dumps(report))
"""


def test_routes_are_made_and_served_without_pydantic_v1_and_a_v1_model_is_refused_once_it_is_loaded():
    env = {**os.environ, "PYTHONPATH": str(SERVE_ROOT / "src")}
    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True, cwd=SERVE_ROOT
    )
    report = json.loads(result.stdout.splitlines()[-1])

    assert report["served"] == {"value": 42}
    assert report["v1_after_serving"] is False
    assert report["route"] == "PydanticV1NotSupportedError"
    assert report["encode"] == "PydanticV1NotSupportedError"


def test_a_wrapped_check_answers_no_until_pydantic_v1_is_loaded_then_asks(monkeypatch):
    asked: list[object] = []

    def check(value: object) -> bool:
        asked.append(value)
        return True

    wrapped = once_imported(check)
    monkeypatch.delitem(sys.modules, "pydantic.v1", raising=False)
    assert wrapped("before") is False
    monkeypatch.setitem(sys.modules, "pydantic.v1", sys.modules["json"])
    assert wrapped("after") is True
    assert asked == ["after"]
