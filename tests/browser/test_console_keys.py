"""Every key named, and the keys view, in Chromium against the shared `serve` (issue #42, item 3): a history names the
agent's key by its name, the keys view lists the namespace's keys with their scopes and when each was last used,
offers Revoke only to a key that may revoke others, and a revoked key can no longer sign in."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Locator, expect

from tests.browser.chromium import screenshot
from tests.browser.console_scene import Scene, axe_violations, keys_create

pytestmark = pytest.mark.browser


def test_a_history_names_the_agents_key_and_the_keys_view_lists_every_key_with_its_scopes(scene: Scene) -> None:
    agent_id = scene.api.get("/key").json()["key_id"]
    page = scene.page()
    scene.open_console(page, fragment="#/memory/2")

    expect(page.locator("ol.timeline li").last).to_contain_text(f"by key agent ({agent_id})")  # created by the agent

    page.get_by_role("link", name="Keys").click()
    expect(page.get_by_role("heading", name="Keys")).to_be_visible()

    def row(name: str) -> Locator:  # by name: another test of this module may have added a key
        return page.locator("table.keys tbody tr", has=page.locator(".key-name", has_text=re.compile(f"^{name}$")))

    expect(row("agent")).to_contain_text(agent_id)
    expect(row("agent").locator(".scopes")).to_have_text("read, write")
    expect(row("person").locator(".scopes")).to_have_text("read, write, keys")
    expect(row("person")).to_contain_text("this key")
    expect(row("auditor").locator(".scopes")).to_have_text("read")
    expect(row("agent").locator(".last-used")).not_to_have_text("never")  # the agent wrote the seed with it
    for name in ("agent", "person", "auditor"):
        expect(row(name).get_by_role("button", name=f"Revoke key {name}")).to_be_visible()
    screenshot(page, "console-keys")


def test_a_key_that_may_not_revoke_sees_the_keys_without_revoke_on_a_phone_with_no_axe_violation(scene: Scene) -> None:
    # bypass_csp only so that axe's own script can be injected
    page = scene.page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, bypass_csp=True)
    scene.open_console(page, key=scene.reader, fragment="#/keys")

    expect(page.locator("table.keys tbody tr", has_text="auditor")).to_contain_text("this key")
    expect(page.locator("main")).to_contain_text("This key may not revoke keys")
    expect(page.get_by_role("button", name=re.compile("Revoke"))).to_have_count(0)
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    assert axe_violations(page) == []
    screenshot(page, "console-keys-phone-read-only")


def test_revoking_a_key_asks_first_and_the_revoked_key_can_no_longer_sign_in(
    scene: Scene, shared_serve_engine: tuple[str, str, int]
) -> None:
    laptop = keys_create(shared_serve_engine[2], scene.namespace, "read,write", "old laptop")
    page = scene.page()
    scene.open_console(page, fragment="#/keys")

    page.get_by_role("button", name="Revoke key old laptop").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("old laptop")
    dialog.get_by_role("button", name="Cancel").click()
    expect(page.get_by_role("button", name="Revoke key old laptop")).to_be_visible()  # cancelled: nothing revoked
    page.get_by_role("button", name="Revoke key old laptop").click()
    page.get_by_role("dialog").get_by_role("button", name="Revoke").click()

    expect(page.locator("#notice")).to_contain_text("Key old laptop is revoked")
    row = page.locator("table.keys tbody tr", has_text="old laptop")
    expect(row).to_contain_text("revoked")
    expect(page.get_by_role("button", name="Revoke key old laptop")).to_have_count(0)
    screenshot(page, "console-keys-revoked")

    signed_out = scene.page()
    scene.open_console(signed_out, key=laptop)
    expect(signed_out.locator("#notice")).to_have_text(
        "This key is not valid (expired or revoked?). Paste another key."
    )
