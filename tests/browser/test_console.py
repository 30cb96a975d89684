"""The memory console in a real browser (Debian's Chromium, driven by Playwright) against a running `agent-memory
serve` on DynamoDB Local: a person pastes a key, lists, filters by every field, pages, opens, edits, meets a
conflicting edit made through the API meanwhile, invalidates, deletes, restores and purges; what they only looked at
keeps its `last_accessed_at`. Wrong keys, read-only keys and a busy store get human messages; axe-core finds no
violation on any view; keyboard alone works; the page fits a phone and 200 % zoom. Screenshots of the main views go
to .pytest_cache/screenshots/."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, Route, expect

from tests.browser.chromium import screenshot
from tests.browser.console_scene import AXE, Scene, axe_violations, search, tab_to

pytestmark = pytest.mark.browser


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
    expect(page.locator("#summary")).to_have_text("12 memories · page 1 of 1")  # 25 a page
    expect(page.locator("tbody a.id").first).to_have_text("#12")  # the newest first
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
    search(page, **{"Sort by": "updated_at", "Per page": "25"})
    expect(page.locator("#summary")).to_have_text("12 memories · page 1 of 1")
    expect(page.locator("tbody a.id").first).to_have_text("#12")
    page.get_by_role("button", name="Clear").click()

    search(page, **{"Per page": "10"})
    page.get_by_role("button", name="Next page").click()
    expect(page.locator("#summary")).to_have_text("12 memories · page 2 of 2")
    assert page.url.endswith("#/?sort=created_at&limit=10&offset=10")
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
    expect(page.locator("#notice")).to_have_text("Your changes are merged and saved as version 4.")
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


def test_a_view_still_waiting_when_the_person_moves_on_does_not_render_over_what_they_type(scene: Scene) -> None:
    # The sign-in's view waits for the key names; the person opens New memory and types meanwhile.
    page = scene.page()
    held: list[Route] = []

    def hold_the_first(route: Route) -> None:
        if held:
            route.continue_()
        else:
            held.append(route)

    page.route("**/keys", hold_the_first)
    scene.open_console(page)
    page.get_by_role("link", name="New memory").click()
    page.get_by_label("Other tags").fill("typed meanwhile")

    with page.expect_response("**/keys"):
        held[0].continue_()
    page.evaluate("() => new Promise((resolve) => setTimeout(resolve, 200))")  # the late view would be shown by now

    expect(page.get_by_label("Other tags")).to_have_value("typed meanwhile")
    expect(page.get_by_role("heading", name="New memory")).to_be_visible()


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
    page.goto(f"{scene.base}/console/#/memories")  # the list (the console opens on its overview)
    tab_to(page, page.locator("#key"), 5)
    page.keyboard.type(scene.key)
    page.keyboard.press("Enter")
    expect(page.locator("#summary")).to_be_visible()
    tab_to(page, page.get_by_role("link", name="#3", exact=True), 60)
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Memory #3")).to_be_visible()
    tab_to(page, page.get_by_role("button", name="Edit", exact=True), 20)
    page.keyboard.press("Enter")
    expect(page.get_by_label("Content")).to_be_visible()
    page.get_by_label("Content").focus()
    page.keyboard.press("End")
    page.keyboard.type(" since 2021")
    tab_to(page, page.get_by_role("button", name="Save", exact=True), 30)
    page.keyboard.press("Enter")

    expect(page.locator("#notice")).to_have_text("Memory #3 is saved.")
    assert scene.api.get("/memories/3", headers={"Prefer": "no-stamp"}).json()["content"].endswith("since 2021")


def test_tabbing_to_what_the_keyboard_never_reaches_fails_saying_so(scene: Scene) -> None:
    page = scene.page()
    scene.open_console(page)
    heading = page.get_by_role("heading", name="Memories")  # shown, never focused by Tab

    with pytest.raises(pytest.fail.Exception, match="3 presses of Tab never reached"):
        tab_to(page, heading, 3)


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
    both_widths(page, "console-discard")
    page.get_by_role("dialog").get_by_role("button", name="Discard changes").click()
    expect(page.locator("#summary")).to_be_visible()
    new_views(scene, page, views)

    assert {view: [v["id"] for v in found] for view, found in views.items()} == {view: [] for view in views}


def both_widths(page: Page, name: str) -> None:
    """A screenshot of the view as it is, and one at a phone's width (people look at both)."""
    screenshot(page, f"{name}-desktop")
    size = page.viewport_size
    page.set_viewport_size({"width": 375, "height": 800})
    screenshot(page, f"{name}-phone")
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    if size is not None:
        page.set_viewport_size(size)


def new_views(scene: Scene, page: Page, views: dict[str, list[dict[str, Any]]]) -> None:
    """The views of round two: filter errors, deleted rows, selection and export, shortcuts, JSON, a bulk action's
    confirmation and summary, a merge, a memory deleted while edited."""
    page.goto(f"{scene.base}/console/#/?sort=bogus")
    expect(page.locator("#sort-error")).to_be_visible()
    views["filter errors"] = axe_violations(page)
    both_widths(page, "console-filter-errors")
    created = scene.api.post("/memories", json={"content": "Axe looks at this one."}).json()
    scene.api.delete(f"/memories/{created['id']}")
    page.goto(f"{scene.base}/console/#/?status=deleted")
    expect(page.locator(".deleted-at").first).to_be_visible()
    views["deleted list"] = axe_violations(page)
    both_widths(page, "console-deleted-list")
    scene.api.post(f"/memories/{created['id']}/restore")
    page.goto(f"{scene.base}/console/#/?sort=created_at")
    page.get_by_label(f"Select memory #{created['id']}").check()
    page.get_by_text("Export what you see").click()
    views["selection and export"] = axe_violations(page)
    both_widths(page, "console-selection-export")
    page.locator("h1").click()
    page.keyboard.press("?")
    views["shortcuts"] = axe_violations(page)
    both_widths(page, "console-shortcuts")
    page.keyboard.press("Escape")
    page.get_by_label("Tag to add or remove").fill("axe")
    page.get_by_role("button", name="Add tag").click()
    views["bulk confirmation"] = axe_violations(page)
    both_widths(page, "console-bulk-confirmation")
    page.get_by_role("dialog").get_by_role("button", name="Add tag").click()
    expect(page.locator("#bulk-summary")).to_be_visible()
    views["bulk summary"] = axe_violations(page)
    both_widths(page, "console-bulk-summary")
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
    both_widths(page, "console-merge")
    page.get_by_role("button", name="Discard my changes").click()
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Content").fill("Axe looks at this one, edited again.")
    scene.api.delete(f"/memories/{created['id']}")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#deleted")).to_be_visible()
    views["deleted while edited"] = axe_violations(page)
    both_widths(page, "console-deleted-meanwhile")


def test_axe_finds_no_violation_on_the_dialogs_a_search_preview_and_a_read_only_keys_view(scene: Scene) -> None:
    if not AXE.exists():
        pytest.fail("axe-core is missing: run `make install` (npm ci in tests/browser)")
    views: dict[str, list[dict[str, Any]]] = {}
    page = scene.page(bypass_csp=True)  # only so axe's own script can be injected
    scene.open_console(page, fragment="#/?q=uses%20uv")
    expect(page.locator("tbody mark").first).to_have_text("uses uv")
    views["list with a search preview"] = axe_violations(page)
    both_widths(page, "console-preview-list")

    created = scene.api.post("/memories", json={"content": "The user's desk is by the window.", "tags": ["work"]})
    mid = created.json()["id"]
    scene.api.patch(f"/memories/{mid}", json={"content": "The user's desk is by the door."})
    page.goto(f"{scene.base}/console/#/memory/{mid}")
    page.get_by_role("button", name="Restore version 1").click()
    expect(page.get_by_role("dialog")).to_contain_text("Restore version 1?")
    views["restore this version"] = axe_violations(page)
    both_widths(page, "console-restore-version")
    page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
    page.get_by_role("button", name="Delete", exact=True).click()
    expect(page.get_by_role("dialog")).to_contain_text(f"Delete memory #{mid}?")
    views["delete confirmation"] = axe_violations(page)
    both_widths(page, "console-delete-confirmation")
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    page.get_by_role("button", name="Purge").click()
    expect(page.get_by_role("dialog")).to_contain_text("Purging is final")
    views["purge confirmation"] = axe_violations(page)
    both_widths(page, "console-purge-confirmation")
    page.get_by_role("dialog").get_by_role("button", name="Cancel").click()

    reader = scene.page(bypass_csp=True)
    scene.open_console(reader, key=scene.reader)
    expect(reader.locator("#summary")).to_be_visible()
    views["read-only list"] = axe_violations(reader)
    reader.goto(f"{scene.base}/console/#/memory/2")
    expect(reader.locator("main")).to_contain_text("This key may only read: it cannot change memories.")
    views["read-only memory"] = axe_violations(reader)
    both_widths(reader, "console-read-only")

    assert {view: [v["id"] for v in found] for view, found in views.items()} == {view: [] for view in views}


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
