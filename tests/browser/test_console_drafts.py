"""Typed text in the console survives the key (issue #42, items 1, 2 and 7's memory-view parts), in Chromium against
the shared `serve`: an edit or a new memory interrupted by a key revoked meanwhile is offered back after signing in
with another key of the namespace (kept in the tab without the key, gone once saved or discarded), a draft of a
memory changed meanwhile goes through the merge, the conflict screen chooses no side for the person and diffs the two
word by word, Ctrl+Enter saves, the shortcuts listed are the key's, and a person reads words, not a model id."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page, Route, expect

from tests.browser.chromium import screenshot
from tests.browser.console_scene import Scene, agent_memory, axe_violations, keys_create

pytestmark = pytest.mark.browser

NO_STAMP = {"Prefer": "no-stamp"}
OFFER = "You have unsaved changes from before signing in"


def stored(scene: Scene, mid: int) -> dict[str, Any]:
    record: dict[str, Any] = scene.api.get(f"/memories/{mid}", headers=NO_STAMP).json()
    return record


def drafts(page: Page) -> dict[str, str]:
    """What the tab keeps of drafts in its sessionStorage: every entry but the key's own."""
    kept: dict[str, str] = page.evaluate("Object.fromEntries(Object.entries(sessionStorage))")
    return {name: value for name, value in kept.items() if name != "agent-memory-key"}


def revoked_mid_edit(scene: Scene, ddb_port: int, page: Page, fragment: str) -> str:
    """The console opened at `fragment` with a key of the scene's namespace made for the test: the key, revoked by
    `agent-memory keys revoke` once the caller has typed (call `revoke` then)."""
    key = keys_create(ddb_port, scene.namespace, "read,write", "laptop")
    scene.open_console(page, key=key, fragment=fragment)
    return key


def revoke(ddb_port: int, key: str) -> None:
    agent_memory(ddb_port, "keys", "revoke", key[3:15])


def sign_in_again(scene: Scene, page: Page) -> None:
    expect(page.locator("#notice")).to_have_text("This key is not valid (expired or revoked?). Paste another key.")
    page.get_by_label("API key").fill(scene.key)  # another key of the same namespace: the person's
    page.get_by_role("button", name="Open").click()


def test_an_edit_interrupted_by_a_revoked_key_is_offered_back_after_signing_in_with_another_key_and_saved(
    scene: Scene, shared_serve_engine: tuple[str, str, int]
) -> None:
    ddb_port = shared_serve_engine[2]
    mid = scene.api.post("/memories", json={"content": "The user's bike is blue.", "tags": ["place"]}).json()["id"]
    page = scene.page(bypass_csp=True)  # only so axe's own script can be injected
    laptop = revoked_mid_edit(scene, ddb_port, page, f"#/memory/{mid}")
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Content").fill("The user's bike is a red gravel bike.")
    page.get_by_label("travel", exact=True).check()
    revoke(ddb_port, laptop)

    page.get_by_role("button", name="Save").click()
    sign_in_again(scene, page)

    kept = drafts(page)
    assert len(kept) == 1, kept  # one draft: namespace, memory and the version the edit started from name it
    [(name, value)] = kept.items()
    assert scene.namespace in name
    assert f":{mid}:1" in name  # the memory, and the version the edit started from
    assert "red gravel bike" in value
    assert [secret for secret in (laptop, scene.key, laptop[3:15]) if secret in name + value] == []  # never the key
    offer = page.locator("#draft")
    expect(offer).to_contain_text(OFFER)
    expect(offer).to_contain_text("red gravel bike")  # what it holds, as a diff of the version it started from
    assert axe_violations(page) == []
    screenshot(page, "console-draft-offer")
    page.set_viewport_size({"width": 375, "height": 800})
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    screenshot(page, "console-draft-offer-phone")
    page.set_viewport_size({"width": 1280, "height": 720})

    offer.get_by_role("button", name="Restore").click()
    expect(page.get_by_label("Content")).to_have_value("The user's bike is a red gravel bike.")
    expect(page.get_by_label("travel", exact=True)).to_be_checked()
    page.get_by_role("button", name="Save").click()

    expect(page.locator("#notice")).to_have_text(f"Memory #{mid} is saved.")
    record = stored(scene, mid)
    assert (record["content"], record["tags"], record["version"]) == (
        "The user's bike is a red gravel bike.",
        ["place", "travel"],
        2,
    )
    assert drafts(page) == {}  # saved: nothing kept
    page.reload()
    expect(page.get_by_role("heading", name=f"Memory #{mid}")).to_be_visible()
    expect(page.locator("#may-replace[data-related]")).to_be_attached()
    expect(page.locator("#draft")).to_have_count(0)


def test_a_draft_of_a_memory_changed_meanwhile_is_merged_choosing_no_side_for_the_person_with_a_word_diff(
    scene: Scene, shared_serve_engine: tuple[str, str, int]
) -> None:
    ddb_port = shared_serve_engine[2]
    created = {"content": "Piano lesson on Tuesday at five.", "memory_type": "event", "tags": ["task"]}
    mid = scene.api.post("/memories", json=created).json()["id"]
    page = scene.page(bypass_csp=True)  # only so axe's own script can be injected
    sent: list[Any] = []
    page.on("request", lambda request: sent.append(request.post_data_json) if request.method == "PATCH" else None)
    laptop = revoked_mid_edit(scene, ddb_port, page, f"#/memory/{mid}")
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Content").fill("Piano lesson on Tuesday at six, with Marta.")
    revoke(ddb_port, laptop)
    page.get_by_role("button", name="Save").click()
    agent = {"content": "Piano lesson on Wednesday at five.", "tags": ["task", "family"]}
    assert scene.api.patch(f"/memories/{mid}", json=agent).status_code == 200  # meanwhile: version 2
    sign_in_again(scene, page)

    page.locator("#draft").get_by_role("button", name="Restore").click()

    expect(page.get_by_role("heading", name=f"Memory #{mid} changed while you edited it")).to_be_visible()
    conflict = page.locator('fieldset[data-field="content"]')
    radios = conflict.get_by_role("radio")
    expect(radios).to_have_count(2)
    for radio in radios.all():
        expect(radio).not_to_be_checked()  # neither side is chosen for the person
    merged = page.get_by_label("Content to save")
    expect(merged).to_have_value("")
    diff = conflict.locator(".diff")  # theirs against yours, word by word
    expect(diff.locator("del")).to_have_text(["Wednesday", "five."])
    expect(diff.locator("ins")).to_have_text(["Tuesday", "six, with Marta."])
    assert axe_violations(page) == []
    screenshot(page, "console-merge-no-side")
    page.set_viewport_size({"width": 375, "height": 800})
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    screenshot(page, "console-merge-no-side-phone")
    page.set_viewport_size({"width": 1280, "height": 720})

    sent.clear()
    page.get_by_role("button", name="Save merged changes").click()  # one click saves no one's text
    expect(page.locator("#merged-content-error")).to_contain_text("Choose theirs or yours")
    expect(merged).to_be_focused()
    assert sent == []
    conflict.get_by_role("radio", name=re.compile("^Use mine")).check()
    expect(merged).to_have_value("Piano lesson on Tuesday at six, with Marta.")
    page.get_by_role("button", name="Save merged changes").click()

    expect(page.locator("#notice")).to_have_text("Your changes are merged and saved as version 3.")
    record = stored(scene, mid)
    assert (record["content"], record["tags"], record["version"]) == (
        "Piano lesson on Tuesday at six, with Marta.",
        ["task", "family"],  # the agent's tag kept: the draft went through the merge, not over the newer version
        3,
    )
    assert sent == [{"content": "Piano lesson on Tuesday at six, with Marta."}]
    assert drafts(page) == {}


def test_a_new_memory_interrupted_by_a_revoked_key_is_offered_back_restored_or_discarded_as_the_person_says(
    scene: Scene, shared_serve_engine: tuple[str, str, int]
) -> None:
    ddb_port = shared_serve_engine[2]
    page = scene.page()
    laptop = revoked_mid_edit(scene, ddb_port, page, "#/new")
    other = scene.page()  # a second window of the same key: a sessionStorage of its own
    scene.open_console(other, key=laptop, fragment="#/new")
    page.get_by_label("Content").fill("The user's locker code is on the blue card.")
    page.get_by_label("health", exact=True).check()
    other.get_by_label("Content").fill("A note the person decides to drop.")
    revoke(ddb_port, laptop)
    page.get_by_role("button", name="Create").click()
    other.get_by_role("button", name="Create").click()
    sign_in_again(scene, page)
    sign_in_again(scene, other)

    offer = page.locator("#draft")
    expect(offer).to_contain_text(OFFER)
    expect(offer).to_contain_text("locker code")
    expect(page.get_by_label("Content")).to_have_value("")  # offered, not filled in unasked
    offer.get_by_role("button", name="Restore").click()
    expect(page.get_by_label("Content")).to_have_value("The user's locker code is on the blue card.")
    expect(page.get_by_label("health", exact=True)).to_be_checked()
    expect(page.locator("#draft")).to_have_count(0)
    page.get_by_role("button", name="Create").click()
    expect(page.locator("#notice")).to_contain_text("is created.")
    expect(page.locator("dl.fields")).to_contain_text("The user's locker code is on the blue card.")
    assert drafts(page) == {}

    other.locator("#draft").get_by_role("button", name="Discard").click()
    expect(other.locator("#notice")).to_have_text("Your unsaved changes are discarded.")
    expect(other.locator("#draft")).to_have_count(0)
    expect(other.get_by_label("Content")).to_have_value("")
    assert drafts(other) == {}
    listed = scene.api.get("/memories", params={"q": "decides to drop"}, headers=NO_STAMP).json()
    assert listed["items"] == []  # nothing was created behind the person's back


def test_ctrl_enter_saves_from_any_field_and_the_shortcuts_listed_are_those_the_key_may_use(scene: Scene) -> None:
    mid = scene.api.post("/memories", json={"content": "The user's tram is the M10."}).json()["id"]
    page = scene.page()
    scene.open_console(page, fragment=f"#/memory/{mid}")
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Content").fill("The user's tram is the M10 or the 12.")
    page.get_by_label("Content").press("Control+Enter")
    expect(page.locator("#notice")).to_have_text(f"Memory #{mid} is saved.")
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Other tags").fill("commute")
    page.get_by_label("Other tags").press("Meta+Enter")  # Cmd+Enter on a Mac
    expect(page.locator("#notice")).to_have_text(f"Memory #{mid} is saved.")
    assert (stored(scene, mid)["tags"], stored(scene, mid)["version"]) == (["commute"], 3)
    page.get_by_role("link", name="New memory").click()
    page.get_by_label("Content").fill("The user's tram pass renews in March.")
    page.get_by_label("Status").press("Control+Enter")
    expect(page.locator("#notice")).to_contain_text("is created.")

    page.locator("h1").click()
    page.keyboard.press("?")
    shortcuts = page.get_by_role("dialog")
    expect(shortcuts).to_contain_text("Ctrl+Enter")
    expect(shortcuts).to_contain_text("Edit the memory open")
    page.keyboard.press("Escape")

    reader = scene.page()
    scene.open_console(reader, key=scene.reader, fragment=f"#/memory/{mid}")
    expect(reader.get_by_role("heading", name=f"Memory #{mid}")).to_be_visible()
    reader.locator("h1").click()
    reader.keyboard.press("?")
    listed = reader.get_by_role("dialog").locator("dt").all_inner_texts()
    assert listed == ["/", "j", "k", "Enter", "?"]  # a read-only key edits nothing: no `e`, no Ctrl+Enter


def test_a_person_reads_whether_a_memory_is_searchable_by_meaning_and_the_model_id_only_in_its_json(
    scene: Scene,
) -> None:
    mid = scene.api.post("/memories", json={"content": "The user's cat is called Miso."}).json()["id"]
    model = scene.api.get(f"/memories/{mid}/related").json()["model"]
    page = scene.page()
    scene.open_console(page, fragment=f"#/memory/{mid}")

    expect(page.locator("dl.fields")).to_contain_text("Search by meaning")
    expect(page.locator("#meaning")).to_have_text("searchable by meaning")
    expect(page.locator("main")).not_to_contain_text(model)
    page.get_by_role("link", name="Full record as JSON").click()
    expect(page.locator("main")).to_contain_text(model)  # for whoever reads the record as an agent gets it

    def waiting(route: Route) -> None:
        answer = route.fetch()
        route.fulfill(response=answer, json={**answer.json(), "items": [], "waiting": True})

    page.route("**/related?*", waiting)
    page.goto(f"{scene.base}/console/#/memory/{mid}")
    expect(page.locator("#meaning")).to_have_text("waiting to be made searchable by meaning")
    expect(page.locator("main")).not_to_contain_text(model)
