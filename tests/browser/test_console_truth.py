"""Keeping memories true in the console (issue #40, point 5), in Chromium against the shared `serve` and its offline
model: an invalid memory names the memory that superseded it, an active one that a newer, closely related memory may
replace is flagged and superseded in one action, "Mark invalid" says what it does, and "Mark active" undoes it (one
memory, or many at once)."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.chromium import PATIENCE_MS, screenshot
from tests.browser.console_scene import Scene, axe_violations, created

pytestmark = pytest.mark.browser

# What marking a memory invalid does, in the contract's terms (CONTRACT.md, Recall: its default status is active;
# Retrieval: without `status` only deleted memories are left out; GET /memories/{id} reads any memory not deleted).
INVALID_MEANS = (
    "Recall (and an agent's session primer) leaves it out unless asked for invalid memories; a search without a "
    "status filter (search_memories, GET /memories) still lists it, and it stays readable by its id."
)
INVALID_MEANS_MANY = (
    "Recall (and an agent's session primer) leaves them out unless asked for invalid memories; a search without a "
    "status filter (search_memories, GET /memories) still lists them, and each stays readable by its id."
)
NO_STAMP = {"Prefer": "no-stamp"}


def related(scene: Scene, mid: int) -> list[int]:
    """The ids `GET /memories/{mid}/related` lists, once the memory has its vector (a write normally waits for it; the
    serve's background embedding catches up with one the model was too slow for)."""
    deadline = time.monotonic() + PATIENCE_MS / 1000
    while True:
        answer = scene.api.get(f"/memories/{mid}/related", params={"limit": 3}).json()
        if not answer["waiting"]:
            return [item["memory"]["id"] for item in answer["items"]]
        assert time.monotonic() < deadline, f"memory {mid} never got its vector"
        time.sleep(0.2)


def stored(scene: Scene, mid: int) -> dict[str, Any]:
    record: dict[str, Any] = scene.api.get(f"/memories/{mid}", headers=NO_STAMP).json()
    return record


def checked(page: Page) -> str:
    """What the memory view's related check found (`none`, `newer`, `waiting`), once its answer is shown."""
    expect(page.locator("#may-replace[data-related]")).to_be_attached()
    found: str = page.locator("#may-replace").get_attribute("data-related") or ""
    return found


def test_a_superseded_memory_says_which_memory_superseded_it_and_the_link_opens_that_memory(scene: Scene) -> None:
    old = created(scene, "The user's manager is Priya.", tags=["work"])
    new = created(scene, "The user's manager is Tomás since the reorganisation.", tags=["work"], supersedes=[old])
    page = scene.page(bypass_csp=True)  # only so axe's own script can be injected
    scene.open_console(page, fragment=f"#/memory/{old}")

    panel = page.locator("#superseded")
    expect(panel).to_contain_text(f"Superseded by #{new}")
    newest = page.locator("ol.timeline li").first  # its change is shown capitalised, stored as `superseded`
    expect(newest).to_contain_text(re.compile(rf"superseded by #{new} ·", re.IGNORECASE))
    expect(newest.get_by_role("link", name=f"#{new}")).to_have_attribute("href", f"#/memory/{new}")
    assert checked(page) == "none"  # an invalid memory is never flagged: there is nothing left to replace
    assert axe_violations(page) == []
    screenshot(page, "console-superseded")

    panel.get_by_role("link", name=f"#{new}").click()
    expect(page.get_by_role("heading", name=f"Memory #{new}")).to_be_visible()
    expect(page.locator("dl.fields")).to_contain_text("Tomás")
    expect(page.locator("#superseded")).to_have_count(0)


def test_a_memory_marked_invalid_by_a_person_after_a_supersede_is_not_said_to_be_superseded(scene: Scene) -> None:
    old = created(scene, "The user's gym is FitOne.")
    created(scene, "The user's gym is now Urban Climb.", supersedes=[old])
    assert scene.api.patch(f"/memories/{old}", json={"status": "active"}).status_code == 200
    assert scene.api.patch(f"/memories/{old}", json={"status": "invalid"}).status_code == 200
    page = scene.page()
    scene.open_console(page, fragment=f"#/memory/{old}")

    expect(page.locator("#status-hint")).to_contain_text(INVALID_MEANS)
    expect(page.locator("#superseded")).to_have_count(
        0
    )  # why it is invalid now is the person's word, not the supersede


def test_an_active_memory_a_newer_related_one_may_replace_is_flagged_and_superseded_in_one_action(scene: Scene) -> None:
    old = created(scene, "The user's phone is a Pixel 7.")
    new = created(scene, "The user's phone is now a Pixel 9.")
    assert new in related(scene, old)  # the two say nearly the same: the model finds them above its related floor
    page = scene.page(bypass_csp=True)  # only so axe's own script can be injected
    scene.open_console(page, fragment=f"#/memory/{new}")
    assert checked(page) == "none"  # the older one is related, but it is not newer: no flag
    expect(page.get_by_role("button", name=re.compile("^Supersede by"))).to_have_count(0)

    page.goto(f"{scene.base}/console/#/memory/{old}")
    flag = page.locator("#may-replace")
    expect(flag).to_contain_text(re.compile(rf"#{new}, newer and closely related \(similarity 0\.\d\d\), may replace"))
    expect(flag).to_contain_text("The user's phone is now a Pixel 9.")
    assert checked(page) == "newer"
    assert axe_violations(page) == []
    screenshot(page, "console-may-replace")
    page.set_viewport_size({"width": 375, "height": 800})
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    screenshot(page, "console-may-replace-phone")
    page.set_viewport_size({"width": 1280, "height": 800})

    flag.get_by_role("button", name=f"Supersede by #{new}").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text(f"Supersede memory #{old} by #{new}?")
    expect(dialog).to_contain_text(INVALID_MEANS)
    assert axe_violations(page) == []
    screenshot(page, "console-supersede-confirmation")
    dialog.get_by_role("button", name=f"Supersede by #{new}").click()

    expect(page.locator("#notice")).to_contain_text(f"Memory #{old} is superseded by #{new}")
    expect(page.locator("#superseded")).to_contain_text(f"Superseded by #{new}")
    expect(page.locator("dl.fields")).to_contain_text("invalid")
    assert stored(scene, old)["status"] == "invalid"
    newest = scene.api.get(f"/memories/{old}/history").json()["items"][0]
    assert (newest["change"], newest["superseded_by"]) == ("superseded", new)
    assert stored(scene, new)["status"] == "active"


def test_a_memory_with_no_related_memory_is_not_flagged(scene: Scene) -> None:
    alone = created(scene, "The user's favourite board game is Carcassonne.")
    assert related(scene, alone) == []
    page = scene.page()
    scene.open_console(page, fragment=f"#/memory/{alone}")

    assert checked(page) == "none"
    expect(page.locator("#may-replace")).to_be_empty()


def test_mark_invalid_says_what_it_does_and_mark_active_undoes_it_on_one_memory(scene: Scene) -> None:
    mid = created(scene, "The user's dentist is Dr Okafor.")
    page = scene.page()
    scene.open_console(page, fragment=f"#/memory/{mid}")
    button = page.get_by_role("button", name="Mark invalid")
    expect(button).to_have_attribute("aria-describedby", "status-hint")
    expect(page.locator("#status-hint")).to_contain_text(INVALID_MEANS)

    button.click()
    expect(page.locator("#notice")).to_contain_text(f"Memory #{mid} is marked invalid. {INVALID_MEANS}")
    expect(page.locator("dl.fields")).to_contain_text("invalid")
    screenshot(page, "console-invalid-memory")
    # What the words say is what the API does.
    recalled = scene.api.get("/recall", params={"query": "Who is the user's dentist?"}, headers=NO_STAMP).json()
    assert mid not in [item["memory"]["id"] for item in recalled["items"]]
    listed = scene.api.get("/memories", params={"q": "Dr Okafor"}, headers=NO_STAMP).json()
    assert [m["id"] for m in listed["items"]] == [mid]
    assert stored(scene, mid)["status"] == "invalid"

    page.get_by_role("button", name="Mark active").click()
    expect(page.locator("#notice")).to_contain_text(f"Memory #{mid} is active again")
    expect(page.get_by_role("button", name="Mark invalid")).to_be_visible()
    record = stored(scene, mid)
    assert (record["status"], record["version"]) == ("active", 3)


def test_many_invalid_memories_are_marked_active_at_once_and_mark_invalid_says_what_it_does(scene: Scene) -> None:
    ids = [created(scene, f"Revived {n}.", tags=["revive"], status="invalid") for n in range(3)]
    scene.api.patch(f"/memories/{ids[2]}", json={"status": "active"})
    page = scene.page()
    scene.open_console(page, fragment="#/?tag=revive")
    page.get_by_label("Select every memory on this page").check()

    page.get_by_role("button", name="Mark invalid").click()
    expect(page.get_by_role("dialog")).to_contain_text(INVALID_MEANS_MANY)
    screenshot(page, "console-bulk-mark-invalid")
    page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
    page.get_by_role("button", name="Mark active").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Mark 3 memories active?")
    dialog.get_by_role("button", name="Mark active").click()

    expect(page.locator("#bulk-summary")).to_have_text(
        "2 marked active, 1 left as they were (nothing to change), 0 failed."
    )
    assert [stored(scene, m)["status"] for m in ids] == ["active"] * 3
    assert [stored(scene, m)["version"] for m in ids] == [2, 2, 2]  # the active one was not written
