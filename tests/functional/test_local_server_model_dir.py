"""The local server's --model-dir as users change it while it runs: real converted models copied, duplicated,
replaced and removed under a temporary model directory, every effect seen through HTTP."""
from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from convert.output_dir import staged_output_dir
from tests.support.function_fixtures import demo_models  # noqa: F401
from kit.photos import encode, photo
from tests.support.serve_process import serving

TABULAR_ROW = {"vitals": [59, 32.1, 101], "sex": 2, "serum": [157, 93.2, 38, 4, 4.8598, 87]}


def call(url: str, method: str = "GET", body: bytes | None = None, content_type: str = "application/json"):
    request = urllib.request.Request(url, data=body, method=method, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def models(url: str) -> dict[str, dict]:
    status, body = call(f"{url}/models")
    assert status == 200
    return {model["name"]: model for model in body["models"]}


def classify_digit(url: str, model: str = "digits"):
    digit = encode(photo("chelsea").convert("L").resize((8, 8)), "PNG")
    return call(f"{url}/classify?model={model}", "POST", digit, "image/png")


def predict_tabular(url: str):
    return call(f"{url}/v1/models/tabular:predict", "POST", json.dumps({"instances": [TABULAR_ROW]}).encode())


def relabelled(source: Path, target: Path, prefix: str) -> None:
    """`target` made from `source` as `convert` writes a directory: staged beside it, renamed into place whole.
    New labels give a new serving version."""
    with staged_output_dir(target) as staging:
        for file in source.iterdir():
            shutil.copy(file, staging / file.name)
        manifest = json.loads((staging / "manifest.json").read_text())
        manifest["labels"] = [f"{prefix}{label}" for label in manifest["labels"]]
        (staging / "manifest.json").write_text(json.dumps(manifest))


@pytest.fixture()
def model_dir(demo_models, tmp_path):  # noqa: F811
    directory = tmp_path / "models"
    directory.mkdir()
    shutil.copytree(demo_models / "digits", directory / "digits")
    return directory


def test_two_directories_with_one_name_serve_neither_and_every_other_model_serves(model_dir, demo_models,  # noqa: F811
                                                                                  tmp_path):
    # One SavedModel converted twice side by side: two directories whose manifests say "digits".
    shutil.copytree(model_dir / "digits", model_dir / "digits-int8")
    shutil.copytree(demo_models / "tabular", model_dir / "tabular")
    with serving(model_dir, tmp_path) as url:
        entry = models(url)["digits"]
        assert entry["available"] is False and entry["code"] == "duplicate_model_name"
        assert f"{model_dir / 'digits'} and {model_dir / 'digits-int8'} both claim the name 'digits'" \
            in entry["reason"]
        status, body = classify_digit(url)
        assert status == 503 and body["error"]["code"] == "model_unavailable"
        assert entry["reason"] in body["error"]["message"]
        status, body = predict_tabular(url)
        assert status == 200 and len(body["predictions"]) == 1
        assert call(f"{url}/health")[1] == {"status": "ok", "models": 1, "unavailable": 1}


def test_models_added_replaced_and_removed_while_the_server_runs(model_dir, demo_models, tmp_path):  # noqa: F811
    with serving(model_dir, tmp_path) as url:
        before = models(url)
        assert set(before) == {"digits"}
        assert predict_tabular(url)[0] == 404

        shutil.copytree(demo_models / "tabular", model_dir / "tabular")  # added
        assert models(url)["tabular"]["available"] is True
        assert predict_tabular(url)[0] == 200

        status, body = classify_digit(url)
        assert status == 200 and body["model_version"] == before["digits"]["version"]
        relabelled(demo_models / "digits", model_dir / "digits", "digit ")  # replaced by a new version
        after = models(url)["digits"]
        assert after["available"] is True and after["version"] != before["digits"]["version"]
        status, body = classify_digit(url)
        assert status == 200 and body["model_version"] == after["version"]
        assert body["predictions"][0]["label"].startswith("digit ")

        shutil.copytree(model_dir / "digits", model_dir / "digits-copy")  # a second directory claims "digits"
        assert models(url)["digits"]["code"] == "duplicate_model_name"
        assert classify_digit(url)[0] == 503
        shutil.rmtree(model_dir / "digits-copy")
        assert models(url)["digits"]["available"] is True

        shutil.rmtree(model_dir / "tabular")  # removed
        assert "tabular" not in models(url)
        status, body = predict_tabular(url)
        assert status == 404 and "tabular" in body["error"]
        assert classify_digit(url)[0] == 200


def test_a_directory_still_being_written_is_not_served_until_its_files_match(model_dir, demo_models,  # noqa: F811
                                                                             tmp_path):
    with serving(model_dir, tmp_path) as url:
        status, first = classify_digit(url)
        assert status == 200

        # A copy in progress: the manifest is there, model.tflite only half.
        tabular = model_dir / "tabular"
        tabular.mkdir()
        shutil.copy(demo_models / "tabular" / "manifest.json", tabular)
        content = (demo_models / "tabular" / "model.tflite").read_bytes()
        (tabular / "model.tflite").write_bytes(content[:len(content) // 2])
        entry = models(url)["tabular"]
        assert entry["available"] is False and "sha256" in entry["reason"]
        status, body = predict_tabular(url)
        assert status == 503 and "sha256" in body["error"]
        (tabular / "model.tflite").write_bytes(content)  # the copy completes
        assert models(url)["tabular"]["available"] is True
        assert predict_tabular(url)[0] == 200

        # A new version of a served model, its manifest written before its model file: the old one keeps answering.
        digits = model_dir / "digits"
        manifest = json.loads((digits / "manifest.json").read_text())
        model_file = (digits / "model.tflite").read_bytes()
        # (a new file, as convert and cp to a fresh name write: the served interpreter maps the old one)
        (digits / "model.tflite").unlink()
        (digits / "model.tflite").write_bytes(model_file[:100])
        (digits / "manifest.json").write_text(json.dumps({**manifest, "labels": [f"d{i}" for i in range(10)]}))
        entry = models(url)["digits"]
        assert entry["available"] is True and entry["version"] == first["model_version"]
        assert "sha256" in entry["refresh"]["problem"]
        status, body = classify_digit(url)
        assert status == 200 and body["model_version"] == first["model_version"]
        (digits / "model.tflite").unlink()
        (digits / "model.tflite").write_bytes(model_file)
        entry = models(url)["digits"]
        assert "refresh" not in entry and entry["version"] != first["model_version"]
        status, body = classify_digit(url)
        assert status == 200 and body["predictions"][0]["label"].startswith("d")
