"""The page at GET / in a real browser: Debian's Chromium, headless, driven by Playwright (its own browser download
is never used). The page calls the real HTTP API of the local server: the cat photo gets a cat label, its sample
photo an espresso, a text its labels with their scores, two sentences their similarity on a scale, with no console
errors and no broken image (on first sight, or after a file that is not an image), at a desktop's width and a
phone's.

Screenshots land in build/test-artifacts/ (docs/page.png is one of them).
"""
from __future__ import annotations

import base64
import io
import re
from pathlib import Path

import numpy as np
from PIL import Image

import pytest
from playwright.sync_api import Page, expect, sync_playwright

from tests.support.function_fixtures import REPO, demo_models, registry  # noqa: F401
from tests.support.local_api import demo_api, embedding_api  # noqa: F401
from kit.photos import cat_jpeg, is_cat, photo

CHROMIUM = Path("/usr/bin/chromium")  # Debian's package (tools/install-test-deps.sh installs it)
ARTIFACTS = REPO / "build" / "test-artifacts"
PHONE = {"width": 390, "height": 844}
# Every visible <img> has decoded pixels: a broken image (a src that is not an image) has naturalWidth 0.
BROKEN_IMAGES = """() => [...document.images]
  .filter((img) => img.checkVisibility() && (!img.complete || img.naturalWidth === 0))
  .map((img) => img.id || img.alt || img.src.slice(0, 40))"""


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

    def classify_text(self, text: str) -> list[tuple[str, float]]:
        """The labels the page shows, best first, with their scores (the sentiment model has two)."""
        self.page.fill("#text-input", text)
        self.page.click("#text-run")
        bars = self.page.locator("#text-result .bar")
        expect(bars).to_have_count(2)
        names = bars.locator(".name").all_inner_texts()
        scores = [float(score.rstrip("%")) for score in bars.locator(".score").all_inner_texts()]
        return list(zip(names, scores))

    def broken_images(self) -> list[str]:
        return self.page.evaluate(BROKEN_IMAGES)


def test_the_demo_models_in_the_page(browser, demo_api, demo_models):  # noqa: F811
    view = OpenPage(browser, f"{demo_api}/", {"width": 960, "height": 1000})
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    view.page.screenshot(path=ARTIFACTS / "page-first.png", full_page=True)
    assert view.broken_images() == []  # the photo sent is hidden until there is one; the sample is shown
    expect(view.page.locator("#preview")).to_be_hidden()
    expect(view.page.locator("#sample")).to_be_visible()
    labels = view.classify_cat()
    assert is_cat(labels[0]), labels
    widths = view.page.locator("#labels .fill").evaluate_all("bars => bars.map(bar => parseFloat(bar.style.width))")
    assert widths == sorted(widths, reverse=True) and widths[0] > 50, widths  # bars drawn to scale, best first
    expect(view.page.locator("#preview")).to_be_visible()
    assert view.broken_images() == []
    expect(view.page.locator("#text-title")).to_have_text("Classify a text")
    ranked = view.classify_text("What a wonderful, delightful film.")
    assert [name for name, _ in ranked] == ["positive", "negative"] and ranked[0][1] > 99, ranked
    assert abs(sum(score for _, score in ranked) - 100) < 0.2  # every label of the model, with its score
    if any((directory / "manifest.json").read_text().count('"text_embedding"') for directory in demo_models.iterdir()
           if (directory / "manifest.json").is_file()):
        view.page.click("#similarity-run")
        expect(view.page.locator("#similarity-result")).to_contain_text("cosine similarity")
        expect(view.page.locator("#similarity-scale")).to_be_visible()
    else:  # no embedding model yet: the section says so and offers nothing to click
        expect(view.page.locator("#similarity-status")).to_contain_text("No text_embedding model is served here")
        expect(view.page.locator("#similarity-run")).to_be_disabled()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    view.page.screenshot(path=ARTIFACTS / "page.png", full_page=True)
    assert view.errors == []


def test_the_sample_photo(browser, demo_api):  # noqa: F811
    """The sample is skimage's coffee at 240x160 (the page's comment says so), small, and classified as espresso."""
    view = OpenPage(browser, f"{demo_api}/", {"width": 960, "height": 1000})
    source = view.page.get_attribute("#sample", "src")
    assert source.startswith("data:image/jpeg;base64,")
    jpeg = base64.b64decode(source.split(",", 1)[1])
    assert len(jpeg) < 10_000
    with Image.open(io.BytesIO(jpeg)) as sample:
        shown = np.asarray(sample.convert("RGB"), dtype=np.float64)
    expected = np.asarray(photo("coffee").resize((240, 160), Image.LANCZOS), dtype=np.float64)
    assert np.abs(shown - expected).mean() < 8  # the same photo, give or take JPEG quality 70 (another: over 40)
    view.page.click("#sample-run")
    expect(view.page.locator("#labels .bar")).to_have_count(5)
    assert view.page.locator("#labels .name").first.inner_text() == "espresso"
    expect(view.page.locator("#preview")).to_be_visible()
    assert view.broken_images() == [] and view.errors == []


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
    # On the scale from -1 to 1: the mark at its right end.
    expect(view.page.locator("#similarity-meter")).to_have_attribute("aria-valuenow", "1.000")
    mark = view.page.locator("#similarity-mark").bounding_box()
    scale = view.page.locator("#similarity-meter").bounding_box()
    assert abs(mark["x"] + mark["width"] / 2 - (scale["x"] + scale["width"])) < 2, (mark, scale)
    assert view.errors == []


def test_usable_at_a_phone_width(browser, demo_api):  # noqa: F811
    view = OpenPage(browser, f"{demo_api}/", PHONE)
    assert is_cat(view.classify_cat()[0])
    assert view.classify_text("A dull, tedious, badly acted mess.")[0][0] == "negative"
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
    expect(view.page.locator("#preview")).to_be_hidden()  # no broken-image icon for a file that is not a photo
    assert view.broken_images() == []
    view.page.screenshot(path=ARTIFACTS / "page-error.png", full_page=True)
    # The browser reports the 415 itself; the page raised nothing of its own.
    assert [error for error in view.errors if "415" not in error] == []
