"""A structured model's raw columns through the tensor protocols, without TensorFlow: the manifest's columns are what
clients send (strings as DT_STRING / BYTES), JSON strings and v2 BYTES binary data are read exactly and refused
clearly, and a bad columns manifest leaves the model unservable with the reason."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from function.config import TaskLimits
from function.errors import InvalidInput
from function.log import Timings
from function.model.manifest import Manifest, ManifestError, TensorSpec
from function.protocols import open_inference, tfserving
from function.tasks.tensor import TensorTask

REPO = Path(__file__).resolve().parents[2]
COLUMNS = {"type": "columns", "columns": [
    {"name": "colour", "dtype": "string", "shape": [-1], "keras_shape": [-1, 1], "input": "colour_encoded",
     "steps": [{"kind": "lookup", "layer": "colour_lookup", "vocabulary": ["red", "green"], "mask_token": "",
                "num_oov_indices": 1, "output_mode": "one_hot", "depth": 3}]},
    {"name": "size", "dtype": "int64", "shape": [-1], "keras_shape": [-1, 1], "input": "size_scaled",
     "steps": [{"kind": "normalization", "layer": "size_norm", "mean": [[40.0]], "variance": [[4.0]]}]},
]}
MODEL_INPUTS = (TensorSpec("colour_encoded", (1, 3), "float32", None, None, "colour_encoded"),
                TensorSpec("size_scaled", (1, 1), "float32", None, None, "size_scaled"))
IMAGES = tfserving.EncodedImages(16, Timings())


def task_with(preprocessing: dict) -> TensorTask:
    output = TensorSpec("y", (1, 1), "float32", None, None, "y")
    manifest = Manifest(directory=REPO, name="shoes", task="tensor", version="ab" * 32, labels=(), output=None,
                        preprocessing=preprocessing, model_file=REPO / "none.tflite", files={},
                        quantization="float32", signature="serving_default", inputs=MODEL_INPUTS, outputs=(output,))
    return TensorTask(manifest, TaskLimits())


def test_clients_send_the_columns_and_the_model_gets_its_tensors():
    task = task_with(COLUMNS)
    assert [(spec.name, spec.served_dtype, spec.shape) for spec in task.inputs] == [("colour", "string", (-1,)),
                                                                                  ("size", "int64", (-1,))]
    body = {"instances": [{"colour": "green", "size": 42}, {"colour": "", "size": 38},
                          {"colour": "mauve", "size": 40}]}
    batch = task.preprocess(tfserving.parse_predict(body, task, 16, IMAGES).instances, Timings())
    assert batch.tensors["colour_encoded"].tolist() == [[0, 0, 1], [0, 0, 0], [1, 0, 0]]  # mask dropped, OOV first
    assert batch.tensors["size_scaled"].ravel().tolist() == [1.0, -1.0, 0.0]
    metadata = tfserving.model_metadata(task)["metadata"]["signature_def"]["signature_def"]["serving_default"]
    assert metadata["inputs"]["colour"]["dtype"] == "DT_STRING"


@pytest.mark.parametrize(("value", "said"), [(3, "holds 3"), (None, "holds null"), ({"b64": "cmVk"}, "an object")])
def test_a_string_column_takes_json_strings_only(value, said):
    task = task_with(COLUMNS)
    with pytest.raises(InvalidInput) as refused:
        tfserving.parse_predict({"instances": [{"colour": value, "size": 40}]}, task, 16, IMAGES)
    assert refused.value.code == "invalid_dtype" and "takes strings" in refused.value.message
    assert said in refused.value.message


def _bytes(*values: str) -> bytes:
    return b"".join(struct.pack("<I", len(value.encode())) + value.encode() for value in values)


def test_v2_bytes_from_json_and_from_length_prefixed_binary_data():
    task = task_with(COLUMNS)
    size = {"name": "size", "shape": [2], "datatype": "INT64", "data": [40, 44]}
    body = {"inputs": [{"name": "colour", "shape": [2], "datatype": "BYTES", "data": ["red", "grün"]}, size]}
    assert open_inference.parse_infer(body, b"", task, 8).instances.arrays["colour"].tolist() == ["red", "grün"]
    data = _bytes("", "grün")
    binary = {"inputs": [{"name": "colour", "shape": [2], "datatype": "BYTES",
                          "parameters": {"binary_data_size": len(data)}}, size]}
    assert open_inference.parse_infer(binary, data, task, 8).instances.arrays["colour"].tolist() == ["", "grün"]
    short = {"inputs": [{**binary["inputs"][0], "parameters": {"binary_data_size": len(data) - 1}}, size]}
    with pytest.raises(InvalidInput, match="runs past"):
        open_inference.parse_infer(short, data[:-1], task, 8)
    with pytest.raises(InvalidInput, match="not UTF-8"):
        bad = struct.pack("<I", 1) + b"\xff" + _bytes("red")
        open_inference.parse_infer({"inputs": [{**binary["inputs"][0], "parameters": {"binary_data_size": len(bad)}},
                                               size]}, bad, task, 8)


@pytest.mark.parametrize(("change", "problem"), [
    ({"dtype": "bytes"}, "dtype 'bytes'"),
    ({"input": "elsewhere"}, "input 'elsewhere'"),
    ({"steps": [{"kind": "lookup", "vocabulary": [1, 2], "num_oov_indices": 1, "output_mode": "int", "depth": 4}]},
     "must hold strs"),
    ({"steps": [{"kind": "sorting"}]}, "unknown step kind"),
])
def test_a_bad_columns_manifest_is_refused_with_the_reason(change, problem):
    broken = {"type": "columns", "columns": [{**COLUMNS["columns"][0], **change}, COLUMNS["columns"][1]]}
    with pytest.raises(ManifestError, match=problem):
        task_with(broken)


def test_a_category_index_beyond_the_encoding_is_refused():
    encoded = {"type": "columns", "columns": [
        {"name": "colour", "dtype": "int64", "shape": [-1], "keras_shape": [-1, 1], "input": "colour_encoded",
         "steps": [{"kind": "category_encoding", "num_tokens": 3, "output_mode": "one_hot"}]},
        COLUMNS["columns"][1]]}
    task = task_with(encoded)
    instances = tfserving.parse_predict({"instances": [{"colour": 3, "size": 40}]}, task, 16, IMAGES).instances
    with pytest.raises(InvalidInput) as refused:
        task.preprocess(instances, Timings())
    assert refused.value.code == "value_out_of_range" and "0 to 2" in refused.value.message
    assert np.array_equal(task.preprocess(tfserving.parse_predict(
        {"instances": [{"colour": 2, "size": 40}]}, task, 16, IMAGES).instances, Timings()).tensors[
        "colour_encoded"], [[0, 0, 1]])
