"""Ask and search in Chromium against the shared `serve` (issue #42 item 5): a text search that finds nothing offers
to ask by meaning with the same words, Ask's filters kept in the address, "Show more" past the first page, and each
answer saying in words why it was found, its numbers one click away."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Page, expect

from tests.browser.chromium import screenshot
from tests.browser.console_scene import Scene, axe_violations

pytestmark = pytest.mark.browser


def answer_ids(page: Page) -> list[int]:
    return [
        int(found) for found in page.locator("ol.answers > li").evaluate_all("items => items.map(i => i.dataset.id)")
    ]


def test_a_text_search_that_finds_nothing_offers_to_ask_by_meaning_with_the_same_words(scene: Scene) -> None:
    page = scene.page(bypass_csp=True)  # only so axe's own script can be injected
    scene.open_console(page, fragment="#/?q=job")

    expect(page.locator("#summary")).to_contain_text("0 memories")
    offer = page.get_by_role("link", name="Ask by meaning instead")
    expect(offer).to_be_visible()
    screenshot(page, "console-search-ask-instead")
    assert axe_violations(page) == []
    offer.click()

    expect(page.get_by_role("heading", name="Ask")).to_be_visible()
    assert urlsplit(page.url).fragment == "/ask?query=job"
    expect(page.get_by_label("Ask in plain words")).to_have_value("job")
    expect(page.locator("#summary")).to_contain_text("ranked")
    expect(page.locator("ol.answers > li").first.locator("a.id")).to_have_text("#3")  # works at Acme: a job, by meaning


def test_ask_filters_by_status_type_and_tag_and_the_address_keeps_them(scene: Scene) -> None:
    page = scene.page()
    scene.open_console(page, fragment="#/ask")
    page.get_by_label("Ask in plain words").fill("Where does the user live?")
    expect(page.get_by_label("Status")).to_have_value("active")  # recall's own default
    page.get_by_label("Type").select_option("identity")
    page.get_by_role("button", name="Ask", exact=True).click()

    expect(page.locator("#summary")).to_contain_text("ranked")
    assert parse_qs(urlsplit(page.url).fragment.split("?", 1)[1]) == {
        "query": ["Where does the user live?"],
        "memory_type": ["identity"],
    }
    expect(page.locator("ol.answers > li .type")).to_have_text(["identity", "identity"])  # #2 and #3; #6 is invalid
    assert sorted(answer_ids(page)) == [2, 3]

    page.reload()
    expect(page.get_by_label("Type")).to_have_value("identity")
    expect(page.locator("ol.answers > li .type")).to_have_text(["identity", "identity"])

    page.get_by_label("Status").select_option("invalid")
    page.get_by_label("Tag").fill("place")
    page.get_by_role("button", name="Ask", exact=True).click()
    expect(page.locator("ol.answers > li")).to_have_count(1)
    assert answer_ids(page) == [6]  # Berlin, invalid: only when asked for
    assert parse_qs(urlsplit(page.url).fragment.split("?", 1)[1]) == {
        "query": ["Where does the user live?"],
        "status": ["invalid"],
        "memory_type": ["identity"],
        "tag": ["place"],
    }

    page.goto(f"{scene.base}/console/#/ask?query=home&memory_type=recipe")  # a filter recall refuses: said in place
    expect(page.locator("#memory_type-error")).to_be_visible()
    expect(page.get_by_label("Type")).to_have_value("recipe")


def test_show_more_appends_the_next_page_of_answers_without_repeating_any(scene: Scene) -> None:
    seeded = [
        scene.api.post(
            "/memories", json={"content": f"Grocery list {n}: oat milk and {n} apples.", "tags": ["groceries"]}
        ).json()["id"]
        for n in range(1, 24)
    ]
    page = scene.page()
    scene.open_console(page, fragment="#/ask?query=what+is+on+the+grocery+list&tag=groceries")

    expect(page.locator("#summary")).to_contain_text("23 memories ranked, the best 20 shown")
    expect(page.locator("ol.answers > li")).to_have_count(20)
    first_page = answer_ids(page)
    with page.expect_request("**/recall?*") as more:
        page.get_by_role("button", name="Show more").click()
    sent = parse_qs(urlsplit(more.value.url).query)
    assert sent["offset"] == ["20"]
    assert "as_of" in sent  # the next page of the same ranking, not of a new one
    expect(page.locator("ol.answers > li")).to_have_count(23)
    shown = answer_ids(page)
    assert shown[:20] == first_page
    assert sorted(shown) == sorted(seeded)  # every match once
    expect(page.get_by_role("button", name="Show more")).to_have_count(0)
    expect(page.locator("#summary")).to_contain_text("23 memories ranked, all shown")


def expected_reasons(item: dict[str, Any], weights: dict[str, float]) -> dict[str, bool]:
    """Which words the reason holds, from the parts that counted (a part at zero, or weighed at zero, says nothing)."""
    parts = item["parts"]

    def counted(part: str) -> bool:
        return bool(parts[part] > 0 and weights[part] > 0)

    return {
        "word": counted("lexical"),
        "used by agents": counted("use"),
        "newer version": counted("newer"),
        "recently changed": counted("recency") and parts["recency"] >= 0.5,
    }


def closeness(reason: str) -> str | None:
    """How close in meaning a reason says its memory is (the longer phrases first: they hold the shorter)."""
    steps = ("somewhat close in meaning", "loosely related in meaning", "close in meaning")
    return next((step for step in steps if step in reason), None)


def expected_closeness(semantic: float) -> str | None:
    """The semantic part in three steps of the way from the model's floor (unrelated) to the same meaning."""
    if semantic <= 0:
        return None
    if semantic >= 0.5:
        return "close in meaning"
    return "somewhat close in meaning" if semantic >= 0.25 else "loosely related in meaning"


def test_each_answer_says_in_words_why_it_was_found_and_keeps_the_numbers_one_click_away(scene: Scene) -> None:
    before = scene.stamps()
    page = scene.page(bypass_csp=True)  # only so axe's own script can be injected
    scene.open_console(page)
    page.get_by_role("link", name="Ask").click()
    page.get_by_label("Ask in plain words").fill("Where does the user work?")
    with page.expect_response("**/recall?*") as answered:
        page.get_by_role("button", name="Ask", exact=True).click()
    answer = answered.value.json()
    assert answered.value.request.headers["prefer"] == "no-stamp"

    first = page.locator("ol.answers > li").first
    expect(first.locator("a.id")).to_have_text("#3")  # works at Acme, tagged work
    why = first.locator(".why")
    expect(why).to_be_visible()  # no hover needed
    expect(why).to_contain_text("matches the words 'user', 'work'")
    expect(why).to_contain_text("close in meaning")
    texts = page.locator("ol.answers > li .why").all_inner_texts()
    assert len(texts) == len(answer["items"])
    for text, item in zip(texts, answer["items"], strict=True):
        for words, said in expected_reasons(item, answer["ranking"]["weights"]).items():
            assert (words in text) == said, (words, text, item["parts"])
        assert closeness(text) == expected_closeness(item["parts"]["semantic"]), (text, item["parts"])

    numbers = first.locator("details.numbers")
    expect(numbers.locator("dl")).to_be_hidden()
    numbers.locator("summary").click()
    semantic = answer["items"][0]["parts"]["semantic"]
    expect(numbers.locator("dl")).to_contain_text(
        f"meaning{semantic} \N{MULTIPLICATION SIGN} weight {answer['ranking']['weights']['semantic']}"
    )
    expect(numbers).to_contain_text(answer["ranking"]["model"])  # the model is named where the numbers are, not above
    expect(page.locator("#summary")).not_to_contain_text(answer["ranking"]["model"])
    screenshot(page, "console-ask")
    assert axe_violations(page) == []
    page.set_viewport_size({"width": 375, "height": 800})
    expect(why).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    screenshot(page, "console-ask-phone")
    assert scene.stamps() == before  # asking is looking: Prefer: no-stamp
