"""Every file in events/, mutated in every place, fed to its Lambda handler (http_* to the HTTP function, mcp_* to the
MCP function) over the in-memory store: each mutation gets a response, nothing raises, and the only 500 is the
documented problem for an event the function cannot interpret. The mutations are enumerated, not random, so a failure
names its mutation and reruns the same."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from handlers.aws.events import UNINTERPRETABLE_EVENT
from tests.conftest import LambdaFunctions
from tests.handlers.aws.test_http_handler import CONTEXT, EVENTS_DIR, body_of

Event = dict[str, Any]
Mutation = tuple[str, Callable[[Event], None]]
KeyPath = tuple[str | int, ...]

EVENT_FILES = sorted([*EVENTS_DIR.glob("http_*.json"), *EVENTS_DIR.glob("mcp_*.json")])
HUGE = "x" * (1 << 20)
# What any value of an event may be replaced with: every JSON type but the one it has, text HTTP cannot carry, and a
# string over every size bound.
REPLACEMENTS: dict[str, object] = {
    "None": None,
    "an int": 7,
    "a list": ["x"],
    "a dict": {"x": "y"},
    "a lone surrogate": "/memories/\ud800",
    "a huge string": HUGE,
}


def handler_for(path: Path, functions: LambdaFunctions) -> Callable[[Event, Any], dict[str, Any]]:
    return functions.http if path.name.startswith("http_") else functions.mcp


def key_paths(value: object, prefix: KeyPath = ()) -> Iterator[KeyPath]:
    """The path of every value inside `value`, at any depth (dict keys and list indices)."""
    children: list[tuple[str | int, object]] = []
    if isinstance(value, dict):
        children = list(value.items())
    elif isinstance(value, list):
        children = list(enumerate(value))
    for key, child in children:
        yield (*prefix, key)
        yield from key_paths(child, (*prefix, key))


def _parent(event: Event, path: KeyPath) -> Any:
    parent: Any = event
    for key in path[:-1]:
        parent = parent[key]
    return parent


def dropping(path: KeyPath) -> Callable[[Event], None]:
    def mutate(event: Event) -> None:
        del _parent(event, path)[path[-1]]

    return mutate


def replacing(path: KeyPath, value: object) -> Callable[[Event], None]:
    def mutate(event: Event) -> None:
        _parent(event, path)[path[-1]] = copy.deepcopy(value)

    return mutate


def setting(**fields: object) -> Callable[[Event], None]:
    def mutate(event: Event) -> None:
        event.update(fields)

    return mutate


def _only_a_version(event: Event) -> None:
    event.clear()
    event["version"] = "2.0"


def mutations(event: Event) -> Iterator[Mutation]:
    for path in key_paths(event):
        name = ".".join(map(str, path))
        yield f"drop {name}", dropping(path)
        for label, value in REPLACEMENTS.items():
            yield f"{name} = {label}", replacing(path, value)
    yield "a body that is not base64, marked isBase64Encoded", setting(body="not base64!", isBase64Encoded=True)
    yield "a base64 body of bad padding", setting(body="eyJ", isBase64Encoded=True)
    yield "no event at all, just a version", _only_a_version


def _failure(response: object) -> str | None:
    """What is wrong with a handler's response, or None when it is an answer the contract allows."""
    status = response.get("statusCode") if isinstance(response, dict) else None
    if not isinstance(response, dict) or not isinstance(status, int) or isinstance(status, bool):
        return f"not a response: {response!r:.200}"
    if response["statusCode"] >= 500:
        try:
            problem = body_of(response)
        except ValueError:
            return f"a {response['statusCode']} whose body is not JSON"
        if response["statusCode"] != 500 or problem.get("type") != UNINTERPRETABLE_EVENT:
            return f"a {response['statusCode']} other than the uninterpretable-event problem: {problem!r:.300}"
    return None


@pytest.mark.parametrize("path", EVENT_FILES, ids=lambda path: path.stem)
def test_every_mutation_of_an_event_file_gets_an_answer_and_no_500_but_the_uninterpretable_event_problem(
    path: Path, lambda_functions: LambdaFunctions
) -> None:
    original: Event = json.loads(path.read_text(encoding="utf-8"))
    handler = handler_for(path, lambda_functions)
    failures: list[str] = []
    tried = 0
    for name, mutate in mutations(original):
        event = copy.deepcopy(original)
        mutate(event)
        tried += 1
        try:
            failure = _failure(handler(event, CONTEXT))
        except Exception as exc:  # the property under test: nothing escapes the handler
            failure = f"raised {type(exc).__name__}: {exc!s:.200}"
        if failure is not None:
            failures.append(f"{name}: {failure}")
    assert tried > 50
    assert not failures, f"{len(failures)} of {tried} mutations of events/{path.name} failed:\n" + "\n".join(failures)


def test_the_mutations_reach_every_value_of_every_event_file() -> None:
    event = json.loads((EVENTS_DIR / "http_get.json").read_text(encoding="utf-8"))
    names = {name for name, _ in mutations(event)}
    assert {"drop requestContext.http.sourceIp", "drop version", "headers.accept = an int"} <= names
    assert "requestContext.http.path = a lone surrogate" in names
