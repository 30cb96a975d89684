"""What the console's browser tests share: a namespace of their own on the shared `agent-memory serve` (DynamoDB
Local), seeded, with three named keys (an agent's for the API's changes, a person's for the console, a read-only
auditor's), a Chromium, and the helpers the tests use (the CLI, axe-core, the filters)."""

from __future__ import annotations

import functools
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect, sync_playwright

from adapters.dynamodb import DynamoDBKeyRepository, make_client
from core.keys import KeyService
from tests.browser.chromium import PATIENCE_MS, chromium_executable, patient
from tests.conftest import REGION, SERVE_ROOT, serve_env

# The table `agent-memory serve` keeps its memories and keys in (its default).
SERVE_TABLE = "agent-memory"
AXE = SERVE_ROOT / "tests" / "browser" / "node_modules" / "axe-core" / "axe.min.js"
SEED: list[dict[str, Any]] = [
    {
        "content": "The user prefers concise answers with examples.",
        "memory_type": "preference",
        "tags": ["writing-style"],
    },
    {"content": "The user's daughter Ana was born on 2019-03-02.", "memory_type": "identity", "tags": ["person"]},
    {"content": "The user works at Acme as a data engineer.", "memory_type": "identity", "tags": ["work", "profile"]},
    {"content": "The user is allergic to peanuts.", "memory_type": "fact", "tags": ["health"]},
    {"content": "The user flies to Lisbon on 2026-12-20.", "memory_type": "event", "tags": ["travel"]},
    {"content": "The user lives in Berlin.", "memory_type": "identity", "tags": ["place"], "status": "invalid"},
    *({"content": f"Project note {n}: the build uses uv.", "tags": ["project", "tooling"]} for n in range(1, 7)),
]


@dataclass
class Scene:
    base: str
    namespace: str
    key: str
    reader: str
    browser: Browser
    api: httpx2.Client

    def page(self, **options: Any) -> Page:
        context: BrowserContext = self.browser.new_context(**options)
        return patient(context.new_page())

    def open_console(self, page: Page, key: str | None = None, fragment: str = "#/memories") -> None:
        """Sign in at `fragment`: the list unless told (the console opens on its overview, `#/`)."""
        page.goto(f"{self.base}/console/{fragment}")
        page.get_by_label("API key").fill(key or self.key)
        page.get_by_role("button", name="Open").click()

    def stamps(self) -> dict[int, str | None]:
        """Every memory's last_accessed_at, read without stamping."""
        found = self.api.get("/memories", params={"limit": 100, "status": "active"}, headers={"Prefer": "no-stamp"})
        invalid = self.api.get("/memories", params={"limit": 100, "status": "invalid"}, headers={"Prefer": "no-stamp"})
        return {m["id"]: m["last_accessed_at"] for m in [*found.json()["items"], *invalid.json()["items"]]}


def created(scene: Scene, content: str, **fields: Any) -> int:
    """A memory the scene's agent key creates through the API: its id."""
    answer = scene.api.post("/memories", json={"content": content, **fields})
    assert answer.status_code == 201, answer.text
    mid: int = answer.json()["id"]
    return mid


@functools.cache
def _serve_keys(ddb_port: int) -> KeyService:
    """The keys of the shared serve's table, through its DynamoDB Local (as `agent-memory keys --ddb-port` reaches
    them, without a process per key)."""
    return KeyService(DynamoDBKeyRepository(make_client(f"http://127.0.0.1:{ddb_port}", REGION), SERVE_TABLE))


def keys_create(ddb_port: int, namespace: str, scopes: str, name: str) -> str:
    """A new key of `namespace` on the shared serve: its plaintext."""
    _, key = _serve_keys(ddb_port).create(namespace, scopes.split(","), name=name)
    return key


def agent_memory(ddb_port: int, *arguments: str) -> str:
    """`agent-memory ...` on the shared serve's DynamoDB Local: its output."""
    command = [sys.executable, "-m", "local", *arguments, "--ddb-port", str(ddb_port)]
    done = subprocess.run(command, cwd=SERVE_ROOT, env=serve_env(), capture_output=True, text=True, check=True)
    return done.stdout


@contextmanager
def console_scene(shared_serve_engine: tuple[str, str, int]) -> Iterator[Scene]:
    """The test process's shared `serve`, seen through keys of a namespace of its own (its counts are exact whatever
    other tests store), seeded with SEED, and a browser."""
    executable = chromium_executable()
    base, _, ddb_port = shared_serve_engine
    namespace = f"console-{uuid.uuid4().hex[:8]}"
    agent = keys_create(ddb_port, namespace, "read,write", "agent")  # the API's changes: an agent's
    person = keys_create(ddb_port, namespace, "read,write,keys", "person")  # the console's: may revoke the others
    with (
        sync_playwright() as playwright,
        # A write waits for its embedding: on a loaded machine more than httpx's default 5 s.
        httpx2.Client(base_url=base, headers={"Authorization": f"Bearer {agent}"}, timeout=PATIENCE_MS / 1000) as api,
    ):
        for memory in SEED:
            assert api.post("/memories", json=memory).status_code == 201
        browser = playwright.chromium.launch(executable_path=executable)
        try:
            yield Scene(base, namespace, person, keys_create(ddb_port, namespace, "read", "auditor"), browser, api)
        finally:
            browser.close()


def tab_to(page: Page, target: Locator, presses: int) -> None:
    """Press Tab, at most `presses` times, until `target` has the focus, once it is on the page: a view shows its
    heading first and its parts as their answers come, later on a loaded machine, and a Tab pressed before they are
    there moves past them."""
    expect(target).to_be_visible()
    for _ in range(presses):
        page.keyboard.press("Tab")
        if target.evaluate("element => element === document.activeElement"):
            return
    pytest.fail(f"{presses} presses of Tab never reached {target}")


def summary(page: Page) -> str:
    return page.locator("#summary").inner_text()


def search(page: Page, **fields: str) -> None:
    for label, value in fields.items():
        control = page.get_by_label(label, exact=True)
        if control.evaluate("element => element.tagName") == "SELECT":
            control.select_option(value)
        else:
            control.fill(value)
    page.get_by_role("button", name="Search").click()


def axe_violations(page: Page) -> list[dict[str, Any]]:
    page.add_script_tag(path=str(AXE))
    result: list[dict[str, Any]] = page.evaluate("async () => (await axe.run(document)).violations")
    return result
