"""Every model directory `convert` writes is served by the function: loaded by its registry and answered through
the Lambda entry contract (function.entry.handle_event, what function.app.handler calls), one route per task; and the
function's own check inside convert refuses a directory it could not serve."""
from __future__ import annotations

import io
from base64 import b64encode
import json
import shutil

import numpy as np
import pytest
from PIL import Image

from convert.errors import ConversionError
from convert.function_check import verify_with_function
from convert.litert_model import LiteRTModel
from convert.samples import Samples
from function.entry import handle_event
from function.inference import cached_results
from function.log import Timings
from function.catalog.registry import ModelRegistry
from kit.events import http_api_event
from tests.support.function_fixtures import make_service

pytestmark = pytest.mark.slow


def png(side: int, mode: str) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray((np.arange(side * side) % 256).astype(np.uint8).reshape(side, side)).convert(mode).save(
        buffer, "PNG")
    return buffer.getvalue()


def answer(service, path: str, body: dict) -> dict:
    result = handle_event(service, http_api_event("POST", path, body), None)
    assert result["statusCode"] == 200, result["body"]
    return json.loads(result["body"])


@pytest.mark.parametrize(("fixture", "mode"), [
    ("image_saved_model", "int8"), ("image_saved_model", "dynamic"), ("text_saved_model", "int8"),
    ("embedding_saved_model", "float16"), ("tensor_saved_model", "float32"),
])
def test_each_task_is_answered_through_the_handler(fixture, mode, request, tmp_path, run_convert):
    saved_model = request.getfixturevalue(fixture)
    code, out, err = run_convert(saved_model, tmp_path / "models" / "m", "--quantization", mode)
    assert code == 0, err
    assert "the function loads m and answers" in out
    registry = ModelRegistry(tmp_path / "models")
    assert not registry.unservable, registry.unservable
    (name, task), = registry.tasks.items()
    service = make_service(registry)
    if task.name == "image_classification":
        side = task.manifest.preprocessing["size"][0]
        body = answer(service, "/classify", {"model": name, "image": b64encode(
            png(side, task.manifest.preprocessing["color_mode"])).decode()})
        assert body["predictions"][0]["label"] in task.manifest.labels
    elif task.name == "text_classification":
        body = answer(service, "/sentiment", {"model": name, "texts": ["a fine day", "a bad day"]})
        assert {p["label"] for p in body["predictions"]} <= set(task.manifest.labels)
    elif task.name == "text_embedding":
        body = answer(service, "/embed", {"model": name, "text": "a fine day"})
        assert len(body["embeddings"][0]["embedding"]) == body["dimensions"]
    else:
        samples = dict(np.load(saved_model / "validation.npz"))
        instance = {spec.name: samples[f"inputs_{spec.name}"][0] for spec in task.manifest.inputs}
        prediction = cached_results(task, service.store, [instance], {}, Timings())
        assert set(prediction.results[0]) == {spec.name for spec in task.manifest.outputs}


def test_a_directory_the_function_cannot_serve_is_refused_with_the_reason(image_saved_model, tmp_path,
                                                                          run_convert):
    code, _, err = run_convert(image_saved_model, tmp_path / "m", "--quantization", "float32")
    assert code == 0, err
    staged = tmp_path / "staged"
    shutil.copytree(tmp_path / "m", staged)
    manifest = json.loads((staged / "manifest.json").read_text())
    manifest["labels"] = manifest["labels"][:-1]
    (staged / "manifest.json").write_text(json.dumps(manifest))
    samples = dict(np.load(image_saved_model / "validation.npz"))
    validation = Samples({manifest["inputs"][0]["name"]: samples["inputs_image"]}, None, "validation.npz")
    model = LiteRTModel((staged / "model.tflite").read_bytes())
    with pytest.raises(ConversionError) as caught:
        verify_with_function(staged, model, validation)
    assert caught.value.code == "function_refuses" and "labels for an output of" in caught.value.message


def test_a_manifest_that_misreads_the_tensors_is_refused(image_saved_model, tmp_path, run_convert):
    code, _, err = run_convert(image_saved_model, tmp_path / "m", "--quantization", "int8")
    assert code == 0, err
    manifest = json.loads((tmp_path / "m" / "manifest.json").read_text())
    assert manifest["inputs"][0]["quantization"], "the int8 fixture should have a quantized input"
    manifest["inputs"][0]["quantization"]["scale"] *= 4  # the function would feed every pixel at the wrong scale
    (tmp_path / "m" / "manifest.json").write_text(json.dumps(manifest))
    samples = dict(np.load(image_saved_model / "validation.npz"))
    validation = Samples({manifest["inputs"][0]["name"]: samples["inputs_image"]}, None, "validation.npz")
    model = LiteRTModel((tmp_path / "m" / "model.tflite").read_bytes())
    with pytest.raises(ConversionError) as caught:
        verify_with_function(tmp_path / "m", model, validation)
    assert caught.value.code == "function_refuses" and "where the model scores" in caught.value.message
