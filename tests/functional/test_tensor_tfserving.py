"""TensorFlow Serving's REST API through the Lambda entry contract, on the real models: `tabular` (three inputs of
two dtypes, two outputs) against its SavedModel's own outputs, and the demo image and text models as raw tensors."""
from __future__ import annotations

import numpy as np
import pytest

from function.protocols.tfserving import version_number
from tests.support.function_fixtures import call, demo_models  # noqa: F401
from kit.photos import CAT_LABELS, photo
from tests.support.tensor_fixtures import (assert_matches_saved_model, tabular_samples, tensor_model_dir,  # noqa: F401
                                           tensor_registry, tensor_service)

FORMATS = ["2.0", "1.0"]
INPUTS, OUTPUTS = tabular_samples()
COUNT = 12


def instance(index: int) -> dict:
    return {name: values[index].tolist() for name, values in INPUTS.items()}


def test_status_says_available_with_a_version_that_changes_with_the_model(tensor_service, tensor_registry):
    status, body = call(tensor_service, "GET", "/v1/models/tabular")
    version = version_number(tensor_registry.task("tabular").manifest)
    assert status == 200
    assert body["model_version_status"] == [{"version": version, "state": "AVAILABLE",
                                             "status": {"error_code": "OK", "error_message": ""}}]
    # Beside it, OpenAI's Model (tests/functional/test_openai_models.py): nothing else.
    assert set(body) == {"model_version_status", "id", "object", "created", "owned_by"} and body["id"] == "tabular"
    assert int(version) == int(tensor_registry.task("tabular").manifest.version[:12], 16)
    assert call(tensor_service, "GET", f"/v1/models/tabular/versions/{version}") == (status, body)


def test_metadata_is_the_signature_def_tf_serving_writes(tensor_service):
    status, body = call(tensor_service, "GET", "/v1/models/tabular/metadata")
    assert status == 200
    assert body["model_spec"]["name"] == "tabular" and body["model_spec"]["signature_name"] == ""
    signature = body["metadata"]["signature_def"]["signature_def"]["serving_default"]
    assert signature["method_name"] == "tensorflow/serving/predict"

    def dims(info):
        return [dim["size"] for dim in info["tensor_shape"]["dim"]]

    assert {name: (info["dtype"], dims(info)) for name, info in signature["inputs"].items()} == {
        "vitals": ("DT_FLOAT", ["-1", "3"]), "sex": ("DT_INT32", ["-1"]), "serum": ("DT_FLOAT", ["-1", "6"])}
    assert {name: (info["dtype"], dims(info)) for name, info in signature["outputs"].items()} == {
        "progression": ("DT_FLOAT", ["-1", "1"]), "risk": ("DT_FLOAT", ["-1", "3"])}


@pytest.mark.parametrize("event_format", FORMATS)
def test_row_format_answers_every_output_per_instance_as_the_saved_model_does(tensor_service, event_format):
    status, body = call(tensor_service, "POST", "/v1/models/tabular:predict",
                        {"instances": [instance(i) for i in range(COUNT)]}, event_format=event_format)
    assert status == 200 and list(body) == ["predictions"]
    predictions = body["predictions"]
    assert len(predictions) == COUNT and all(set(row) == {"progression", "risk"} for row in predictions)
    for name in OUTPUTS:
        assert_matches_saved_model([row[name] for row in predictions], OUTPUTS[name][:COUNT])


def test_columnar_format_answers_batched_outputs_as_the_saved_model_does(tensor_service):
    inputs = {name: values[:COUNT].tolist() for name, values in INPUTS.items()}
    status, body = call(tensor_service, "POST", "/v1/models/tabular:predict",
                        {"signature_name": "serving_default", "inputs": inputs})
    assert status == 200 and list(body) == ["outputs"] and set(body["outputs"]) == {"progression", "risk"}
    for name in OUTPUTS:
        assert_matches_saved_model(body["outputs"][name], OUTPUTS[name][:COUNT])


def test_both_formats_and_the_version_path_give_the_same_numbers(tensor_service, tensor_registry):
    version = version_number(tensor_registry.task("tabular").manifest)
    _, rows = call(tensor_service, "POST", "/v1/models/tabular:predict", {"instances": [instance(0), instance(1)]})
    _, columns = call(tensor_service, "POST", f"/v1/models/tabular/versions/{version}:predict",
                      {"inputs": {name: values[:2].tolist() for name, values in INPUTS.items()}})
    assert [row["risk"] for row in rows["predictions"]] == columns["outputs"]["risk"]


def test_each_instance_is_computed_once_then_answered_from_the_result_cache(tensor_service):
    body = {"instances": [instance(0), instance(1), instance(0)]}
    status, first = call(tensor_service, "POST", "/v1/models/tabular:predict", body)
    assert status == 200 and first["predictions"][0] == first["predictions"][2]
    assert len(tensor_service.store) == 2
    assert call(tensor_service, "POST", "/v1/models/tabular:predict", body) == (200, first)
    assert len(tensor_service.store) == 2


def test_single_output_model_answers_bare_values_not_objects(tensor_service):
    digit = np.linspace(0, 1, 64, dtype=np.float32).reshape(8, 8, 1)
    status, rows = call(tensor_service, "POST", "/v1/models/digits:predict", {"instances": [digit.tolist()] * 2})
    assert status == 200 and len(rows["predictions"]) == 2
    assert len(rows["predictions"][0]) == 10 and isinstance(rows["predictions"][0][0], float)
    status, columns = call(tensor_service, "POST", "/v1/models/digits:predict", {"inputs": [digit.tolist()]})
    assert status == 200 and np.shape(columns["outputs"]) == (1, 10)
    assert columns["outputs"][0] == rows["predictions"][0]


def test_single_input_model_takes_named_instances_too(tensor_service):
    digit = np.zeros((8, 8, 1)).tolist()
    _, plain = call(tensor_service, "POST", "/v1/models/digits:predict", {"instances": [digit]})
    _, named = call(tensor_service, "POST", "/v1/models/digits:predict", {"instances": [{"image": digit}]})
    assert plain == named


def test_image_model_as_a_raw_tensor_gives_the_scores_classify_gives(tensor_service, tensor_registry):
    """The preprocessed photo, sent as a 224x224x3 float tensor, scores as /classify scores the photo itself."""
    task = tensor_registry.task("efficientnet_lite0")
    pixels = photo("chelsea").convert("RGB").resize((224, 224))
    image = ((np.asarray(pixels, np.float32) - 127.0) / 128.0).tolist()
    status, body = call(tensor_service, "POST", "/v1/models/efficientnet_lite0:predict", {"instances": [image]})
    assert status == 200
    scores = np.asarray(body["predictions"][0])
    assert scores.shape == (1000,) and abs(scores.sum() - 1) < 1e-3
    assert task.manifest.labels[int(scores.argmax())] in CAT_LABELS


def test_text_model_as_raw_token_ids(tensor_service, tensor_registry):
    ids = tensor_registry.task("sentiment").encoder().encode(["What a wonderful film."])[0].ids
    padded = (ids + [0] * 64)[:64]
    status, body = call(tensor_service, "POST", "/v1/models/sentiment:predict", {"instances": [padded]})
    assert status == 200 and 0.5 < body["predictions"][0][0] <= 1.0


def test_nan_and_infinity_pass_through_a_float_input(tensor_service):
    row = instance(0)
    row["serum"][0] = float("nan")
    status, body = call(tensor_service, "POST", "/v1/models/tabular:predict", {"instances": [row]})
    assert status == 200 and np.isnan(body["predictions"][0]["progression"][0])
