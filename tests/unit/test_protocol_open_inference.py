"""The Open Inference codec on tensor kinds no demo model has (bool, dynamic dimensions), and its constants."""
from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest

import function
from function.errors import InvalidInput, PayloadTooLarge
from function.model.manifest import Manifest, ManifestError, TensorSpec
from function.protocols import open_inference
from function.config import TaskLimits
from function.tasks.tensor import TensorTask

REPO = Path(__file__).resolve().parents[2]


def task_with(*inputs: TensorSpec) -> TensorTask:
    output = TensorSpec("y", (1, 1), "float32", None, None, "y")
    manifest = Manifest(directory=REPO, name="fake", task="tensor", version="ab" * 32, labels=(), output=None,
                        preprocessing={}, model_file=REPO / "none.tflite", files={}, quantization="float32",
                        signature="serving_default", inputs=inputs, outputs=(output,))
    return TensorTask(manifest, TaskLimits())


FLAGS = TensorSpec("flags", (1, 2), "bool", None, None, "flags")
TOKENS = TensorSpec("tokens", (1, -1), "int64", None, None, "tokens")


def test_server_version_is_the_project_version():
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert pyproject["project"]["dynamic"] == ["version"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "function.__version__"}
    assert open_inference.server_metadata()["version"] == function.__version__ == "0.2.0"


def test_bool_input_from_json_and_from_binary_bytes():
    task = task_with(FLAGS)
    body = {"inputs": [{"name": "flags", "shape": [2, 2], "datatype": "BOOL", "data": [True, False, False, True]}]}
    parsed = open_inference.parse_infer(body, b"", task, max_batch=8)
    assert [row["flags"].tolist() for row in parsed.instances] == [[True, False], [False, True]]
    binary = {"inputs": [{"name": "flags", "shape": [1, 2], "datatype": "BOOL",
                          "parameters": {"binary_data_size": 2}}]}
    assert open_inference.parse_infer(binary, b"\x01\x00", task, 8).instances[0]["flags"].tolist() == [True, False]
    with pytest.raises(InvalidInput, match="0 or 1"):
        open_inference.parse_infer(binary, b"\x02\x00", task, 8)
    with pytest.raises(InvalidInput, match="true/false"):
        open_inference.parse_infer({"inputs": [{**body["inputs"][0], "data": [1, 0, 0, 1]}]}, b"", task, 8)


def test_dynamic_dimension_takes_any_length_within_one_request():
    task = task_with(TOKENS)
    body = {"inputs": [{"name": "tokens", "shape": [2, 5], "datatype": "INT64", "data": list(range(10))}]}
    rows = open_inference.parse_infer(body, b"", task, 8).instances
    assert [row["tokens"].tolist() for row in rows] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    assert rows[0]["tokens"].dtype == np.int64


def test_batch_limit_is_a_413():
    task = task_with(TOKENS)
    body = {"inputs": [{"name": "tokens", "shape": [3, 1], "datatype": "INT64", "data": [1, 2, 3]}]}
    with pytest.raises(PayloadTooLarge, match="limit is 2"):
        open_inference.parse_infer(body, b"", task, max_batch=2)


@pytest.mark.parametrize("header,body,expected", [
    (None, b'{"a": 1}', (b'{"a": 1}', b"")),
    ("8", b'{"a": 1}\x01\x02', (b'{"a": 1}', b"\x01\x02")),
])
def test_split_body(header, body, expected):
    assert open_inference.split_body(body, header) == expected


def test_a_string_tensor_model_is_not_servable_as_tensors():
    with pytest.raises(ManifestError, match="string"):
        task_with(TensorSpec("text", (1,), "string", None, None, "text"))


HALF = TensorSpec("half", (1, 3), "float16", None, None, "half")


def test_a_float16_input_is_advertised_as_fp16_and_takes_fp16():
    task = task_with(HALF)
    metadata = open_inference.model_metadata(task, [task.manifest.version])
    assert metadata["inputs"] == [{"name": "half", "datatype": "FP16", "shape": [-1, 3]}]
    values = np.array([[0.5, -2.0, 1000.0]], np.float16)
    binary = {"inputs": [{"name": "half", "shape": [1, 3], "datatype": "FP16", "parameters": {"binary_data_size": 6}}]}
    parsed = open_inference.parse_infer(binary, values.tobytes(), task, 8).instances.arrays["half"]
    assert parsed.dtype == np.float16 and parsed.tolist() == values.tolist()
    body = {"inputs": [{"name": "half", "shape": [1, 3], "datatype": "FP16", "data": values.tolist()[0]}]}
    parsed = open_inference.parse_infer(body, b"", task, 8).instances.arrays["half"]
    assert parsed.dtype == np.float16 and parsed.tolist() == values.tolist()


FLOAT32 = TensorSpec("x", (1, 3), "float32", None, None, "x")


@pytest.mark.parametrize("spec,sent", [(HALF, "FP32"), (HALF, "FP64"), (FLOAT32, "FP64"), (FLOAT32, "FP16")])
def test_another_float_width_is_refused_as_triton_refuses_it(spec, sent):
    """Triton's core (infer_request.cc) refuses an input whose datatype is not the model's, whatever the values:
    "inference input 'x' data-type is 'FP64', but model 'fake' expects 'FP32'". JSON and binary alike."""
    task = task_with(spec)
    wanted = "FP16" if spec.dtype == "float16" else "FP32"
    body = {"inputs": [{"name": spec.name, "shape": [1, 3], "datatype": sent, "data": [0.5, 1.0, 2.0]}]}
    with pytest.raises(InvalidInput, match=f"data-type is '{sent}', but model 'fake' expects '{wanted}'"):
        open_inference.parse_infer(body, b"", task, 8)
    raw = np.zeros(3, {"FP16": "<f2", "FP32": "<f4", "FP64": "<f8"}[sent]).tobytes()
    binary = {"inputs": [{"name": spec.name, "shape": [1, 3], "datatype": sent,
                          "parameters": {"binary_data_size": len(raw)}}]}
    with pytest.raises(InvalidInput, match=f"data-type is '{sent}'"):
        open_inference.parse_infer(binary, raw, task, 8)


def test_a_float16_input_refuses_a_value_float16_cannot_hold():
    task = task_with(HALF)
    body = {"inputs": [{"name": "half", "shape": [1, 3], "datatype": "FP16", "data": [70000, 1, 2]}]}
    with pytest.raises(InvalidInput, match="65504"):
        open_inference.parse_infer(body, b"", task, 8)
