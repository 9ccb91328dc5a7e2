"""`convert --name`, and one SavedModel converted twice side by side into the model directory of a running local
server: first under one name (neither served, both named), then under a name each (both served)."""
from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from convert.pipeline import run
from tests.support.serve_process import serving

REPO_ROOT = Path(__file__).resolve().parents[3]


def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "convert", *map(str, args)], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=300)


def get(url: str):
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def served(url: str) -> dict[str, dict]:
    return {model["name"]: model for model in get(f"{url}/models")[1]["models"]}


@pytest.mark.parametrize("name", ["-digits", "digits/int8", "a" * 65])
def test_a_bad_name_is_refused_before_anything_converts(image_saved_model, tmp_path, name):
    result = run_cli(image_saved_model, tmp_path / "out", f"--name={name}")
    assert result.returncode == 2 and not (tmp_path / "out").exists()
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"convert: error: --name \"{name[:50]}") and line.endswith("[bad_name]")


@pytest.mark.slow
def test_one_saved_model_converted_twice_side_by_side(image_saved_model, tmp_path):
    models = tmp_path / "models"
    run(image_saved_model, models / "tiny-f16", "float16", log=lambda _: None)
    with serving(models, tmp_path) as url:
        assert served(url)["tiny_digits"]["quantization"] == "float16"

        run(image_saved_model, models / "tiny-int8", "int8", log=lambda _: None)  # the sidecar's name again
        entry = served(url)["tiny_digits"]
        assert entry["available"] is False and entry["code"] == "duplicate_model_name"
        assert str(models / "tiny-f16") in entry["reason"] and str(models / "tiny-int8") in entry["reason"]
        status, body = get(f"{url}/v2/models/tiny_digits/ready")
        assert status == 503 and str(models / "tiny-int8") in body["error"]

        result = run_cli(image_saved_model, models / "tiny-int8", "--quantization", "int8", "--name", "tiny-int8")
        assert result.returncode == 0, result.stderr
        listed = served(url)
        assert (listed["tiny_digits"]["available"], listed["tiny_digits"]["quantization"]) == (True, "float16")
        assert (listed["tiny-int8"]["available"], listed["tiny-int8"]["quantization"]) == (True, "int8")
        assert json.loads((models / "tiny-int8" / "manifest.json").read_text())["name"] == "tiny-int8"
        for name in ("tiny_digits", "tiny-int8"):
            assert get(f"{url}/v2/models/{name}/ready") == (200, {"name": name, "ready": True})
