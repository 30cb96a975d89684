"""The console's overview in Chromium against the shared `serve` (issue #42 item 6): opening the console shows how many
memories there are by status and type (each count a link to that list), and what the agents changed in the last days,
newest first, by which key, each change a link to its memory. The list keeps its addresses."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.chromium import screenshot
from tests.browser.console_scene import Scene, axe_violations

pytestmark = pytest.mark.browser

NO_STAMP = {"Prefer": "no-stamp"}
STATUSES = ["active", "invalid", "deleted"]
TYPES = ["preference", "fact", "identity", "event"]


def test_the_overview_counts_by_status_and_type_as_the_api_does_and_each_count_opens_its_list(scene: Scene) -> None:
    page = scene.page(viewport={"width": 1280, "height": 900}, bypass_csp=True)  # only so axe's script can run
    scene.open_console(page, fragment="#/")

    expect(page.get_by_role("heading", name="Overview", exact=True)).to_be_visible()
    counts = page.locator("#counts")
    for status in STATUSES:
        for memory_type in TYPES:
            params: dict[str, str | int] = {"status": status, "memory_type": memory_type, "limit": 1}
            total = scene.api.get("/memories", params=params, headers=NO_STAMP).json()["total"]
            cell = counts.locator(f'[data-status="{status}"][data-type="{memory_type}"]')
            expect(cell).to_have_text(str(total))
    active = scene.api.get("/memories", params={"status": "active", "limit": 1}, headers=NO_STAMP).json()["total"]
    expect(counts.locator('[data-status="active"][data-type=""]')).to_have_text(str(active))
    expect(page.locator("#activity li").first).to_be_visible()
    assert axe_violations(page) == []
    screenshot(page, "console-overview")

    identity = scene.api.get(
        "/memories", params={"status": "active", "memory_type": "identity", "limit": 1}, headers=NO_STAMP
    ).json()["total"]
    counts.locator('[data-status="active"][data-type="identity"] a').click()
    expect(page.locator("#summary")).to_contain_text(f"{identity} memor")
    assert re.search(r"#/\?(status=active&memory_type=identity|memory_type=identity&status=active)$", page.url)
    page.get_by_role("link", name="Overview", exact=True).click()
    expect(page.get_by_role("heading", name="Overview", exact=True)).to_be_visible()
    page.get_by_role("link", name="Memories", exact=True).click()
    expect(page.locator("#summary")).to_be_visible()  # the whole list, at its own address
    page.goto(f"{scene.base}/console/#/?status=invalid")  # a filtered list's address still opens the list
    expect(page.get_by_label("Status", exact=True)).to_have_value("invalid")


def test_a_change_an_agent_made_shows_in_recent_activity_with_its_key_and_opens_the_memory(scene: Scene) -> None:
    agent = scene.api.get("/key").json()["key_id"]
    old = scene.api.post("/memories", json={"content": "The user's dentist is Dr. Alves."}).json()
    new = scene.api.post(
        "/memories", json={"content": "The user's dentist is Dr. Brandt.", "supersedes": [old["id"]]}
    ).json()
    page = scene.page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    scene.open_console(page, fragment="#/")

    activity = page.locator("#activity")
    superseded = activity.locator(f'li[data-id="{old["id"]}"]', has_text="superseded")
    expect(superseded).to_contain_text(agent)
    expect(superseded.locator(f'a[href="#/memory/{new["id"]}"]')).to_have_count(1)  # by what
    created = activity.locator(f'li[data-id="{new["id"]}"]', has_text="created")
    expect(created).to_contain_text("Dr. Brandt")
    expect(created).to_contain_text(agent)
    newest = {activity.locator("li").nth(n).get_attribute("data-id") for n in range(2)}  # one write made both
    assert newest == {str(old["id"]), str(new["id"])}
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390  # nothing wider than the phone
    screenshot(page, "console-overview-phone")
    created.get_by_role("link", name=f"#{new['id']}", exact=True).click()
    expect(page.get_by_role("heading", name=f"Memory #{new['id']}")).to_be_visible()
