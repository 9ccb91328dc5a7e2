"""Real clients against the local server on 127.0.0.1 (an ephemeral port, in a thread): tritonclient's
InferenceServerClient for the Open Inference Protocol, binary (its default) and JSON, and plain HTTP for TensorFlow
Serving's REST API, as a TF Serving user's `requests.post` sends it."""
from __future__ import annotations


import numpy as np
import pytest
import requests
import tritonclient.http as triton
from tritonclient.utils import InferenceServerException

from tests.support.local_api import serving
from tests.support.function_fixtures import demo_models, make_service  # noqa: F401
from kit.photos import CAT_LABELS, photo
from tests.support.tensor_fixtures import (assert_matches_saved_model, tabular_samples, tensor_model_dir,  # noqa: F401
                                           tensor_registry)

INPUTS, OUTPUTS = tabular_samples()
DATATYPES = {"vitals": "FP32", "sex": "INT32", "serum": "FP32"}
COUNT = 8


@pytest.fixture(scope="module")
def server(tensor_registry):
    with serving(make_service(tensor_registry)) as url:
        yield url.removeprefix("http://")  # tritonclient takes host:port


@pytest.fixture()
def client(server):
    with triton.InferenceServerClient(url=server, network_timeout=60.0) as connection:
        yield connection


def tabular_inputs(binary: bool, count: int = COUNT) -> list[triton.InferInput]:
    tensors = []
    for name, values in INPUTS.items():
        tensor = triton.InferInput(name, list(values[:count].shape), DATATYPES[name])
        tensor.set_data_from_numpy(values[:count], binary_data=binary)
        tensors.append(tensor)
    return tensors


def test_health_and_metadata(client, tensor_registry):
    assert client.is_server_live() and client.is_server_ready() and client.is_model_ready("tabular")
    assert not client.is_model_ready("nope")
    assert "binary_tensor_data" in client.get_server_metadata()["extensions"]
    metadata = client.get_model_metadata("tabular")
    assert metadata["versions"] == [tensor_registry.task("tabular").manifest.version]
    assert [(t["name"], t["datatype"], t["shape"]) for t in metadata["inputs"]] == [
        ("vitals", "FP32", [-1, 3]), ("sex", "INT32", [-1]), ("serum", "FP32", [-1, 6])]


def test_default_call_sends_and_gets_binary_tensors(client):
    result = client.infer("tabular", tabular_inputs(binary=True), request_id="r1")
    assert result.get_response()["id"] == "r1"
    for name, reference in OUTPUTS.items():
        assert result.get_output(name)["parameters"]["binary_data_size"] == reference[:COUNT].nbytes
        assert_matches_saved_model(result.as_numpy(name), reference[:COUNT])


def test_json_call_with_binary_data_false(client):
    outputs = [triton.InferRequestedOutput(name, binary_data=False) for name in OUTPUTS]
    result = client.infer("tabular", tabular_inputs(binary=False), outputs=outputs)
    for name, reference in OUTPUTS.items():
        assert "data" in result.get_output(name)
        assert_matches_saved_model(result.as_numpy(name), reference[:COUNT])


def test_one_requested_output_at_a_pinned_version(client, tensor_registry):
    version = tensor_registry.task("tabular").manifest.version
    result = client.infer("tabular", tabular_inputs(binary=True, count=1), model_version=version,
                          outputs=[triton.InferRequestedOutput("risk")])
    assert result.as_numpy("progression") is None
    assert_matches_saved_model(result.as_numpy("risk"), OUTPUTS["risk"][:1])


def test_the_image_model_as_a_raw_tensor(client, tensor_registry):
    pixels = photo("chelsea").convert("RGB").resize((224, 224))
    image = ((np.asarray(pixels, np.float32) - 127.0) / 128.0)[np.newaxis]
    tensor = triton.InferInput("image", list(image.shape), "FP32")
    tensor.set_data_from_numpy(image)
    scores = client.infer("efficientnet_lite0", [tensor]).as_numpy("output_0")
    assert scores.shape == (1, 1000)
    assert tensor_registry.task("efficientnet_lite0").manifest.labels[int(scores.argmax())] in CAT_LABELS


@pytest.mark.parametrize("model,shape,status,fragments", [
    ("tabular", [1, 4], "400", ["'vitals'", "[batch, 3]", "[1, 4]"]),
    ("nope", [1, 3], "404", ["nope"]),
])
def test_errors_reach_the_client_as_its_exception(client, model, shape, status, fragments):
    tensors = tabular_inputs(binary=True, count=1)
    vitals = triton.InferInput("vitals", shape, "FP32")
    vitals.set_data_from_numpy(np.ones(shape, np.float32))
    with pytest.raises(InferenceServerException) as refused:
        client.infer(model, [vitals, *tensors[1:]])
    assert refused.value.status() == status
    assert all(fragment in refused.value.message() for fragment in fragments), refused.value.message()


def test_tf_serving_predict_over_http(server):
    instances = [{name: values[i].tolist() for name, values in INPUTS.items()} for i in range(COUNT)]
    answer = requests.post(f"http://{server}/v1/models/tabular:predict", json={"instances": instances}, timeout=60)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/json")
    for name, reference in OUTPUTS.items():
        assert_matches_saved_model([row[name] for row in answer.json()["predictions"]], reference[:COUNT])
    refused = requests.post(f"http://{server}/v1/models/tabular:predict", json={"instances": [[1, 2, 3]]}, timeout=60)
    assert refused.status_code == 400 and "3 inputs" in refused.json()["error"]


# ---- A datatype other than the model's: tritonclient's InferInput(..., "FP64") for an FP32 input ----------------

@pytest.mark.parametrize("binary", [True, False], ids=["binary", "json"])
@pytest.mark.parametrize("datatype,dtype", [("FP64", np.float64), ("FP16", np.float16)])
def test_another_float_width_for_an_fp32_input_is_refused_as_triton_refuses_it(client, binary, datatype, dtype):
    tensors = []
    for name, array in INPUTS.items():
        array = array[:1].astype(dtype) if name == "vitals" else array[:1]
        tensor = triton.InferInput(name, list(array.shape), datatype if name == "vitals" else DATATYPES[name])
        tensor.set_data_from_numpy(array, binary_data=binary)
        tensors.append(tensor)
    with pytest.raises(InferenceServerException) as refused:
        client.infer("tabular", tensors)
    assert refused.value.status() == "400"
    assert f"data-type is '{datatype}', but model 'tabular' expects 'FP32'" in refused.value.message()
