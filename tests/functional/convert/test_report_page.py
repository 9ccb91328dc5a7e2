"""The report page of a real conversion: report.samples.npz written beside the model (and left out of what the
function and the image read), then `python -m convert.report_page MODEL_DIR` turning it into one self-contained
report.html; checked in Debian's Chromium too (headless, through Playwright): it loads with no failed request and
shows the scatters and the worst samples. The screenshot lands in build/test-artifacts/ (docs/report-page.png is
one)."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from convert.report_page import main as report_page
from function.catalog.registry import UnservableModel, open_model
from function.config import TaskLimits
from function.model.manifest import load_manifest
from tests.functional.convert.conftest import VOCABULARY, digits_split
from kit.dockerfile import DockerIgnore

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]
CHROMIUM = Path("/usr/bin/chromium")  # Debian's package (tools/install-test-deps.sh installs it)
ARTIFACTS = REPO / "build" / "test-artifacts"
MODES = ["float32", "float16", "dynamic", "mixed", "int8"]


def digit_photos():
    from sklearn.datasets import load_digits

    return load_digits().images[1500:1600].astype(np.uint8)[:, :, :, None]


@pytest.fixture(scope="module")
def compared_photo_model(image_saved_model, trained_digits_model, tmp_path_factory) -> Path:
    """Raw digit photos with the Keras model's own answers, converted int8 with --compare."""
    from convert.__main__ import main

    _, _, x_test, _ = digits_split()
    root = tmp_path_factory.mktemp("report-page")
    saved_model = root / "tiny_digits"
    shutil.copytree(image_saved_model, saved_model)
    photos = digit_photos()
    np.savez(saved_model / "validation.npz", raw_images=np.concatenate([photo.ravel() for photo in photos]),
             raw_image_shapes=np.array([photo.shape for photo in photos]),
             expected=trained_digits_model.predict(x_test[:100], verbose=0))
    out_dir = root / "model"
    assert main([str(saved_model), str(out_dir), "--quantization", "int8", "--compare"]) == 0
    return out_dir


def test_the_samples_file_holds_every_modes_served_scores_and_the_thumbnails(compared_photo_model):
    with np.load(compared_photo_model / "report.samples.npz", allow_pickle=False) as samples:
        assert str(samples["comparison"]) == "raw" and list(samples["modes"]) == ["int8", *MODES[:4]]
        assert samples["expected"].shape == (100, 10) and int(samples["total"]) == 100
        assert all(samples[f"served_{mode}"].shape == (100, 10) for mode in MODES)
        assert np.allclose(samples["served_int8"].sum(axis=1), 1.0, atol=0.05)  # scores, as the function answers
        assert samples["thumbnail_shapes"].tolist() == [[8, 8, 1]] * 100


def test_the_function_and_the_image_leave_the_report_files_out(compared_photo_model):
    _, task = open_model(compared_photo_model, TaskLimits())
    assert not isinstance(task, UnservableModel)
    assert sorted(load_manifest(compared_photo_model).files) == ["model.tflite"]  # what is verified and published
    ignore = DockerIgnore()
    assert ignore.excludes("models/digits/report.samples.npz") and ignore.excludes("models/digits/report.html")


def page_html(model_dir: Path, capsys) -> str:
    assert report_page([str(model_dir)]) == 0
    assert capsys.readouterr().out == f"wrote {model_dir / 'report.html'}\n"
    return (model_dir / "report.html").read_text()


def test_the_page_is_one_file_with_the_modes_scatters_and_worst_samples(compared_photo_model, capsys):
    html = page_html(compared_photo_model, capsys)
    assert not re.search(r"""(src|href)=["'](?!data:)""", html) and "<script" not in html and "@import" not in html
    assert html.count('<svg class="scatter"') == 5
    assert "int8 (served)" in html and html.count('<tr class="served">') == 1
    assert html.count("data:image/png;base64,") == 12 * 5  # the worst dozen of each mode, thumbnails inline
    assert re.search(r"\d+ of 100 samples get another top label; the largest difference is", html)
    assert "expected (your own pipeline)" in html and "top1 agreement" in html and "served top1 agreement" in html


def test_a_text_models_page_shows_the_texts(text_saved_model, tmp_path, run_convert, capsys):
    from convert.quiet import import_tensorflow

    with np.load(text_saved_model / "validation.npz") as archive:
        ids, mask = archive["inputs_input_ids"][:40], archive["inputs_attention_mask"][:40]
    serve = import_tensorflow().saved_model.load(str(text_saved_model)).signatures["serving_default"]
    expected = next(iter(serve(input_ids=ids, attention_mask=mask).values())).numpy()
    texts = [" ".join(VOCABULARY[token] for token in row[:int(length)]) for row, length in zip(ids, mask.sum(axis=1))]
    directory = tmp_path / "tiny_text"
    shutil.copytree(text_saved_model, directory)
    np.savez(directory / "validation.npz", inputs_input_ids=ids, inputs_attention_mask=mask,
             raw_texts=np.array(texts), expected=expected)
    code, _, err = run_convert(directory, tmp_path / "out", "--quantization", "dynamic")
    assert code == 0, err
    with np.load(tmp_path / "out" / "report.samples.npz") as samples:
        assert list(samples["texts"]) == texts and list(samples["modes"]) == ["dynamic"]
    html = page_html(tmp_path / "out", capsys)
    shown = re.findall(r'<div class="text">([^<]*)</div>', html)
    assert len(shown) == 12 and set(shown) <= set(texts)


def test_a_tensor_models_page_plots_every_value_against_the_savedmodel(tensor_saved_model, tmp_path, run_convert,
                                                                       capsys):
    code, _, err = run_convert(tensor_saved_model, tmp_path / "out", "--quantization", "float16")
    assert code == 0, err
    with np.load(tmp_path / "out" / "report.samples.npz") as samples:
        assert str(samples["comparison"]) == "tensor" and "labels" not in samples and "thumbnails" not in samples
        assert samples["expected"].shape == samples["served_float16"].shape == (150, 4)  # category (3) + price (1)
    html = page_html(tmp_path / "out", capsys)
    assert html.count('<svg class="scatter"') == 1 and "Every output value of every sample" in html
    assert "converted (float16)" in html and "<th>cosine</th>" in html and html.count("validation sample ") == 12


def test_a_directory_without_samples_still_gets_its_table(compared_photo_model, tmp_path, capsys):
    older = tmp_path / "older"
    shutil.copytree(compared_photo_model, older)
    (older / "report.samples.npz").unlink()
    html = page_html(older, capsys)
    assert "no report.samples.npz" in html and "int8 (served)" in html and "<svg" not in html


def test_a_directory_without_a_report_is_one_line_and_exit_2(tmp_path, capsys):
    assert report_page([str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.err == (f"report: error: {tmp_path} has no report.json: convert a model into it first "
                            "(python -m convert MODEL OUT_DIR) [no_report]\n")
    assert not (tmp_path / "report.html").exists()


def test_the_page_in_chromium(compared_photo_model, capsys):
    if not CHROMIUM.exists():
        pytest.fail("chromium is missing: run `bash tools/install-test-deps.sh` as root (apt-get install chromium)",
                    pytrace=False)
    from playwright.sync_api import expect, sync_playwright

    page_html(compared_photo_model, capsys)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM))
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            failed, errors = [], []
            page.on("requestfailed", lambda request: failed.append(request.url))
            page.on("console", lambda message: message.type == "error" and errors.append(message.text))
            page.goto((compared_photo_model / "report.html").as_uri())
            scatters = page.locator("svg.scatter")
            expect(scatters).to_have_count(5)
            expect(scatters.first).to_be_visible()
            assert scatters.first.locator("circle").count() == 100 * 5  # each photo's five best classes
            worst = page.locator("table.worst").first
            expect(worst.locator("tr")).to_have_count(13)
            sizes = worst.locator("img").evaluate_all("images => images.map(i => [i.complete, i.naturalWidth])")
            assert sizes == [[True, 8]] * 12  # every thumbnail decoded from its data: URL
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=ARTIFACTS / "report-page.png", full_page=True)
        finally:
            browser.close()
    assert failed == [] and errors == []
