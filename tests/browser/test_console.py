"""The memory console in a real browser (Debian's Chromium, driven by Playwright) against a running `agent-memory
serve` on DynamoDB Local: a person pastes a key, lists, filters by every field, pages, opens, edits, meets a
conflicting edit made through the API meanwhile, invalidates, deletes, restores and purges; what they only looked at
keeps its `last_accessed_at`. Wrong keys, read-only keys and a busy store get human messages; axe-core finds no
violation on any view; keyboard alone works; the page fits a phone and 200 % zoom. Screenshots of the main views go
to .pytest_cache/screenshots/."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Request, Route, expect, sync_playwright

from tests.browser.chromium import chromium_executable, screenshot
from tests.conftest import SERVE_ROOT, serve_env

pytestmark = pytest.mark.browser

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
        page = context.new_page()
        page.set_default_timeout(20_000)
        return page

    def open_console(self, page: Page, key: str | None = None, fragment: str = "") -> None:
        page.goto(f"{self.base}/console/{fragment}")
        page.get_by_label("API key").fill(key or self.key)
        page.get_by_role("button", name="Open").click()

    def stamps(self) -> dict[int, str | None]:
        """Every memory's last_accessed_at, read without stamping."""
        found = self.api.get("/memories", params={"limit": 100, "status": "active"}, headers={"Prefer": "no-stamp"})
        invalid = self.api.get("/memories", params={"limit": 100, "status": "invalid"}, headers={"Prefer": "no-stamp"})
        return {m["id"]: m["last_accessed_at"] for m in [*found.json()["items"], *invalid.json()["items"]]}


def keys_create(ddb_port: int, namespace: str, scopes: str, name: str) -> str:
    created = subprocess.run(
        [
            sys.executable,
            *("-m", "local", "keys", "create", "--namespace", namespace, "--scopes", scopes, "--json"),
            *("--name", name),
            *("--ddb-port", str(ddb_port)),
        ],
        cwd=SERVE_ROOT,
        env=serve_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    key: str = json.loads(created.stdout)["key"]
    return key


@pytest.fixture(scope="module")
def scene(shared_serve_engine: tuple[str, str, int]) -> Iterator[Scene]:
    """The test process's shared `serve`, seen through keys of a namespace of this module's own (its counts are
    exact whatever other tests store), seeded with SEED."""
    executable = chromium_executable()
    base, _, ddb_port = shared_serve_engine
    namespace = f"console-{uuid.uuid4().hex[:8]}"
    agent = keys_create(ddb_port, namespace, "read,write", "agent")  # the API's changes: an agent's
    person = keys_create(ddb_port, namespace, "read,write", "person")  # the console's
    with (
        sync_playwright() as playwright,
        # A write waits for its embedding: on a loaded machine more than httpx's default 5 s.
        httpx2.Client(base_url=base, headers={"Authorization": f"Bearer {agent}"}, timeout=30) as api,
    ):
        for memory in SEED:
            assert api.post("/memories", json=memory).status_code == 201
        browser = playwright.chromium.launch(executable_path=executable)
        try:
            yield Scene(base, namespace, person, keys_create(ddb_port, namespace, "read", "auditor"), browser, api)
        finally:
            browser.close()


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


def test_a_person_lists_filters_pages_opens_edits_resolves_a_conflict_and_restores(scene: Scene) -> None:
    before = scene.stamps()
    page = scene.page()
    scene.open_console(page)

    lists_filters_and_pages(page)
    edits_and_resolves_a_conflict(scene, page)
    invalidates_deletes_and_restores(page)

    after = scene.stamps()
    assert {mid: stamp for mid, stamp in after.items() if mid != 1} == {
        mid: stamp for mid, stamp in before.items() if mid != 1
    }  # looking is not using: nothing the person only viewed was stamped
    assert after[1] == before[1]


def lists_filters_and_pages(page: Page) -> None:
    """The list, each filter in turn, the next page (kept by the fragment across a reload), then back."""
    expect(page.locator("#summary")).to_have_text("12 memories · page 1 of 2")
    screenshot(page, "console-list")
    search(page, Status="invalid")
    expect(page.locator("#summary")).to_have_text("1 memory · page 1 of 1")
    page.get_by_role("button", name="Clear").click()
    search(page, Type="identity")
    expect(page.locator("#summary")).to_have_text("3 memories · page 1 of 1")
    page.get_by_role("button", name="Clear").click()
    search(page, Tag="travel")
    expect(page.locator("tbody")).to_contain_text("The user flies to Lisbon on 2026-12-20.")
    page.get_by_role("button", name="Clear").click()
    search(page, **{"Text contains": "PEANUT"})
    expect(page.locator("#summary")).to_have_text("1 memory · page 1 of 1")
    page.get_by_role("button", name="Clear").click()
    search(page, **{"Sort by": "updated_at", "Per page": "20"})
    expect(page.locator("#summary")).to_have_text("12 memories · page 1 of 1")
    expect(page.locator("tbody a.id").first).to_have_text("#12")
    page.get_by_role("button", name="Clear").click()

    page.get_by_role("button", name="Next page").click()
    expect(page.locator("#summary")).to_have_text("12 memories · page 2 of 2")
    assert page.url.endswith("#/?offset=10")
    page.reload()  # the fragment keeps the view; the key stays in this tab's sessionStorage
    expect(page.locator("#summary")).to_have_text("12 memories · page 2 of 2")
    page.get_by_role("link", name="Memories").click()


def edits_and_resolves_a_conflict(scene: Scene, page: Page) -> None:
    """Memory 1 opened and edited, then edited again while the API changes it: the conflict, and re-applying."""
    page.get_by_role("link", name="#1", exact=True).click()
    expect(page.get_by_role("heading", name="Memory #1")).to_be_visible()
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Content").fill("The user prefers short answers with code examples.")
    page.get_by_label("preference", exact=True).check()
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#notice")).to_have_text("Memory #1 is saved.")
    expect(page.locator("dl.fields")).to_contain_text("The user prefers short answers with code examples.")

    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Content").fill("The user prefers short answers, with one code example.")
    changed = scene.api.patch("/memories/1", json={"tags": ["writing-style", "preference", "style"]})
    assert changed.status_code == 200
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("heading", name="Memory #1 changed while you edited it")).to_be_visible()
    expect(page.locator("main")).to_contain_text("Tags added: style")
    screenshot(page, "console-conflict")
    page.get_by_role("button", name="Save merged changes").click()
    expect(page.locator("#notice")).to_have_text("Your changes are merged into version 3.")
    record = scene.api.get("/memories/1", headers={"Prefer": "no-stamp"}).json()
    assert record["content"] == "The user prefers short answers, with one code example."
    assert record["tags"] == ["writing-style", "preference", "style"]  # the other writer's change kept


def invalidates_deletes_and_restores(page: Page) -> None:
    """Memory 1 marked invalid, deleted after a confirmation, restored to the status it had, with its timeline."""
    page.get_by_role("button", name="Mark invalid").click()
    expect(page.locator("dl.fields")).to_contain_text("invalid")
    page.get_by_role("button", name="Delete").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("You can restore it for 30 days")
    dialog.get_by_role("button", name="Delete").click()
    expect(page.get_by_role("button", name="Restore", exact=True)).to_be_visible()
    expect(page.locator("dl.fields")).to_contain_text("deleted")
    page.get_by_role("button", name="Restore", exact=True).click()
    expect(page.locator("#notice")).to_have_text("Memory #1 is restored.")
    expect(page.locator("dl.fields")).to_contain_text("invalid")  # the status it had before the delete
    changes = page.locator("ol.timeline .change").all_inner_texts()
    assert changes == ["Restored", "Deleted", "Updated", "Updated", "Updated", "Updated", "Created"]
    expect(page.locator("ol.timeline")).to_contain_text("Tags added: preference")
    expect(page.locator("ol.timeline li").first).to_contain_text("by key person (")  # the console's own key, named
    screenshot(page, "console-memory")


def test_creating_shows_the_apis_own_words_next_to_the_field_and_offers_the_standard_tags(scene: Scene) -> None:
    page = scene.page()
    scene.open_console(page)
    page.get_by_role("link", name="New memory").click()

    page.get_by_label("Other tags").fill("Not A Tag!")
    page.get_by_role("button", name="Create").click()
    expect(page.locator("#content-error")).to_have_text("must be 1 to 8192 characters after trimming")
    expect(page.locator("#tags-error")).to_contain_text("must be 1 to 64 characters of a-z 0-9")
    screenshot(page, "console-new-invalid")

    page.get_by_label("Content").fill("The user runs on Sundays.")
    page.get_by_label("health", exact=True).check()
    page.get_by_label("Other tags").fill("sport:running")
    page.get_by_label("Type").select_option("fact")
    page.get_by_role("button", name="Create").click()

    expect(page.locator("#notice")).to_contain_text("is created.")
    expect(page.locator("dl.fields")).to_contain_text("The user runs on Sundays.")
    expect(page.locator("dl.fields")).to_contain_text("sport:running")


def test_a_deleted_memory_is_purged_only_after_a_confirmation_that_says_it_is_final(scene: Scene) -> None:
    created = scene.api.post("/memories", json={"content": "A memory to purge."}).json()
    scene.api.delete(f"/memories/{created['id']}")
    page = scene.page()
    scene.open_console(page, fragment=f"#/memory/{created['id']}")

    page.get_by_role("button", name="Purge").click()
    expect(page.get_by_role("dialog")).to_contain_text("Purging is final")
    page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
    assert scene.api.get(f"/memories/{created['id']}/history").status_code == 200
    page.get_by_role("button", name="Purge").click()
    page.get_by_role("dialog").get_by_role("button", name="Purge for good").click()

    expect(page.locator("#notice")).to_have_text(f"Memory #{created['id']} is purged.")
    assert scene.api.get(f"/memories/{created['id']}/history").status_code == 404


def test_a_wrong_key_is_told_it_is_not_valid(scene: Scene) -> None:
    page = scene.page()

    scene.open_console(page, key="am_0123456789ab_" + "w" * 43)

    expect(page.locator("#notice")).to_have_text("This key is not valid (expired or revoked?). Paste another key.")
    expect(page.get_by_label("API key")).to_be_visible()


def test_the_header_says_whose_memories_these_are_and_a_read_only_key_is_offered_no_change(scene: Scene) -> None:
    page = scene.page()
    scene.open_console(page, key=scene.reader, fragment="#/memory/2")
    expect(page.get_by_role("heading", name="Memory #2")).to_be_visible()

    who = page.locator("#who")
    expect(who).to_contain_text(f"Namespace {scene.namespace}")
    expect(who).to_contain_text(f"key auditor ({scene.reader[3:15]})")
    expect(who).to_contain_text("may read")
    expect(page.locator("main")).to_contain_text("This key may only read: it cannot change memories.")
    screenshot(page, "console-read-only")
    for offered in ["Edit", "Mark invalid", "Delete"]:
        expect(page.get_by_role("button", name=offered, exact=True)).to_have_count(0)
    expect(page.get_by_role("link", name="New memory")).to_be_hidden()
    expect(page.get_by_role("button", name="Copy id")).to_be_visible()


def test_a_busy_store_is_retried_after_its_retry_after_with_a_message(scene: Scene) -> None:
    page = scene.page()
    busy = {"left": 1}

    def once_busy(route: Route) -> None:
        if busy["left"]:
            busy["left"] -= 1
            problem = {
                "type": "urn:agent-memory:problem:storage-unavailable",
                "title": "Storage is briefly unavailable",
                "status": 503,
                "detail": "storage is busy; retry shortly",
            }
            route.fulfill(status=503, headers={"Retry-After": "1"}, json=problem)
        else:
            route.continue_()

    scene.open_console(page)
    expect(page.locator("#summary")).to_be_visible()
    page.route("**/memories?*", once_busy)
    page.get_by_role("button", name="Search").click()

    expect(page.locator("#notice")).to_have_text("Storage is busy, retrying in 1 s…")
    expect(page.locator("#notice")).to_be_hidden()
    expect(page.locator("#summary")).to_contain_text("memories")


def test_keyboard_alone_opens_a_memory_and_edits_it(scene: Scene) -> None:
    page = scene.page()
    page.goto(f"{scene.base}/console/")
    for _ in range(5):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "key":
            break
    page.keyboard.type(scene.key)
    page.keyboard.press("Enter")
    expect(page.locator("#summary")).to_be_visible()
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == "#3":
            break
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Memory #3")).to_be_visible()
    for _ in range(20):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == "Edit":
            break
    page.keyboard.press("Enter")
    expect(page.get_by_label("Content")).to_be_visible()
    page.get_by_label("Content").focus()
    page.keyboard.press("End")
    page.keyboard.type(" since 2021")
    for _ in range(30):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == "Save":
            break
    page.keyboard.press("Enter")

    expect(page.locator("#notice")).to_have_text("Memory #3 is saved.")
    assert scene.api.get("/memories/3", headers={"Prefer": "no-stamp"}).json()["content"].endswith("since 2021")


# A phone, and a 1280 x 800 screen at 200 % zoom.
@pytest.mark.parametrize(("name", "width", "height"), [("phone", 375, 800), ("zoom-200", 640, 400)])
def test_the_views_fit_a_narrow_window_without_sideways_scrolling(
    scene: Scene, name: str, width: int, height: int
) -> None:
    page = scene.page(viewport={"width": width, "height": height})
    scene.open_console(page)
    expect(page.locator("#summary")).to_be_visible()
    screenshot(page, f"console-list-{name}")
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    page.get_by_role("link", name="#4", exact=True).click()
    expect(page.locator("#history")).to_be_visible()
    assert page.evaluate("window.scrollY") == 0  # a view opens at its top, wherever the last one was scrolled to
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    screenshot(page, f"console-memory-{name}")
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    page.get_by_role("button", name="Edit").click()
    expect(page.get_by_label("Content")).to_be_visible()
    assert page.evaluate("window.scrollY") == 0
    screenshot(page, f"console-edit-{name}")
    page.get_by_role("button", name="Cancel").click()
    if name == "phone":  # the filters fold away, so the list starts on the first screen
        page.get_by_role("link", name="Memories").click()
        expect(page.locator("details.filter-panel")).not_to_have_attribute("open", "")
        box = page.locator("tbody tr").first.bounding_box()
        assert box is not None
        assert box["y"] < height
        page.get_by_label("Select memory #4").check()
        screenshot(page, "console-bulk-phone")
        page.get_by_role("link", name="#4", exact=True).click()
    page.get_by_role("link", name="Full record as JSON").click()
    expect(page.locator("pre.json")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    screenshot(page, f"console-json-{name}")


def test_dark_mode_follows_the_system_setting(scene: Scene) -> None:
    page = scene.page(color_scheme="dark")
    scene.open_console(page)
    expect(page.locator("#summary")).to_be_visible()
    screenshot(page, "console-list-dark")

    background = page.evaluate("getComputedStyle(document.body).backgroundColor")

    assert background == "rgb(17, 20, 24)"


def axe_violations(page: Page) -> list[dict[str, Any]]:
    page.add_script_tag(path=str(AXE))
    result: list[dict[str, Any]] = page.evaluate("async () => (await axe.run(document)).violations")
    return result


def test_axe_finds_no_violation_on_any_view(scene: Scene) -> None:
    if not AXE.exists():
        pytest.fail("axe-core is missing: run `make install` (npm ci in tests/browser)")
    page = scene.page(bypass_csp=True)  # only so axe's own script can be injected
    page.goto(f"{scene.base}/console/")
    views: dict[str, list[dict[str, Any]]] = {"key": axe_violations(page)}
    scene.open_console(page)
    expect(page.locator("#summary")).to_be_visible()
    views["list"] = axe_violations(page)
    page.get_by_role("link", name="#5").click()
    expect(page.locator("#history")).to_be_visible()
    views["memory"] = axe_violations(page)
    page.get_by_role("button", name="Edit").click()
    views["edit"] = axe_violations(page)
    page.get_by_role("link", name="New memory").click()
    page.get_by_role("button", name="Create").click()
    expect(page.locator("#content-error")).to_be_visible()
    views["new with errors"] = axe_violations(page)
    page.get_by_label("Content").fill("A draft.")
    page.get_by_role("button", name="Cancel").click()
    views["discard dialog"] = axe_violations(page)
    page.get_by_role("dialog").get_by_role("button", name="Discard changes").click()
    expect(page.locator("#summary")).to_be_visible()
    new_views(scene, page, views)

    assert {view: [v["id"] for v in found] for view, found in views.items()} == {view: [] for view in views}


def new_views(scene: Scene, page: Page, views: dict[str, list[dict[str, Any]]]) -> None:
    """The views of round two: filter errors, deleted rows, selection and export, shortcuts, JSON, a bulk action's
    confirmation and summary, a merge, a memory deleted while edited."""
    page.goto(f"{scene.base}/console/#/?sort=bogus")
    expect(page.locator("#sort-error")).to_be_visible()
    views["filter errors"] = axe_violations(page)
    created = scene.api.post("/memories", json={"content": "Axe looks at this one."}).json()
    scene.api.delete(f"/memories/{created['id']}")
    page.goto(f"{scene.base}/console/#/?status=deleted")
    expect(page.locator(".deleted-at").first).to_be_visible()
    views["deleted list"] = axe_violations(page)
    scene.api.post(f"/memories/{created['id']}/restore")
    page.goto(f"{scene.base}/console/#/?sort=created_at")
    page.get_by_label(f"Select memory #{created['id']}").check()
    page.get_by_text("Export what you see").click()
    views["selection and export"] = axe_violations(page)
    page.locator("h1").click()
    page.keyboard.press("?")
    views["shortcuts"] = axe_violations(page)
    page.keyboard.press("Escape")
    page.get_by_label("Tag to add or remove").fill("axe")
    page.get_by_role("button", name="Add tag").click()
    views["bulk confirmation"] = axe_violations(page)
    page.get_by_role("dialog").get_by_role("button", name="Add tag").click()
    expect(page.locator("#bulk-summary")).to_be_visible()
    views["bulk summary"] = axe_violations(page)
    page.goto(f"{scene.base}/console/#/memory/{created['id']}/json")
    expect(page.locator("pre.json")).to_be_visible()
    views["json"] = axe_violations(page)
    page.goto(f"{scene.base}/console/#/memory/{created['id']}")
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Content").fill("Axe looks at this one, edited.")
    scene.api.patch(f"/memories/{created['id']}", json={"content": "Axe looks at this one, changed."})
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("button", name="Save merged changes")).to_be_visible()
    views["merge"] = axe_violations(page)
    page.get_by_role("button", name="Discard my changes").click()
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Content").fill("Axe looks at this one, edited again.")
    scene.api.delete(f"/memories/{created['id']}")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#deleted")).to_be_visible()
    views["deleted while edited"] = axe_violations(page)


def test_the_page_runs_within_its_content_security_policy(scene: Scene) -> None:
    page = scene.page()
    messages: list[str] = []
    page.on("console", lambda message: messages.append(message.text))
    scene.open_console(page)
    expect(page.locator("#summary")).to_be_visible()
    page.get_by_role("link", name="#2").click()
    expect(page.locator("#history")).to_be_visible()

    assert not [m for m in messages if "Content Security Policy" in m or "Refused" in m], messages
    assert "agent-memory-key" in page.evaluate("Object.keys(sessionStorage)")
    assert scene.key not in page.url


def test_a_conflicting_edit_can_be_discarded_and_then_nothing_of_it_is_written(scene: Scene) -> None:
    created = scene.api.post("/memories", json={"content": "The user drinks tea."}).json()
    page = scene.page()
    scene.open_console(page, fragment=f"#/memory/{created['id']}")
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Content").fill("The user drinks coffee.")
    assert (
        scene.api.patch(f"/memories/{created['id']}", json={"content": "The user drinks green tea."}).status_code == 200
    )

    page.get_by_role("button", name="Save").click()
    expect(page.locator("main")).to_contain_text("green")  # the change made in the meantime, shown as a diff
    page.get_by_role("button", name="Discard my changes").click()

    expect(page.locator("#notice")).to_have_text("Your changes are discarded.")
    expect(page.locator("dl.fields")).to_contain_text("The user drinks green tea.")
    stored = scene.api.get(f"/memories/{created['id']}", headers={"Prefer": "no-stamp"}).json()
    assert (stored["content"], stored["version"]) == ("The user drinks green tea.", 2)


def test_before_a_key_is_given_only_the_key_form_is_offered(scene: Scene) -> None:
    page = scene.page()
    page.goto(f"{scene.base}/console/")

    expect(page.get_by_label("API key")).to_be_visible()
    expect(page.get_by_role("link", name="New memory")).to_be_hidden()
    expect(page.get_by_role("button", name="Forget key")).to_be_hidden()


LONG = " ".join(f"Line {n} of a long runbook the agent keeps about the deployment." for n in range(44))


def test_the_list_shows_a_short_preview_links_the_id_and_highlights_what_matched(scene: Scene) -> None:
    created = scene.api.post("/memories", json={"content": f"{LONG} The zanzibar step comes last.\n{LONG}"}).json()
    assert len(created["content"]) > 5000
    page = scene.page()
    scene.open_console(page, fragment="#/?q=ZANZIBAR")

    row = page.locator(f'tbody tr[data-id="{created["id"]}"]')
    expect(row.locator("mark")).to_have_text("zanzibar")  # matched beyond the first line: the words around it
    preview = row.locator("td.content").inner_text()
    assert (preview[0], preview[-1]) == ("…", "…")
    assert len(preview) < 200
    expect(row.locator("td.content a")).to_have_count(0)  # the link is on the id, not on the text
    screenshot(page, "console-preview")
    page.goto(f"{scene.base}/console/#/")
    expect(page.locator(f'tbody tr[data-id="{created["id"]}"]')).to_have_count(0)  # page 2: not shown by default
    page.goto(f"{scene.base}/console/#/?sort=created_at&limit=10")
    first_line = page.locator(f'tbody tr[data-id="{created["id"]}"] td.content').inner_text()
    assert (first_line[:24], first_line[-1]) == ("Line 0 of a long runbook", "…")
    assert len(first_line) < 200
    page.get_by_role("link", name=f"#{created['id']}", exact=True).click()
    expect(page.locator("dl.fields")).to_contain_text("The zanzibar step comes last.")  # the full text


def test_typed_input_is_never_lost_without_asking(scene: Scene) -> None:
    page = scene.page()
    scene.open_console(page, fragment="#/new")
    page.get_by_label("Content").fill("A draft the person is still writing.")

    page.get_by_role("button", name="Cancel").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Discard your changes?")
    screenshot(page, "console-discard")
    dialog.get_by_role("button", name="Keep editing").click()
    expect(page.get_by_label("Content")).to_have_value("A draft the person is still writing.")

    page.get_by_role("link", name="Memories").click()  # in-app navigation asks too, and stays when told to
    page.get_by_role("dialog").get_by_role("button", name="Keep editing").click()
    expect(page.get_by_label("Content")).to_have_value("A draft the person is still writing.")
    assert page.url.endswith("#/new")

    with page.expect_event("dialog") as asked:
        page.close(run_before_unload=True)  # leaving the page: the browser's own question
    assert asked.value.type == "beforeunload"
    asked.value.dismiss()  # stay

    page.get_by_role("button", name="Cancel").click()
    page.get_by_role("dialog").get_by_role("button", name="Discard changes").click()
    expect(page.locator("#summary")).to_be_visible()
    page.get_by_role("link", name="#3", exact=True).click()
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Content").fill("Changed, then thrown away on purpose.")
    page.get_by_role("link", name="Memories").click()
    page.get_by_role("dialog").get_by_role("button", name="Discard changes").click()
    expect(page.locator("#summary")).to_be_visible()
    assert "thrown away" not in scene.api.get("/memories/3", headers={"Prefer": "no-stamp"}).json()["content"]


def test_a_memory_deleted_while_edited_says_when_and_by_which_key_and_offers_restore(scene: Scene) -> None:
    created = scene.api.post("/memories", json={"content": "The user parks on level 2."}).json()
    page = scene.page()
    scene.open_console(page, fragment=f"#/memory/{created['id']}")
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Content").fill("The user parks on level 3.")
    assert scene.api.delete(f"/memories/{created['id']}").status_code == 204

    page.get_by_role("button", name="Save").click()

    expect(page.get_by_role("heading", name=f"Memory #{created['id']} was deleted while you edited it")).to_be_visible()
    agent_id = scene.api.get("/key").json()["key_id"]
    expect(page.locator("#deleted")).to_contain_text(f"by key {agent_id}; purged in 30 days unless restored.")
    screenshot(page, "console-deleted-meanwhile")
    page.get_by_role("button", name="Restore and keep editing").click()
    expect(page.get_by_label("Content")).to_have_value("The user parks on level 3.")  # the typed change kept
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#notice")).to_have_text(f"Memory #{created['id']} is saved.")
    stored = scene.api.get(f"/memories/{created['id']}", headers={"Prefer": "no-stamp"}).json()
    assert (stored["status"], stored["content"]) == ("active", "The user parks on level 3.")


def test_a_change_made_meanwhile_is_merged_field_by_field_and_tag_by_tag(scene: Scene) -> None:
    created = scene.api.post(
        "/memories", json={"content": "Team sync is on Monday.", "tags": ["work", "meeting"], "memory_type": "event"}
    ).json()
    page = scene.page()
    sent: list[Any] = []

    def patches(request: Request) -> None:
        if request.method == "PATCH":
            sent.append(request.post_data_json)

    page.on("request", patches)
    scene.open_console(page, fragment=f"#/memory/{created['id']}")
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Content").fill("Team sync is on Monday at 10.")
    page.get_by_label("Other tags").fill("work, weekly")  # the person removes "meeting", adds "weekly"
    agent = {"content": "Team sync is on Tuesday.", "tags": ["work", "meeting", "calendar"]}
    assert scene.api.patch(f"/memories/{created['id']}", json=agent).status_code == 200

    page.get_by_role("button", name="Save").click()

    agent_id = scene.api.get("/key").json()["key_id"]
    expect(page.get_by_role("heading", name=f"What key {agent_id} changed")).to_be_visible()
    conflict = page.locator('fieldset[data-field="content"]')
    expect(conflict).to_contain_text(f"Content: you and key {agent_id} both changed it")
    expect(conflict).to_contain_text("Team sync is on Tuesday.")
    expect(conflict).to_contain_text("Team sync is on Monday at 10.")
    expect(page.locator("main")).to_contain_text("you added weekly; you removed meeting")
    expect(page.locator('fieldset[data-field="memory_type"]')).to_have_count(0)
    screenshot(page, "console-merge")
    page.get_by_label("Content to save").fill("Team sync is on Tuesday at 10.")
    page.get_by_role("button", name="Save merged changes").click()

    expect(page.locator("#notice")).to_have_text("Your changes are merged into version 2.")
    stored = scene.api.get(f"/memories/{created['id']}", headers={"Prefer": "no-stamp"}).json()
    assert stored["content"] == "Team sync is on Tuesday at 10."
    assert stored["tags"] == ["work", "calendar", "weekly"]  # the agent's tag kept, the person's change applied
    assert stored["memory_type"] == "event"
    assert [sorted(body) for body in sent] == [["content", "tags"], ["content", "tags"]]  # never a field not changed


def test_deleted_memories_show_when_they_were_deleted_and_when_they_are_purged(scene: Scene) -> None:
    created = scene.api.post("/memories", json={"content": "The user's old locker code."}).json()
    assert scene.api.delete(f"/memories/{created['id']}").status_code == 204
    page = scene.page()
    scene.open_console(page, fragment="#/?status=deleted&sort=updated_at")

    row = page.locator(f'tbody tr[data-id="{created["id"]}"]')
    expect(row.locator(".deleted-at")).to_contain_text("· purged in 30 days")
    expect(row.locator(".deleted-at time")).to_have_attribute("datetime", re.compile(r"^\d{4}-\d\d-\d\dT"))
    screenshot(page, "console-deleted-list")
    page.get_by_role("link", name=f"#{created['id']}", exact=True).click()
    expect(page.locator("#deleted")).to_contain_text("purged in 30 days unless restored.")


def test_the_list_shows_the_column_it_sorts_by_and_a_heading_click_sorts(scene: Scene) -> None:
    page = scene.page()
    scene.open_console(page, fragment="#/?sort=last_accessed_at")

    heading = page.locator("thead th").last
    expect(heading).to_have_text("Last used ▼")
    expect(heading).to_have_attribute("aria-sort", "descending")
    page.get_by_role("link", name="created (newest first)").click()
    expect(page.locator("thead th").last).to_have_text("Created ▼")
    assert "sort=created_at" in page.url
    page.get_by_role("link", name="Id", exact=True).click()
    expect(page.locator("thead th", has_text="Id")).to_have_attribute("aria-sort", "ascending")
    assert "sort=id" in page.url
    expect(page.locator("thead th").last).to_have_text("Updated")


def test_filter_errors_show_once_next_to_their_field_and_go_when_it_is_fixed(scene: Scene) -> None:
    page = scene.page()
    scene.open_console(page, fragment="#/?sort=bogus&limit=0")

    expect(page.locator(".field-error")).to_have_count(2)  # sort and limit, once each, and nowhere else
    expect(page.locator("#notice")).to_be_hidden()
    sort = page.get_by_label("Sort by", exact=True)
    expect(sort.locator("option:checked")).to_have_text("bogus (not valid)")  # the box shows the address's value
    expect(page.locator("#sort-error")).to_contain_text("must be one of 'id'")
    assert (
        page.evaluate("document.getElementById('sort').closest('div').querySelector('.field-error').id") == "sort-error"
    )
    expect(sort).to_have_attribute("aria-invalid", "true")
    expect(sort).to_be_focused()
    screenshot(page, "console-filter-errors")
    sort.select_option("updated_at")
    expect(sort).not_to_have_attribute("aria-invalid", "true")
    expect(page.locator("#sort-error")).to_have_count(0)

    page.get_by_role("link", name="New memory").click()
    page.get_by_label("Content").fill("Too many tags, one of them wrong.")
    page.get_by_label("Other tags").fill(", ".join(["Bad Tag!", *(f"t{n}" for n in range(21))]))
    page.get_by_role("button", name="Create").click()
    expect(page.locator("#tags-error p").first).to_be_visible()
    messages = page.locator("#tags-error p").all_inner_texts()
    assert messages[0] == "at most 20 tags: there are 22"  # the rule about the whole list first
    assert messages[1].startswith('"Bad Tag!" must be 1 to 64 characters')  # and which tag is wrong
    page.get_by_label("Other tags").fill("fine")
    expect(page.get_by_label("Other tags")).not_to_have_attribute("aria-invalid", "true")


def test_a_tag_filters_by_itself_ids_copy_in_one_click_and_the_keyboard_has_shortcuts(scene: Scene) -> None:
    page = scene.page(permissions=["clipboard-read", "clipboard-write"])
    scene.open_console(page)
    expect(page.locator("#summary")).to_be_visible()

    page.locator("tbody tr").nth(4).get_by_role("link", name="travel").click()
    expect(page.locator("#summary")).to_have_text("1 memory · page 1 of 1")
    assert page.url.endswith("#/?tag=travel")
    page.get_by_role("link", name="#5", exact=True).click()
    page.get_by_role("button", name="Copy id").click()
    assert page.evaluate("navigator.clipboard.readText()") == "5"
    page.get_by_role("button", name="Copy API URL").click()
    assert page.evaluate("navigator.clipboard.readText()") == f"{scene.base}/memories/5"

    page.keyboard.press("/")  # from a memory: the list, its search field focused
    expect(page.get_by_label("Text contains")).to_be_focused()
    page.keyboard.press("Tab")
    page.keyboard.press("Escape")
    page.locator("h1").click()
    page.keyboard.press("?")
    expect(page.get_by_role("dialog")).to_contain_text("Keyboard shortcuts")
    screenshot(page, "console-shortcuts")
    page.keyboard.press("Escape")
    page.keyboard.press("j")
    page.keyboard.press("j")
    expect(page.get_by_role("link", name="#2", exact=True)).to_be_focused()
    page.keyboard.press("k")
    expect(page.get_by_role("link", name="#1", exact=True)).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("button", name="Edit")).to_be_visible()
    page.keyboard.press("e")
    expect(page.get_by_role("heading", name="Edit memory #1")).to_be_visible()


def test_a_memorys_full_record_reads_as_json(scene: Scene) -> None:
    page = scene.page()
    scene.open_console(page, fragment="#/memory/4")
    page.get_by_role("link", name="Full record as JSON").click()

    shown = json.loads(page.locator("pre.json").inner_text())

    assert shown == scene.api.get("/memories/4", headers={"Prefer": "no-stamp"}).json()
    screenshot(page, "console-json")


def test_restoring_an_older_version_makes_a_new_one_and_never_overwrites_a_change_made_meanwhile(scene: Scene) -> None:
    created = scene.api.post("/memories", json={"content": "The user's team is Atlas.", "tags": ["work"]}).json()
    mid = created["id"]
    scene.api.patch(f"/memories/{mid}", json={"content": "The user's team is Borealis.", "tags": ["work", "team"]})
    page = scene.page()
    scene.open_console(page, fragment=f"#/memory/{mid}")
    expect(page.locator("#history")).to_be_visible()
    scene.api.patch(f"/memories/{mid}", json={"memory_type": "identity"})  # meanwhile

    page.get_by_role("button", name="Restore version 1").click()
    expect(page.get_by_role("dialog")).to_contain_text("gets that version's content, tags back")
    page.get_by_role("dialog").get_by_role("button", name="Restore this version").click()
    expect(page.locator("#notice")).to_have_text("The memory changed meanwhile: look at its new version and try again.")
    assert scene.api.get(f"/memories/{mid}", headers={"Prefer": "no-stamp"}).json()["version"] == 3

    page.get_by_role("button", name="Restore version 1").click()
    page.get_by_role("dialog").get_by_role("button", name="Restore this version").click()
    expect(page.locator("#notice")).to_have_text(f"Memory #{mid} is back to what version 1 said.")
    stored = scene.api.get(f"/memories/{mid}", headers={"Prefer": "no-stamp"}).json()
    assert (stored["content"], stored["tags"], stored["version"]) == ("The user's team is Atlas.", ["work"], 4)
    assert stored["memory_type"] == "fact"  # version 1's type too: the whole version comes back


def test_long_tags_wrap_in_their_cell_the_diff_keeps_words_apart_and_a_page_past_the_end_says_so(scene: Scene) -> None:
    tag = "project:" + "a-very-long-tag-name-" * 2 + "end"
    created = scene.api.post("/memories", json={"content": "Standup is on Monday.", "tags": [tag]}).json()
    scene.api.patch(f"/memories/{created['id']}", json={"content": "Standup is on Tuesday."})
    page = scene.page(viewport={"width": 1024, "height": 800})
    scene.open_console(page, fragment="#/?sort=created_at&limit=10")

    box = page.locator("tbody tr").first.locator("a.tag").bounding_box()
    cell = page.locator("tbody tr").first.locator("td.tags").bounding_box()
    assert box is not None
    assert cell is not None
    assert box["x"] + box["width"] <= cell["x"] + cell["width"]
    page.get_by_role("link", name=f"#{created['id']}", exact=True).click()
    expect(page.locator("ol.timeline p.diff").first).to_have_text("Standup is on Monday. Tuesday.")
    page.goto(f"{scene.base}/console/#/?offset=100000")
    expect(page.locator("#summary")).to_contain_text("past the last page (")
    page.get_by_role("button", name=re.compile(r"^Go to page \d+$")).click()
    expect(page.locator("#summary")).to_have_text(re.compile(r"· page (\d+) of \1$"))


def agent_memory(ddb_port: int, *arguments: str) -> str:
    """`agent-memory ...` on the shared serve's DynamoDB Local: its output."""
    command = [sys.executable, "-m", "local", *arguments, "--ddb-port", str(ddb_port)]
    done = subprocess.run(command, cwd=SERVE_ROOT, env=serve_env(), capture_output=True, text=True, check=True)
    return done.stdout


def test_many_selected_memories_are_changed_at_once_each_with_its_own_if_match(scene: Scene) -> None:
    ids = [
        scene.api.post("/memories", json={"content": f"Batch {n}.", "tags": ["batch"]}).json()["id"] for n in range(5)
    ]
    page = scene.page()
    scene.open_console(page, fragment="#/?tag=batch&limit=2")
    page.get_by_label(f"Select memory #{ids[0]}").check()
    expect(page.locator("#selected-count")).to_have_text("1 selected")
    page.get_by_role("button", name="Select all 5 matching this filter").click()
    expect(page.locator("#selected-count")).to_have_text("5 selected")
    screenshot(page, "console-bulk")
    scene.api.patch(f"/memories/{ids[2]}", json={"content": "Batch 2, changed meanwhile."})

    page.get_by_role("button", name="Mark invalid").click()
    expect(page.get_by_role("dialog")).to_contain_text("Mark 5 memories invalid?")
    page.get_by_role("dialog").get_by_role("button", name="Mark invalid").click()

    expect(page.locator("#bulk-summary")).to_have_text(
        "4 marked invalid, 0 left as they were (nothing to change), 1 failed."
    )
    expect(page.locator("#bulk-failures")).to_have_text(
        f"#{ids[2]}: it changed since the list was read; open it and try again (HTTP 412)"
    )
    screenshot(page, "console-bulk-summary")
    statuses = {m: scene.api.get(f"/memories/{m}", headers={"Prefer": "no-stamp"}).json()["status"] for m in ids}
    assert statuses == {m: "active" if m == ids[2] else "invalid" for m in ids}

    page.get_by_role("link", name="Back to the list").click()
    page.get_by_label("Select every memory on this page").check()
    page.get_by_label("Tag to add or remove").fill("reviewed")
    page.get_by_role("button", name="Add tag").click()
    page.get_by_role("dialog").get_by_role("button", name="Add tag").click()
    expect(page.locator("#bulk-summary")).to_have_text("2 tagged, 0 left as they were (nothing to change), 0 failed.")
    tagged = scene.api.get("/memories", params={"tag": "reviewed"}, headers={"Prefer": "no-stamp"}).json()
    assert sorted(m["id"] for m in tagged["items"]) == ids[:2]
    assert tagged["items"][0]["tags"] == ["batch", "reviewed"]


def test_what_the_list_shows_exports_as_ndjson_that_agent_memory_import_takes_and_as_csv(
    scene: Scene, shared_serve_engine: tuple[str, str, int], tmp_path: Path
) -> None:
    for n in range(3):
        created = scene.api.post("/memories", json={"content": f'Export {n}: \u2028 "quoted".', "tags": ["export"]})
    scene.api.patch(f"/memories/{created.json()['id']}", json={"memory_type": "event"})
    page = scene.page(accept_downloads=True)
    scene.open_console(page, fragment="#/?tag=export")
    page.get_by_text("Export what you see").click()
    page.get_by_label("with history (NDJSON)").check()
    with page.expect_download() as download:
        page.get_by_role("button", name="Download").click()
    expect(page.locator("#export-status")).to_have_text("Exported 3 memories.")
    exported = tmp_path / "browser.ndjson"
    download.value.save_as(exported)

    ddb_port = shared_serve_engine[2]
    target = f"imported-{uuid.uuid4().hex[:8]}"
    agent_memory(ddb_port, "import", "--namespace", target, str(exported))
    again = agent_memory(ddb_port, "export", "--namespace", target, "--history").splitlines()
    browser = exported.read_text(encoding="utf-8").splitlines()
    assert browser[1:] == again[1:]  # every memory line exactly as the CLI writes it
    header = json.loads(browser[0])
    assert {**header, "exported_at": None} == {
        **json.loads(again[0]),
        "namespace": header["namespace"],
        "exported_at": None,
    }

    page.get_by_label("Format").select_option("csv")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download").click()
    rows = download.value.path().read_bytes().decode().split("\r\n")
    assert rows[0] == "id,content,tags,memory_type,status,version,created_at,updated_at,last_accessed_at"
    assert len([row for row in rows[1:] if row]) == 3


def test_ask_ranks_memories_by_recall_shows_the_score_parts_on_hover_and_stamps_nothing(scene: Scene) -> None:
    before = scene.stamps()
    page = scene.page(bypass_csp=True)  # only so axe's own script can be injected
    scene.open_console(page)
    page.get_by_role("link", name="Ask").click()
    page.get_by_label("Ask in plain words").fill("What is the user allergic to?")
    page.get_by_role("button", name="Ask", exact=True).click()

    expect(page.locator("#summary")).to_contain_text("ranked")
    assert "#/ask?query=What+is+the+user+allergic+to%3F" in page.url
    first = page.locator("ol.answers > li").first
    expect(first.locator("a.id")).to_have_text("#4")  # "allergic" and its meaning: the peanuts
    expect(first.locator("span.parts")).to_be_hidden()
    first.locator(".score").hover()
    expect(first.locator("span.parts")).to_be_visible()
    expect(first.locator("span.parts")).to_contain_text("meaning: ")
    expect(first.locator("span.parts")).to_contain_text("words: ")
    screenshot(page, "console-ask")
    assert axe_violations(page) == []
    page.set_viewport_size({"width": 375, "height": 800})
    first.locator(".score").focus()  # the keyboard reaches the parts too
    expect(first.locator("span.parts")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    screenshot(page, "console-ask-phone")
    assert scene.stamps() == before  # asking is looking: Prefer: no-stamp


def test_a_view_whose_answer_comes_late_does_not_cover_the_view_the_person_moved_on_to(scene: Scene) -> None:
    page = scene.page()
    scene.open_console(page)
    expect(page.locator("#summary")).to_be_visible()
    held: list[Route] = []

    def hold(route: Route) -> None:
        held.append(route)

    page.route("**/memories/4/history?*", hold)
    page.get_by_role("link", name="#4", exact=True).click()
    expect(page.get_by_role("heading", name="Memory #4")).to_be_visible()  # still loading: its history is held
    page.get_by_role("link", name="Memories").click()
    expect(page.locator("#summary")).to_be_visible()

    with page.expect_response("**/memories/4/history?*"):
        held[0].continue_()
    page.evaluate("() => new Promise((resolve) => setTimeout(resolve, 200))")  # the late answer's view would be shown

    expect(page.locator("#summary")).to_be_visible()
    expect(page.locator("#history")).to_have_count(0)
