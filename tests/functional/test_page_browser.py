"""The page at GET / in a real browser: Debian's Chromium, headless, driven by Playwright (its own browser download
is never used). The page calls the real HTTP API of the local server: the cat photo gets a cat label, a text its
sentiment, two sentences their similarity, with no console errors, at a desktop's width and a phone's.

Screenshots land in build/test-artifacts/ (docs/page.png is one of them).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect, sync_playwright

from tests.support.function_fixtures import REPO, demo_models, registry  # noqa: F401
from tests.support.local_api import demo_api, embedding_api  # noqa: F401
from tests.support.photos import cat_jpeg, is_cat

CHROMIUM = Path("/usr/bin/chromium")  # Debian's package (tools/install-test-deps.sh installs it)
ARTIFACTS = REPO / "build" / "test-artifacts"
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.fail("chromium is missing: run `bash tools/install-test-deps.sh` as root (apt-get install chromium)",
                    pytrace=False)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM))
        yield browser
        browser.close()


class OpenPage:
    """A page of the app with every console error and uncaught exception it raises recorded."""

    def __init__(self, browser, url: str, viewport: dict):
        self.page: Page = browser.new_page(viewport=viewport)
        self.errors: list[str] = []
        self.page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.goto(url)
        expect(self.page.locator("#image-model option").first).to_be_attached()  # /models has answered

    def classify_cat(self) -> list[str]:
        self.page.set_input_files("#image-file", files=[{"name": "cat.jpg", "mimeType": "image/jpeg",
                                                         "buffer": cat_jpeg()}])
        bars = self.page.locator("#labels .bar")
        expect(bars).to_have_count(5)
        expect(self.page.locator("#image-status")).to_contain_text("efficientnet_lite0")
        return bars.locator(".name").all_inner_texts()

    def sentiment(self, text: str) -> str:
        self.page.fill("#sentiment-text", text)
        self.page.click("#sentiment-run")
        expect(self.page.locator("#sentiment-result .bar")).to_have_count(1)
        return self.page.inner_text("#sentiment-result .name")


def test_the_demo_models_in_the_page(browser, demo_api, demo_models):  # noqa: F811
    view = OpenPage(browser, f"{demo_api}/", {"width": 960, "height": 1000})
    labels = view.classify_cat()
    assert is_cat(labels[0]), labels
    widths = view.page.locator("#labels .fill").evaluate_all("bars => bars.map(bar => parseFloat(bar.style.width))")
    assert widths == sorted(widths, reverse=True) and widths[0] > 50, widths  # bars drawn to scale, best first
    assert view.sentiment("What a wonderful, delightful film.") == "positive"
    if any((directory / "manifest.json").read_text().count('"text_embedding"') for directory in demo_models.iterdir()
           if (directory / "manifest.json").is_file()):
        view.page.click("#similarity-run")
        expect(view.page.locator("#similarity-result")).to_contain_text("cosine similarity")
    else:  # no embedding model yet: the section says so and offers nothing to click
        expect(view.page.locator("#similarity-status")).to_contain_text("No text_embedding model is served here")
        expect(view.page.locator("#similarity-run")).to_be_disabled()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    view.page.screenshot(path=ARTIFACTS / "page.png", full_page=True)
    assert view.errors == []


def test_two_sentences_and_their_similarity(browser, embedding_api):  # noqa: F811
    view = OpenPage(browser, f"{embedding_api}/", {"width": 960, "height": 1000})
    expect(view.page.locator("#embedding-model")).to_have_value("sentiment_as_embedding")
    view.page.fill("#sentence-a", "A wonderful, moving film.")
    view.page.fill("#sentence-b", "What a delightful story, I loved it.")
    view.page.click("#similarity-run")
    result = view.page.locator("#similarity-result")
    expect(result).to_have_text(re.compile(r"cosine similarity -?\d\.\d{3}"))
    # The stand-in model's 1-dimensional unit vectors: two positive texts point the same way.
    assert result.inner_text() == "cosine similarity 1.000"
    assert view.errors == []


def test_usable_at_a_phone_width(browser, demo_api):  # noqa: F811
    view = OpenPage(browser, f"{demo_api}/", PHONE)
    assert is_cat(view.classify_cat()[0])
    assert view.sentiment("A dull, tedious, badly acted mess.") == "negative"
    overflow = view.page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow == 0  # nothing wider than the screen: no sideways scrolling
    view.page.screenshot(path=ARTIFACTS / "page-phone.png", full_page=True)
    assert view.errors == []


def test_an_api_error_is_shown_in_the_page(browser, demo_api):  # noqa: F811
    view = OpenPage(browser, f"{demo_api}/", {"width": 960, "height": 800})
    view.page.set_input_files("#image-file", files=[{"name": "notes.jpg", "mimeType": "image/jpeg",
                                                     "buffer": b"not a photo at all"}])
    status = view.page.locator("#image-status")
    expect(status).to_contain_text("(unsupported_image)")
    expect(status).to_have_class(re.compile(r"\berror\b"))
    # The browser reports the 415 itself; the page raised nothing of its own.
    assert [error for error in view.errors if "415" not in error] == []
