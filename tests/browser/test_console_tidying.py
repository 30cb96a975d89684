"""Tidying many memories in few clicks (issue #42, item 4, and the list's parts of item 7), in Chromium against the
shared `serve`: a selection that survives a search, shift-click ranges, an action bar that stays in view, rows that
open with one click, an empty result that names its filters, only the actions that apply, confirmations that list
what they touch, Undo, a first page newest first that fills a screen, whole tags and sort names, dense rows and large
checkboxes on a phone, and an export of everything in one download named by its filter and date."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.chromium import SCREENSHOTS, screenshot
from tests.browser.console_scene import Scene, axe_violations, created, search

pytestmark = pytest.mark.browser

NO_STAMP = {"Prefer": "no-stamp"}


def stored(scene: Scene, mid: int) -> dict[str, Any]:
    """A memory as the API holds it, read without stamping (a deleted one from the list of deleted memories)."""
    found = scene.api.get(f"/memories/{mid}", headers=NO_STAMP)
    if found.status_code == 200:
        record: dict[str, Any] = found.json()
        return record
    deleted = scene.api.get("/memories", params={"status": "deleted", "limit": 100}, headers=NO_STAMP)
    return next(m for m in deleted.json()["items"] if m["id"] == mid)


def bar(page: Page) -> Any:
    return page.get_by_role("region", name="Selected memories")


def test_a_selection_survives_a_search_and_shift_click_selects_a_range(scene: Scene) -> None:
    page = scene.page()
    scene.open_console(page, fragment="#/?sort=id&limit=10")

    page.get_by_label("Select memory #3").check()
    page.get_by_label("Select memory #7").click(modifiers=["Shift"])
    expect(page.locator("#selected-count")).to_have_text("5 selected")
    checked = page.locator("input.select-row:checked")
    expect(checked).to_have_count(5)
    assert [box.get_attribute("aria-label") for box in checked.all()] == [f"Select memory #{n}" for n in range(3, 8)]

    search(page, **{"Text contains": "PEANUT"})  # memory #4 only: the other four stay selected, and it says so
    expect(page.locator("#summary")).to_have_text("1 memory · page 1 of 1")
    expect(page.locator("#selected-count")).to_have_text("5 selected")
    expect(bar(page)).to_contain_text("4 not on this page")
    expect(page.get_by_label("Select memory #4")).to_be_checked()
    page.get_by_role("button", name="Clear", exact=True).click()
    expect(page.locator("#selected-count")).to_have_text("5 selected")
    page.get_by_role("button", name="Clear selection").click()
    expect(bar(page)).to_be_hidden()
    expect(page.locator("input.select-row:checked")).to_have_count(0)


# A short desktop window, and a phone.
@pytest.mark.parametrize(("name", "width", "height"), [("desktop", 1280, 400), ("phone", 375, 700)])
def test_the_action_bar_is_in_view_after_ticking_the_last_row(scene: Scene, name: str, width: int, height: int) -> None:
    page = scene.page(viewport={"width": width, "height": height})
    scene.open_console(page, fragment="#/?sort=id&limit=50")
    expect(page.locator("#summary")).to_be_visible()

    last = page.locator("input.select-row").last
    last.check()

    expect(bar(page)).to_be_in_viewport(ratio=1)
    assert page.evaluate("window.scrollY") > 0  # the last row is further down than the first screen
    box = last.bounding_box()
    assert box is not None
    assert min(box["width"], box["height"]) >= 24  # a touch target, not a 13 px box
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    screenshot(page, f"console-tidying-bar-{name}")
    page.screenshot(path=str(SCREENSHOTS / f"console-tidying-bar-{name}-screen.png"))  # the screen as it is seen
    page.evaluate("window.scrollTo(0, 0)")
    page.locator("input.select-row").first.check()  # a row high up: the bar waits at the bottom of the screen
    expect(bar(page)).to_be_in_viewport(ratio=1)
    if name == "phone":  # dense rows: more than four memories on a screen, not one and a half
        for row in page.locator("tbody tr").all()[:6]:
            row_box = row.bounding_box()
            assert row_box is not None
            assert row_box["height"] < height / 4, row_box
        # The box that selects the whole page stays on a phone, though the other headings fold away.
        whole_page = page.get_by_role("checkbox", name="Select every memory on this page")
        whole_page.scroll_into_view_if_needed()
        expect(whole_page).to_be_in_viewport()
        box = whole_page.bounding_box()
        assert box is not None
        assert box["x"] >= 0
        assert min(box["width"], box["height"]) >= 24
        whole_page.check()
        expect(page.locator("input.select-row:not(:checked)")).to_have_count(0)


def test_a_row_click_opens_the_memory_but_its_checkbox_and_tags_do_their_own(scene: Scene) -> None:
    page = scene.page()
    scene.open_console(page, fragment="#/?sort=id&limit=10")

    row = page.locator('tbody tr[data-id="3"]')
    row.locator("td.select").click()  # around the checkbox: still the checkbox
    expect(page.get_by_label("Select memory #3")).to_be_checked()
    expect(page.locator("#summary")).to_be_visible()
    row.locator("td.content").click()
    expect(page.get_by_role("heading", name="Memory #3")).to_be_visible()
    assert page.url.endswith("#/memory/3")
    page.go_back()
    page.locator('tbody tr[data-id="5"]').get_by_role("link", name="travel").click()
    expect(page.locator("#summary")).to_have_text("1 memory · page 1 of 1")
    assert page.url.endswith("#/?tag=travel")
    page.locator("h1").click()
    page.keyboard.press("j")  # the keyboard still opens the memory in focus
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Memory #5")).to_be_visible()


def test_zero_results_name_the_filters_in_force_and_one_click_clears_them(scene: Scene) -> None:
    page = scene.page(bypass_csp=True)  # only so axe's own script can be injected
    scene.open_console(page, fragment="#/?tag=needs-review&q=lisbon&sort=id")

    empty = page.locator("#empty")
    expect(empty).to_contain_text("No memory matches")
    expect(empty).to_contain_text('tag "needs-review"')
    expect(empty).to_contain_text('text contains "lisbon"')
    screenshot(page, "console-tidying-empty")
    assert axe_violations(page) == []
    empty.get_by_role("button", name="Clear filters").click()

    expect(page.locator("#summary")).to_contain_text("memories · page 1 of")
    assert page.url.endswith("#/?sort=id")  # the filters gone, the sort kept


def test_deleted_rows_offer_restore_and_purge_only_and_confirmations_list_what_they_touch(scene: Scene) -> None:
    ids = [created(scene, f"Gone {n}: an old note to tidy.", tags=["gone"]) for n in range(2)]
    for mid in ids:
        assert scene.api.delete(f"/memories/{mid}").status_code == 204
    page = scene.page()
    scene.open_console(page, fragment="#/?tag=gone&status=deleted&sort=id")
    page.get_by_label("Select every memory on this page").check()

    offered = bar(page).get_by_role("button").filter(has_not_text="Select all").all_inner_texts()
    assert [o for o in offered if o != "Clear selection"] == ["Restore", "Purge"]
    bar(page).get_by_role("button", name="Purge").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Purge 2 memories for good?")
    expect(dialog.locator("li")).to_have_text(
        [f"#{ids[0]} Gone 0: an old note to tidy.", f"#{ids[1]} Gone 1: an old note to tidy."]
    )
    dialog.get_by_role("button", name="Cancel").click()
    bar(page).get_by_role("button", name="Restore").click()
    page.get_by_role("dialog").get_by_role("button", name="Restore").click()
    expect(page.locator("#bulk-summary")).to_have_text("2 restored, 0 left as they were (nothing to change), 0 failed.")

    page.goto(f"{scene.base}/console/#/?sort=id&limit=25")
    page.get_by_label("Select every memory on this page").check()
    count = page.locator("input.select-row:checked").count()
    assert count > 10
    bar(page).get_by_role("button", name="Delete").click()
    dialog = page.get_by_role("dialog")
    expect(dialog.locator("li")).to_have_count(10)
    expect(dialog.locator("li").first).to_have_text("#1 The user prefers concise answers with examples.")
    expect(dialog).to_contain_text(f"and {count - 10} more")
    screenshot(page, "console-tidying-confirmation")
    dialog.get_by_role("button", name="Cancel").click()


def test_undo_after_a_bulk_change_puts_every_memory_back_through_the_api(scene: Scene) -> None:
    ids = [created(scene, f"Undo {n}: a note marked by mistake.", tags=["undo"]) for n in range(3)]
    page = scene.page()
    scene.open_console(page, fragment="#/?tag=undo")
    page.get_by_label("Select every memory on this page").check()
    bar(page).get_by_role("button", name="Mark invalid").click()
    page.get_by_role("dialog").get_by_role("button", name="Mark invalid").click()
    expect(page.locator("#bulk-summary")).to_contain_text("3 marked invalid")
    assert [stored(scene, m)["status"] for m in ids] == ["invalid"] * 3

    page.get_by_role("button", name="Undo").click()

    expect(page.locator("#bulk-summary")).to_have_text("Undone: 3 marked active again, 0 failed.")
    records = [stored(scene, m) for m in ids]
    assert [(r["status"], r["version"]) for r in records] == [("active", 3)] * 3  # one more version each
    screenshot(page, "console-tidying-undone")
    page.get_by_role("link", name="Back to the list").click()
    page.get_by_label("Select every memory on this page").check()
    bar(page).get_by_role("button", name="Delete").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(page.locator("#bulk-summary")).to_contain_text("3 deleted")
    page.get_by_role("button", name="Undo").click()
    expect(page.locator("#bulk-summary")).to_have_text("Undone: 3 restored, 0 failed.")
    assert [stored(scene, m)["status"] for m in ids] == ["active"] * 3


def test_the_list_opens_newest_first_a_screenful_at_a_time_with_whole_sort_names_and_tags(scene: Scene) -> None:
    mid = created(scene, "Check the flight times again. " * 6, tags=["needs-review", "travel"])
    page = scene.page(viewport={"width": 1280, "height": 900})
    scene.open_console(page, fragment="#/memories")

    expect(page.locator("tbody tr").first).to_have_attribute("data-id", str(mid))  # the newest first
    shown = [int(row.get_attribute("data-id") or 0) for row in page.locator("tbody tr").all()]
    assert shown == sorted(shown, reverse=True)
    total = scene.api.get("/memories", params={"limit": 1}, headers=NO_STAMP).json()["total"]
    assert len(shown) == min(total, 25)
    expect(page.get_by_label("Per page", exact=True)).to_have_value("25")
    assert page.url.endswith("#/memories")  # nothing chosen yet: the address names no filter
    sort = page.get_by_label("Sort by", exact=True)
    expect(sort).to_have_value("created_at")
    for value in ["last_accessed_at", "created_at", "updated_at"]:
        sort.select_option(value)
        room, needed = sort.evaluate(
            """select => {
              const style = getComputedStyle(select);
              const context = document.createElement("canvas").getContext("2d");
              context.font = style.font;
              const text = context.measureText(select.selectedOptions[0].text).width;
              return [select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight), text + 20];
            }"""
        )
        assert room >= needed, (value, room, needed)  # the name and the box's arrow fit: nothing clipped
    tag = page.locator(f'tbody tr[data-id="{mid}"] a.tag', has_text="needs-review")
    line = tag.evaluate("tag => parseFloat(getComputedStyle(tag).lineHeight)")
    box = tag.bounding_box()
    assert box is not None
    assert box["height"] < 1.5 * line  # one line: a tag never breaks inside
    screenshot(page, "console-tidying-default-list")


def test_everything_exports_in_one_download_named_by_its_filter_and_date(scene: Scene) -> None:
    gone = created(scene, "An export of everything keeps this deleted one too.", tags=["export-all"])
    kept = created(scene, "An export of everything keeps this one.", tags=["export-all"])
    assert scene.api.delete(f"/memories/{gone}").status_code == 204
    page = scene.page(accept_downloads=True)
    scene.open_console(page, fragment="#/memories")
    expect(page.locator("#summary")).to_be_visible()
    page.get_by_text("Export what you see").click()
    page.get_by_label("with the deleted ones").check()
    with page.expect_download() as download:
        page.get_by_role("button", name="Download").click()

    lines = [json.loads(line) for line in download.value.path().read_text(encoding="utf-8").splitlines()]
    assert lines[0]["include_deleted"] is True
    exported = {line["memory"]["id"]: line for line in lines[1:]}
    assert exported[gone]["prior_status"] == "active"
    assert exported[kept]["memory"]["status"] == "active"
    assert [line["memory"]["id"] for line in lines[1:]] == sorted(exported)
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    name = download.value.suggested_filename
    assert re.fullmatch(rf"agent-memory-{scene.namespace}-everything-{today}-\d{{4}}\.ndjson", name), name

    page.goto(f"{scene.base}/console/#/?tag=export-all&status=deleted")
    expect(page.locator("#summary")).to_have_text("1 memory · page 1 of 1")
    page.get_by_text("Export what you see").click()
    expect(page.get_by_label("with the deleted ones")).to_have_count(0)  # they are what is shown
    page.get_by_label("Format").select_option("csv")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download").click()
    name = download.value.suggested_filename
    assert re.fullmatch(rf"agent-memory-{scene.namespace}-status-deleted-tag-export-all-{today}-\d{{4}}\.csv", name)
