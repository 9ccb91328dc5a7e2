"""The model registry: manifests read at start, interpreters loaded once, broken model directories contained."""
from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor

import pytest

from function.errors import ApiError
from function.models.registry import ModelRegistry
from tests.support.function_fixtures import demo_models  # noqa: F401


@pytest.fixture()
def model_dir(demo_models, tmp_path):  # noqa: F811
    shutil.copytree(demo_models / "digits", tmp_path / "digits")
    return tmp_path


def test_manifests_are_read_but_nothing_loads_until_used(model_dir):
    registry = ModelRegistry(model_dir, 1000)
    assert list(registry.manifests) == ["digits"] and not registry.is_loaded("digits")
    registry.get("digits", "image_classification")
    assert registry.is_loaded("digits")


def test_racing_threads_load_one_interpreter(model_dir):
    registry = ModelRegistry(model_dir, 1000)
    with ThreadPoolExecutor(8) as pool:
        loaded = list(pool.map(lambda _: registry.get("digits", "image_classification"), range(16)))
    assert len({id(model.runner) for model in loaded}) == 1


def test_unknown_model_and_wrong_task(model_dir):
    registry = ModelRegistry(model_dir, 1000)
    with pytest.raises(ApiError) as unknown:
        registry.manifest("nope", "image_classification")
    assert (unknown.value.status, unknown.value.code) == (404, "model_not_found")
    assert "digits" in unknown.value.message
    with pytest.raises(ApiError) as wrong:
        registry.manifest("digits", "text_classification")
    assert (wrong.value.status, wrong.value.code) == (400, "wrong_model_task")


def test_a_broken_manifest_is_skipped_not_fatal(model_dir):
    (model_dir / "broken").mkdir()
    (model_dir / "broken" / "manifest.json").write_text("{ not json")
    (model_dir / "future").mkdir()
    (model_dir / "future" / "manifest.json").write_text(json.dumps({"schema": 2}))
    assert list(ModelRegistry(model_dir, 1000).manifests) == ["digits"]


def test_a_corrupt_model_file_is_503_and_retried_later(model_dir):
    good = (model_dir / "digits" / "model.tflite").read_bytes()
    (model_dir / "digits" / "model.tflite").write_bytes(b"garbage")
    registry = ModelRegistry(model_dir, 1000)
    with pytest.raises(ApiError) as caught:
        registry.get("digits", "image_classification")
    assert (caught.value.status, caught.value.code) == (503, "model_unavailable")
    (model_dir / "digits" / "model.tflite").write_bytes(good)
    assert registry.get("digits", "image_classification").manifest.name == "digits"
