"""The console's list and reading views in Chromium against the shared `serve` (issue #29): a short preview with the
match highlighted, deleted rows' dates, the sort's column, filter errors once and in place, tags that filter, copying,
keyboard shortcuts, the record as JSON, long tags, the diff and a page past the end."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from tests.browser.chromium import screenshot
from tests.browser.console_scene import Scene

pytestmark = pytest.mark.browser


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
    page.goto(f"{scene.base}/console/#/memories")
    expect(page.locator(f'tbody tr[data-id="{created["id"]}"]')).to_have_count(1)  # the newest first, by default
    page.goto(f"{scene.base}/console/#/?sort=created_at&limit=10")
    first_line = page.locator(f'tbody tr[data-id="{created["id"]}"] td.content').inner_text()
    assert (first_line[:24], first_line[-1]) == ("Line 0 of a long runbook", "…")
    assert len(first_line) < 200
    page.get_by_role("link", name=f"#{created['id']}", exact=True).click()
    expect(page.locator("dl.fields")).to_contain_text("The zanzibar step comes last.")  # the full text


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
    scene.open_console(page, fragment="#/?sort=id")
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
    expect(page.locator("tbody a.id").nth(1)).to_be_focused()
    page.keyboard.press("k")
    first = page.locator("tbody a.id").first
    expect(first).to_be_focused()
    mid = first.inner_text()  # the newest memory: the list's default order
    page.keyboard.press("Enter")
    expect(page.get_by_role("button", name="Edit")).to_be_visible()
    page.keyboard.press("e")
    expect(page.get_by_role("heading", name=f"Edit memory {mid}")).to_be_visible()


def test_a_memorys_full_record_reads_as_json(scene: Scene) -> None:
    page = scene.page()
    scene.open_console(page, fragment="#/memory/4")
    page.get_by_role("link", name="Full record as JSON").click()

    shown = json.loads(page.locator("pre.json").inner_text())

    assert shown == scene.api.get("/memories/4", headers={"Prefer": "no-stamp"}).json()
    screenshot(page, "console-json")


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


def test_a_fixed_filter_field_loses_its_invalid_mark_and_focus_moves_on_to_the_field_still_wrong(scene: Scene) -> None:
    page = scene.page()
    scene.open_console(page, fragment="#/?sort=bogus&limit=0")
    sort = page.get_by_label("Sort by", exact=True)
    limit = page.get_by_label("Per page", exact=True)
    expect(sort).to_be_focused()  # the first field that is wrong
    expect(limit).to_have_attribute("aria-invalid", "true")

    sort.select_option("created_at")
    expect(sort).not_to_have_attribute("aria-invalid", "true")
    expect(sort).not_to_have_attribute("aria-describedby", re.compile("sort-error"))  # nothing reads its error out
    expect(limit).to_have_attribute("aria-invalid", "true")  # the other field is still wrong, and says so
    page.get_by_role("button", name="Search").click()

    expect(page.locator(".field-error")).to_have_count(1)
    expect(limit).to_be_focused()  # focus goes to what is still wrong, not back to the fixed field
    expect(page.get_by_label("Sort by", exact=True)).not_to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("Sort by", exact=True)).to_have_value("created_at")
    expect(limit).to_have_attribute("aria-describedby", "limit-error")

    limit.select_option("10")
    expect(limit).not_to_have_attribute("aria-invalid", "true")
    expect(page.locator("#limit-error")).to_have_count(0)
    page.get_by_role("button", name="Search").click()

    expect(page.locator("#summary")).to_be_visible()
    expect(page.locator("[aria-invalid]")).to_have_count(0)
    expect(page.locator("#view")).to_be_focused()  # the list shown: focus on the view's content, no field's
    assert page.url.endswith("#/?sort=created_at&limit=10")
