"""The console's changes in Chromium against the shared `serve` (issues #29 and #27): typed input never lost without
asking, a memory deleted while edited, a change made meanwhile merged, an older version restored, many memories at
once, export, and a late answer never covering the next view."""

from __future__ import annotations

import json
import re
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from playwright.sync_api import Locator, Page, Request, Route, expect

from tests.browser.chromium import PATIENCE_MS, screenshot
from tests.browser.console_scene import Scene, agent_memory, keys_create

pytestmark = pytest.mark.browser


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
    expect(page.locator("#deleted")).to_contain_text(f"by key agent ({agent_id}); purged in 30 days unless restored.")
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
    expect(page.get_by_role("heading", name=f"What key agent ({agent_id}) changed")).to_be_visible()
    conflict = page.locator('fieldset[data-field="content"]')
    expect(conflict).to_contain_text(f"Content: you and key agent ({agent_id}) both changed it")
    expect(conflict).to_contain_text("Team sync is on Tuesday.")
    expect(conflict).to_contain_text("Team sync is on Monday at 10.")
    expect(page.locator("main")).to_contain_text("you added weekly; you removed meeting")
    expect(page.locator('fieldset[data-field="memory_type"]')).to_have_count(0)
    screenshot(page, "console-merge")
    page.get_by_label("Content to save").fill("Team sync is on Tuesday at 10.")
    page.get_by_role("button", name="Save merged changes").click()

    expect(page.locator("#notice")).to_have_text("Your changes are merged and saved as version 3.")  # as stored
    stored = scene.api.get(f"/memories/{created['id']}", headers={"Prefer": "no-stamp"}).json()
    assert stored["content"] == "Team sync is on Tuesday at 10."
    assert stored["tags"] == ["work", "calendar", "weekly"]  # the agent's tag kept, the person's change applied
    assert stored["memory_type"] == "event"
    assert [sorted(body) for body in sent] == [["content", "tags"], ["content", "tags"]]  # never a field not changed


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


def test_many_selected_memories_are_changed_at_once_each_with_its_own_if_match(scene: Scene) -> None:
    ids = [
        scene.api.post("/memories", json={"content": f"Batch {n}.", "tags": ["batch"]}).json()["id"] for n in range(5)
    ]
    page = scene.page()
    scene.open_console(page, fragment="#/?tag=batch&limit=2&sort=id")
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
    gone = scene.api.post("/memories", json={"content": "-5 C is too cold.", "tags": ["export"], "status": "invalid"})
    scene.api.delete(f"/memories/{gone.json()['id']}")
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

    page.goto(f"{scene.base}/console/#/?tag=export&status=deleted")  # deleted ones: restorable after an import
    page.get_by_text("Export what you see").click()
    with page.expect_download() as download:
        page.get_by_role("button", name="Download").click()
    download.value.save_as(exported)
    target = f"imported-{uuid.uuid4().hex[:8]}"
    agent_memory(ddb_port, "import", "--namespace", target, str(exported))
    again = agent_memory(ddb_port, "export", "--namespace", target, "--include-deleted").splitlines()
    browser = exported.read_text(encoding="utf-8").splitlines()
    assert browser[1:] == again[1:]
    assert json.loads(browser[1])["prior_status"] == "invalid"
    page.get_by_label("Format").select_option("csv")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download").click()
    cells = download.value.path().read_bytes().decode().split("\r\n")[1].split(",")
    assert cells[1] == "'-5 C is too cold."  # a spreadsheet does not take it for a formula


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


def stored(scene: Scene, mid: int) -> dict[str, Any]:
    """A memory as the API holds it, read without stamping (a deleted one from the list of deleted memories)."""
    found = scene.api.get(f"/memories/{mid}", headers={"Prefer": "no-stamp"})
    if found.status_code == 200:
        record: dict[str, Any] = found.json()
        return record
    deleted = scene.api.get("/memories", params={"status": "deleted", "limit": 100}, headers={"Prefer": "no-stamp"})
    return next(m for m in deleted.json()["items"] if m["id"] == mid)


def act_on_the_page(page: Page, button: str, asked: str, tag: str = "") -> Locator:
    """Every memory of the page selected (and `tag` typed), `button` clicked: its confirmation, which says `asked`."""
    page.get_by_label("Select every memory on this page").check()
    if tag:
        page.get_by_label("Tag to add or remove").fill(tag)
    page.get_by_role("button", name=button, exact=True).click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text(asked)
    return dialog


def test_selected_memories_are_untagged_deleted_and_restored_at_once_with_progress_while_it_runs(scene: Scene) -> None:
    ids = [
        scene.api.post("/memories", json={"content": f"Sweep {n}.", "tags": ["sweep", "stale"][: 2 - n // 2]}).json()[
            "id"
        ]
        for n in range(3)
    ]
    scene.api.patch(f"/memories/{ids[2]}", json={"status": "invalid"})
    page = scene.page()
    scene.open_console(page, fragment="#/?tag=sweep")
    act_on_the_page(page, "Remove tag", "Remove the tag stale from 3 memories?", tag="stale").get_by_role(
        "button", name="Remove tag"
    ).click()
    expect(page.locator("#bulk-summary")).to_have_text("2 untagged, 1 left as they were (nothing to change), 0 failed.")
    assert [stored(scene, m)["tags"] for m in ids] == [["sweep"]] * 3
    assert [stored(scene, m)["version"] for m in ids] == [2, 2, 2]  # the one without the tag was not written

    page.get_by_role("link", name="Back to the list").click()
    deletes_with_progress(page)
    assert [stored(scene, m)["status"] for m in ids] == ["deleted"] * 3

    page.goto(f"{scene.base}/console/#/?tag=sweep&status=deleted")
    act_on_the_page(page, "Restore", "Restore 3 memories?").get_by_role("button", name="Restore").click()
    expect(page.locator("#bulk-summary")).to_have_text("3 restored, 0 left as they were (nothing to change), 0 failed.")
    # Each comes back with the status it had before the deletion.
    assert [stored(scene, m)["status"] for m in ids] == ["active", "active", "invalid"]


def deletes_with_progress(page: Page) -> None:
    """The page's three memories deleted through a slow API (each deletion held until the test lets it go): the
    confirmation fits a phone, and the progress bar counts the deletions that are done."""
    held: list[Route] = []

    def hold_deletes(route: Route) -> None:
        if route.request.method == "DELETE":
            held.append(route)
        else:
            route.continue_()

    page.route("**/memories/*", hold_deletes)
    dialog = act_on_the_page(page, "Delete", "Delete 3 memories?")
    expect(dialog).to_contain_text("each stays restorable for 30 days")
    page.set_viewport_size({"width": 375, "height": 800})
    box = dialog.bounding_box()
    assert box is not None
    assert box["x"] >= 16  # a margin on a phone, not edge to edge
    assert box["x"] + box["width"] <= 375 - 16
    screenshot(page, "console-bulk-delete-confirmation-phone")
    page.set_viewport_size({"width": 1280, "height": 720})
    dialog.get_by_role("button", name="Delete").click()

    progress = page.get_by_role("progressbar", name="Progress")
    expect(progress).to_be_visible()
    expect(progress).to_have_js_property("max", 3)
    expect(progress).to_have_js_property("value", 0)
    expect(page.get_by_role("status")).to_have_text("0 of 3")
    deadline = time.monotonic() + PATIENCE_MS / 1000
    while len(held) < 3 and time.monotonic() < deadline:  # the three deletions are on their way (four at a time)
        page.wait_for_timeout(50)  # lets Playwright hand over the requests it holds
    assert len(held) == 3
    screenshot(page, "console-bulk-progress")
    held[0].continue_()
    expect(progress).to_have_js_property("value", 1)  # one answered: 1 of 3, though all three were sent
    expect(page.get_by_role("status")).to_have_text("1 of 3")
    for route in held[1:]:
        route.continue_()
    expect(page.locator("#bulk-summary")).to_have_text("3 deleted, 0 left as they were (nothing to change), 0 failed.")
    expect(progress).to_have_count(0)
    page.unroute("**/memories/*")


def conflict_on(scene: Scene, page: Page, mid: int, mine: str, theirs: str) -> None:
    """The person edits content and type while the agent changes both: two fields to choose for."""
    page.goto(f"{scene.base}/console/#/memory/{mid}")
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Content").fill(mine)
    page.get_by_label("Type").select_option("preference")
    assert scene.api.patch(f"/memories/{mid}", json={"content": theirs, "memory_type": "identity"}).status_code == 200
    page.get_by_role("button", name="Save").click()
    agent_id = scene.api.get("/key").json()["key_id"]
    expect(page.locator('fieldset[data-field="memory_type"]')).to_contain_text(
        f"Type: you and key agent ({agent_id}) both changed it"
    )


def choose(page: Page, field: str, side: str) -> None:
    page.locator(f'fieldset[data-field="{field}"]').get_by_role("radio", name=re.compile(f"^{side}")).check()


def test_each_side_of_a_merge_choice_is_what_gets_saved_and_keeping_theirs_sends_nothing(scene: Scene) -> None:
    page = scene.page()
    sent: list[Any] = []
    page.on("request", lambda request: sent.append(request.post_data_json) if request.method == "PATCH" else None)
    first = scene.api.post("/memories", json={"content": "Lunch is at noon.", "memory_type": "event"}).json()["id"]
    scene.open_console(page)
    expect(page.locator("#summary")).to_be_visible()
    conflict_on(scene, page, first, "Lunch is at 12:30.", "Lunch is at 13:00.")
    assert sent == [{"content": "Lunch is at 12:30.", "memory_type": "preference"}]  # the save that met the change
    sent.clear()
    content = page.get_by_label("Content to save")
    expect(content).to_have_value("")  # no side is chosen for the person
    choose(page, "content", "Use mine")
    expect(content).to_have_value("Lunch is at 12:30.")
    choose(page, "memory_type", "Keep theirs")
    page.set_viewport_size({"width": 375, "height": 800})
    screenshot(page, "console-merge-choices-phone")
    page.set_viewport_size({"width": 1280, "height": 720})
    page.get_by_role("button", name="Save merged changes").click()
    expect(page.locator("#notice")).to_have_text("Your changes are merged and saved as version 3.")
    assert sent == [{"content": "Lunch is at 12:30."}]  # theirs kept for the type: the type is not sent
    record = stored(scene, first)
    assert (record["content"], record["memory_type"], record["version"]) == ("Lunch is at 12:30.", "identity", 3)

    second = scene.api.post("/memories", json={"content": "Gym on Fridays.", "memory_type": "event"}).json()["id"]
    conflict_on(scene, page, second, "Gym on Thursdays.", "Gym on Saturdays.")
    sent.clear()
    choose(page, "content", "Use mine")
    choose(page, "content", "Keep theirs")  # changed their mind: the text goes back to theirs
    expect(page.get_by_label("Content to save")).to_have_value("Gym on Saturdays.")
    choose(page, "memory_type", "Use mine")
    page.get_by_role("button", name="Save merged changes").click()
    expect(page.locator("#notice")).to_have_text("Your changes are merged and saved as version 3.")
    assert sent == [{"memory_type": "preference"}]
    record = stored(scene, second)
    assert (record["content"], record["memory_type"]) == ("Gym on Saturdays.", "preference")

    third = scene.api.post("/memories", json={"content": "Dentist in May.", "memory_type": "event"}).json()["id"]
    conflict_on(scene, page, third, "Dentist in June.", "Dentist in July.")
    sent.clear()
    page.get_by_role("button", name="Save merged changes").click()  # nothing chosen: nothing saved, each field asks
    expect(page.locator("#choice-memory_type-error")).to_have_text("Choose theirs or yours.")
    expect(page.locator("#merged-content-error")).to_contain_text("Choose theirs or yours")
    assert sent == []
    choose(page, "content", "Keep theirs")
    choose(page, "memory_type", "Keep theirs")
    page.get_by_role("button", name="Save merged changes").click()  # theirs for both
    expect(page.locator("#notice")).to_have_text("Nothing of yours differs from the current version.")
    assert sent == []  # nothing to send: their version stands as it is
    record = stored(scene, third)
    assert (record["content"], record["memory_type"], record["version"]) == ("Dentist in July.", "identity", 2)


def test_an_export_of_more_than_a_page_reads_every_page_of_100_and_holds_every_match_as_json_and_ndjson(
    scene: Scene, shared_serve_engine: tuple[str, str, int]
) -> None:
    namespace = f"export-{uuid.uuid4().hex[:8]}"  # 120 memories of its own: the module's counts stay as they are
    key = keys_create(shared_serve_engine[2], namespace, "read,write", "exporter")
    with httpx2.Client(
        base_url=scene.base, headers={"Authorization": f"Bearer {key}"}, timeout=PATIENCE_MS / 1000
    ) as api:
        for n in range(125):
            tags = ["wide"] if n % 25 else ["narrow"]  # five of them outside the filter
            assert api.post("/memories", json={"content": f"Wide export {n}.", "tags": tags}).status_code == 201
        expected: list[dict[str, Any]] = []
        for offset in (0, 100):
            listed = api.get(
                "/memories", params={"tag": "wide", "limit": 100, "offset": offset}, headers={"Prefer": "no-stamp"}
            )
            expected.extend(listed.json()["items"])
    assert len(expected) == 120
    page = scene.page(accept_downloads=True)
    scene.open_console(page, key=key, fragment="#/?tag=wide&limit=20")
    expect(page.locator("#summary")).to_have_text("120 memories · page 1 of 6")
    reads: list[dict[str, list[str]]] = []
    page.on(
        "request",
        lambda request: (
            reads.append(parse_qs(urlsplit(request.url).query)) if urlsplit(request.url).path == "/memories" else None
        ),
    )
    page.get_by_text("Export what you see").click()
    page.get_by_label("Format").select_option("json")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download").click()
    expect(page.locator("#export-status")).to_have_text("Exported 120 memories.")

    assert json.loads(download.value.path().read_text(encoding="utf-8")) == expected  # every record, as the API has it
    assert [(r["limit"], r["offset"], r["tag"]) for r in reads] == [
        (["100"], ["0"], ["wide"]),
        (["100"], ["100"], ["wide"]),
    ]
    # Named by its filter and time: two exports of different filters never share a name.
    named = download.value.suggested_filename
    assert re.fullmatch(rf"agent-memory-{namespace}-tag-wide-\d{{4}}-\d\d-\d\d-\d{{4}}\.json", named), named

    reads.clear()
    page.get_by_label("Format").select_option("ndjson")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download").click()
    lines = download.value.path().read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["namespace"] == namespace
    assert [json.loads(line)["memory"] for line in lines[1:]] == sorted(expected, key=lambda m: m["id"])
    assert [(r["limit"], r["offset"]) for r in reads] == [(["100"], ["0"]), (["100"], ["100"])]
