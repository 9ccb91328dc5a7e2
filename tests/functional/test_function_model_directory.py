"""Startup says what it serves: broken model directories are visible with their reason, absent defaults are named
with the variable that sets them, and nothing is silently skipped."""
from __future__ import annotations

import json
import shutil

import pytest

from function.catalog.registry import ModelRegistry
from tests.support.function_fixtures import call, demo_models, make_service  # noqa: F401
from kit.photos import b64, cat_jpeg


@pytest.fixture()
def model_dir(demo_models, tmp_path):  # noqa: F811
    shutil.copytree(demo_models / "digits", tmp_path / "digits")
    shutil.copytree(demo_models / "sentiment", tmp_path / "sentiment")
    return tmp_path


def test_an_absent_default_model_is_named_with_its_variable_and_not_listed(model_dir):
    service = make_service(ModelRegistry(model_dir))  # the default image model, efficientnet_lite0, is absent
    status, body = call(service, "POST", "/classify", {"image": b64(cat_jpeg())})
    assert (status, body["error"]["code"]) == (404, "model_not_found")
    assert "DEFAULT_IMAGE_MODEL" in body["error"]["message"] and "digits" in body["error"]["message"]
    _, models = call(service, "GET", "/models")
    assert models["defaults"] == {"text": "sentiment"}


def test_a_directory_that_cannot_be_served_is_listed_and_answers_503_with_its_reason(model_dir):
    manifest_file = model_dir / "digits" / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    manifest["preprocessing"]["color_mode"] = "rgb"
    manifest_file.write_text(json.dumps(manifest))
    service = make_service(ModelRegistry(model_dir))
    _, models = call(service, "GET", "/models")
    listed = {model["name"]: model for model in models["models"]}
    assert listed["digits"]["available"] is False and "color_mode 'rgb'" in listed["digits"]["reason"]
    status, body = call(service, "POST", "/classify", {"image": b64(cat_jpeg()), "model": "digits"})
    assert (status, body["error"]["code"]) == (503, "model_unavailable")
    assert "color_mode 'rgb'" in body["error"]["message"]
    assert call(service, "GET", "/health")[1] == {"status": "ok", "models": 1, "unavailable": 1}


def test_tokenize_loads_no_interpreter(model_dir):
    registry = ModelRegistry(model_dir)
    service = make_service(registry)
    status, body = call(service, "POST", "/tokenize", {"text": "Hello there"})
    assert status == 200 and body["results"][0]["count"] > 2
    assert not registry.is_loaded("sentiment")
