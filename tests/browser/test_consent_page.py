"""The OAuth consent page in a real browser (Debian's Chromium, driven by Playwright) with JavaScript off, as served
by a running `agent-memory serve`: it renders what is asked and by whom within its own Content-Security-Policy, a
wrong key shows an error without echoing the key, Approve returns a code and the original state to the client's
redirect URI, and Deny returns access_denied."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx2
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.browser.chromium import chromium_executable, page_origin, patient, screenshot
from tests.handlers.oauth.flow import client_metadata, pkce

pytestmark = pytest.mark.browser


CALLBACK_PAGE = b"<!doctype html><title>back at the client</title><p>received"


@dataclass
class Scene:
    base: str
    key: str
    redirect_uri: str
    received: list[dict[str, str]]
    browser: Browser
    client_id: str = ""
    violations: list[str] = field(default_factory=list)

    def consent_page(self, *, javascript: bool = False) -> Page:
        """A new browser tab (JavaScript off unless asked) at the consent page of a fresh authorization request."""
        context = self.browser.new_context(java_script_enabled=javascript)
        page = patient(context.new_page())
        page.on("console", lambda message: self.violations.append(message.text))
        challenge = pkce()[1]
        query = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "state-from-the-client",
            "scope": "read write",
            "resource": f"{self.base}/mcp",
        }
        page.goto(str(httpx2.URL(f"{self.base}/authorize", params=query)))
        return page


@pytest.fixture(scope="module")
def scene(shared_serve: tuple[str, str]) -> Iterator[Scene]:
    executable = chromium_executable()
    base, key = shared_serve
    with page_origin(CALLBACK_PAGE) as (client, received), sync_playwright() as playwright:
        redirect_uri = f"{client}/callback"
        registered = httpx2.post(
            f"{base}/register",
            json=client_metadata(client_name="Claude", redirect_uris=[redirect_uri]).model_dump(
                mode="json", exclude_none=True
            ),
        )
        assert registered.status_code == 201, registered.text
        browser = playwright.chromium.launch(executable_path=executable)
        try:
            yield Scene(base, key, redirect_uri, received, browser, registered.json()["client_id"])
        finally:
            browser.close()


def test_the_page_renders_who_asks_for_what_within_its_own_policy(scene: Scene) -> None:
    page = scene.consent_page(javascript=True)  # on, so the page could run script: its policy must stop any
    screenshot(page, "consent")

    assert page.title() == "Allow Claude to use your memories?"
    assert urlsplit(page.url).path == "/consent"
    assert page.get_by_label("Namespace", exact=True).is_visible()
    assert page.get_by_label("An API key of that namespace").get_attribute("type") == "password"
    assert page.get_by_role("checkbox", name="read").is_checked()
    assert page.get_by_role("checkbox", name="write").is_checked()
    assert urlsplit(scene.redirect_uri).netloc in page.inner_text("main")
    assert page.evaluate("getComputedStyle(document.querySelector('button.approve')).backgroundColor") == (
        "rgb(29, 78, 216)"  # the page's own style applied: its CSP hash matches
    )
    assert not [text for text in scene.violations if "Content Security Policy" in text], scene.violations


def test_a_wrong_key_shows_an_error_and_never_echoes_the_key(scene: Scene) -> None:
    page = scene.consent_page()
    wrong = "am_0123456789ab_" + "w" * 43
    page.get_by_label("Namespace", exact=True).fill("default")
    page.get_by_label("An API key of that namespace").fill(wrong)

    page.get_by_role("button", name="Approve").click()
    screenshot(page, "consent-wrong-key")

    assert page.get_by_role("alert").inner_text() == "That API key is not valid: it is unknown, revoked or expired."
    assert wrong not in page.content()
    assert page.get_by_label("An API key of that namespace").input_value() == ""
    assert page.get_by_label("Namespace", exact=True).input_value() == "default"
    assert urlsplit(page.url).path == "/consent"


def test_approve_returns_a_code_and_the_original_state_to_the_client(scene: Scene) -> None:
    page = scene.consent_page()
    page.get_by_label("Namespace", exact=True).fill("default")
    page.get_by_label("An API key of that namespace").fill(scene.key)

    page.get_by_role("button", name="Approve").click()
    page.wait_for_url(f"{scene.redirect_uri}?*")

    answer = scene.received[-1]
    assert answer["code"].startswith("amc_")
    assert answer["state"] == "state-from-the-client"
    assert scene.key not in page.url


def test_deny_returns_access_denied_with_the_state(scene: Scene) -> None:
    page = scene.consent_page()

    page.get_by_role("button", name="Deny").click()  # nothing filled in: Deny needs no key
    page.wait_for_url(f"{scene.redirect_uri}?*")

    answer = scene.received[-1]
    assert answer["error"] == "access_denied"
    assert answer["state"] == "state-from-the-client"
    assert "code" not in answer


def test_the_namespace_field_says_what_to_type_and_left_empty_grants_the_keys_own(scene: Scene) -> None:
    page = scene.consent_page()
    field = page.get_by_label("Namespace", exact=True)
    screenshot(page, "consent-namespace-hint")

    assert field.input_value() == ""
    described_by = field.get_attribute("aria-describedby")
    assert described_by is not None, "the Namespace field has no hint"
    hint = page.locator(f"#{described_by}").inner_text()
    assert "default" in hint
    assert "empty" in hint
    page.get_by_label("An API key of that namespace").fill(scene.key)
    page.get_by_role("button", name="Approve").click()
    page.wait_for_url(f"{scene.redirect_uri}?*")

    assert scene.received[-1]["code"].startswith("amc_")


def test_a_key_of_another_namespace_than_the_one_typed_prefills_the_keys_own(scene: Scene) -> None:
    page = scene.consent_page()
    page.get_by_label("Namespace", exact=True).fill("somebody-else")
    page.get_by_label("An API key of that namespace").fill(scene.key)

    page.get_by_role("button", name="Approve").click()
    screenshot(page, "consent-namespace-prefilled")

    assert page.get_by_role("alert").inner_text() == "That API key is not a key of namespace somebody-else."
    assert page.get_by_label("Namespace", exact=True).input_value() == "default"
    assert scene.key not in page.content()
