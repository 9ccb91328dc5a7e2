"""Section 12's floor and ONNX Runtime peer answer what the function answers, on every route it times: a floor
that computed something else would make every ratio meaningless. The floor (bench.raw_pipeline + route_answers) runs
on the same demo models through the real LiteRT interpreter; the peer on a real ONNX Runtime session."""
from __future__ import annotations

import json

import numpy as np
import pytest

from bench import floors_peers, onnx_export
from bench.baselines import route_answers
from bench.raw_pipeline import RawModel
from function.entry import handle_event
from tests.support.function_fixtures import demo_models, make_service, registry  # noqa: F401  (fixtures)

ROUTES = {route.name: route for route in [*floors_peers.routes(), floors_peers.batch_route()]}


@pytest.fixture(scope="module")
def function_service(registry):  # noqa: F811  (the fixture imported above)
    return make_service(registry)


def _bodies(service, route: floors_peers.Route, demo_models) -> tuple[dict, dict]:  # noqa: F811
    answer = handle_event(service, route.event, None)
    assert answer["statusCode"] == 200, answer["body"][:300]
    floor = route_answers.answer(RawModel(demo_models / route.model), route.event)
    return json.loads(answer["body"]), json.loads(floor["body"])


@pytest.mark.parametrize("name", ["/classify", "/sentiment"])
def test_the_floor_labels_what_the_function_labels(function_service, demo_models, name):  # noqa: F811
    ours, floor = _bodies(function_service, ROUTES[name], demo_models)
    assert floor["predictions"][0]["label"] == ours["predictions"][0]["label"]
    assert floor["predictions"][0]["score"] == pytest.approx(ours["predictions"][0]["score"], abs=1e-5)


@pytest.mark.parametrize("name", ["/embed", "/v1/embeddings", floors_peers.BATCH])
def test_the_floor_embeds_what_the_function_embeds(function_service, demo_models, name):  # noqa: F811
    ours, floor = _bodies(function_service, ROUTES[name], demo_models)
    rows = "data" if name == "/v1/embeddings" else "embeddings"
    expected = np.array([item["embedding"] for item in ours[rows]])
    got = np.array([item["embedding"] for item in floor[rows]])
    assert got.shape == expected.shape and got.shape[0] == (32 if name == floors_peers.BATCH else 1)
    # The floor pads the batch to its longest text, the function to each group's: minilm is served mixed (int8
    # activations per row, quantized on the fly), where a padding's ~1e-7 change of an attention sum can move an
    # activation by one int8 step (tests/functional/test_embeddings.py); one text runs the same either way.
    assert np.allclose(got, expected, atol=1e-3 if name == floors_peers.BATCH else 1e-5)


@pytest.mark.parametrize("name", ["tabular :predict", "tabular v2 infer"])
def test_the_floor_gives_the_function_s_tensors(function_service, demo_models, name):  # noqa: F811
    ours, floor = _bodies(function_service, ROUTES[name], demo_models)
    if name == "tabular :predict":
        assert floor["predictions"] == ours["predictions"]
    else:
        assert [(o["name"], o["shape"], o["data"]) for o in floor["outputs"]] == \
               [(o["name"], o["shape"], o["data"]) for o in ours["outputs"]]


def test_tf2onnx_s_erfc_is_rewritten_as_one_minus_erf(tmp_path):
    """tf2onnx 1.17 writes TF's Erfc (Keras' exact GELU) as an op ONNX lacks; the rewrite loads and computes it."""
    onnx = pytest.importorskip("onnx")
    onnxruntime = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper  # noqa: PLC0415

    graph = helper.make_graph([helper.make_node("Erfc", ["x"], ["y"], name="erfc")], "erfc",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5])])
    model_file = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), str(model_file))
    with pytest.raises(Exception, match="Erfc"):
        onnxruntime.InferenceSession(str(model_file), providers=["CPUExecutionProvider"])
    onnx_export._replace_erfc(model_file)  # noqa: SLF001
    session = onnxruntime.InferenceSession(str(model_file), providers=["CPUExecutionProvider"])
    x = np.array([-2.0, -0.5, 0.0, 0.5, 2.0], np.float32)
    from math import erfc  # noqa: PLC0415

    assert np.allclose(session.run(None, {"x": x})[0], [erfc(v) for v in x], atol=1e-6)
