"""The Open Inference Protocol v2 through the Lambda entry contract, on the real models, JSON and binary."""
from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from function.entry import handle_event
from function.service import Service
from kit.events import http_api_event
from tests.support.function_fixtures import call, demo_models  # noqa: F401
from tests.support.tensor_fixtures import (assert_matches_saved_model, tabular_samples, tensor_model_dir,  # noqa: F401
                                           tensor_registry, tensor_service)

INPUTS, OUTPUTS = tabular_samples()
DATATYPES = {"vitals": "FP32", "sex": "INT32", "serum": "FP32"}
COUNT = 10


def v2_input(name: str, values: np.ndarray, flat: bool = True) -> dict:
    return {"name": name, "shape": list(values.shape), "datatype": DATATYPES[name],
            "data": values.ravel().tolist() if flat else values.tolist()}


def binary_call(service: Service, path: str, header: dict, tail: bytes) -> tuple[int, dict, dict, bytes]:
    """A request with Triton's binary tensor data; (status, headers, JSON part, binary part) of the answer."""
    head = json.dumps(header).encode()
    event = http_api_event("POST", path, head + tail, content_type="application/octet-stream")
    event["headers"]["inference-header-content-length"] = str(len(head))
    result = handle_event(service, event, None)
    body = base64.b64decode(result["body"]) if result["isBase64Encoded"] else result["body"].encode()
    length = int(result["headers"].get("inference-header-content-length", len(body)))
    return result["statusCode"], result["headers"], json.loads(body[:length]), body[length:]


def test_health_and_server_metadata(tensor_service):
    assert call(tensor_service, "GET", "/v2/health/live") == (200, {"live": True})
    assert call(tensor_service, "GET", "/v2/health/ready") == (200, {"ready": True})
    status, body = call(tensor_service, "GET", "/v2")
    assert status == 200 and body["name"] and body["version"]
    assert body["extensions"] == ["binary_tensor_data", "model_repository", "model_configuration", "statistics"]


def test_model_metadata_and_readiness(tensor_service, tensor_registry):
    version = tensor_registry.task("tabular").manifest.version
    status, body = call(tensor_service, "GET", "/v2/models/tabular")
    assert status == 200
    assert body == {"name": "tabular", "versions": [version], "platform": "litert_tflite",
                    "inputs": [{"name": "vitals", "datatype": "FP32", "shape": [-1, 3]},
                               {"name": "sex", "datatype": "INT32", "shape": [-1]},
                               {"name": "serum", "datatype": "FP32", "shape": [-1, 6]}],
                    "outputs": [{"name": "progression", "datatype": "FP32", "shape": [-1, 1]},
                                {"name": "risk", "datatype": "FP32", "shape": [-1, 3]}]}
    assert call(tensor_service, "GET", f"/v2/models/tabular/versions/{version}") == (200, body)
    assert call(tensor_service, "GET", "/v2/models/tabular/ready") == (200, {"name": "tabular", "ready": True})
    status, body = call(tensor_service, "GET", "/v2/models/tabular/versions/1/ready")
    assert status == 404 and version in body["error"]


@pytest.mark.parametrize("flat", [True, False], ids=["flat", "nested"])
def test_infer_json_answers_every_output_as_the_saved_model_does(tensor_service, tensor_registry, flat):
    request = {"id": "batch-7", "inputs": [v2_input(name, values[:COUNT], flat) for name, values in INPUTS.items()]}
    status, body = call(tensor_service, "POST", "/v2/models/tabular/infer", request)
    assert status == 200
    assert body["id"] == "batch-7" and body["model_name"] == "tabular"
    assert body["model_version"] == tensor_registry.task("tabular").manifest.version
    assert [(o["name"], o["datatype"], o["shape"]) for o in body["outputs"]] == [
        ("progression", "FP32", [COUNT, 1]), ("risk", "FP32", [COUNT, 3])]
    for output in body["outputs"]:
        assert_matches_saved_model(np.reshape(output["data"], output["shape"]), OUTPUTS[output["name"]][:COUNT])


def test_outputs_selects_and_orders_the_answer(tensor_service):
    request = {"inputs": [v2_input(name, values[:2]) for name, values in INPUTS.items()],
               "outputs": [{"name": "risk"}]}
    status, body = call(tensor_service, "POST", "/v2/models/tabular/infer", request)
    assert status == 200 and [o["name"] for o in body["outputs"]] == ["risk"] and "id" not in body


def test_binary_inputs_and_outputs_match_json(tensor_service):
    header = {"inputs": [{"name": name, "shape": list(values[:COUNT].shape), "datatype": DATATYPES[name],
                          "parameters": {"binary_data_size": values[:COUNT].nbytes}}
                         for name, values in INPUTS.items()],
              "parameters": {"binary_data_output": True}}
    tail = b"".join(values[:COUNT].astype(values.dtype.newbyteorder("<")).tobytes() for values in INPUTS.values())
    status, headers, answer, data = binary_call(tensor_service, "/v2/models/tabular/infer", header, tail)
    assert status == 200 and headers["content-type"] == "application/octet-stream"
    offset = 0
    for output in answer["outputs"]:
        size = output["parameters"]["binary_data_size"]
        assert "data" not in output
        values = np.frombuffer(data[offset:offset + size], "<f4").reshape(output["shape"])
        offset += size
        assert_matches_saved_model(values, OUTPUTS[output["name"]][:COUNT])
    assert offset == len(data)


def test_binary_output_of_one_output_beside_json_of_the_other(tensor_service):
    request = {"inputs": [v2_input(name, values[:1]) for name, values in INPUTS.items()],
               "outputs": [{"name": "progression"}, {"name": "risk", "parameters": {"binary_data": True}}]}
    status, _, answer, data = binary_call(tensor_service, "/v2/models/tabular/infer", request, b"")
    progression, risk = answer["outputs"]
    assert status == 200 and "data" in progression and risk["parameters"] == {"binary_data_size": 12}
    assert np.frombuffer(data, "<f4").tolist() == pytest.approx(OUTPUTS["risk"][0].tolist(), abs=1e-5)


def test_image_model_answers_as_a_raw_tensor_through_binary_data(tensor_service, tensor_registry):
    image = np.random.default_rng(3).uniform(-1, 1, (1, 224, 224, 3)).astype(np.float32)
    header = {"inputs": [{"name": "image", "shape": [1, 224, 224, 3], "datatype": "FP32",
                          "parameters": {"binary_data_size": image.nbytes}}]}
    status, _, answer, data = binary_call(tensor_service, "/v2/models/efficientnet_lite0/infer", header,
                                          image.tobytes())
    assert status == 200 and data == b""
    [output] = answer["outputs"]
    assert output["shape"] == [1, 1000] and abs(sum(output["data"]) - 1) < 1e-3
    raw = tensor_registry.task("efficientnet_lite0").runner().run({"image": image})["scores"]
    np.testing.assert_allclose(output["data"], raw[0], atol=1e-6)
