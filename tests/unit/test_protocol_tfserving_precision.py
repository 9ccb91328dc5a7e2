"""TF Serving's json_tensor precision cases, ported (tensorflow_serving/util/json_tensor_test.cc), through this
codec: a JSON number for a DT_FLOAT or DT_DOUBLE input is rounded to it, never refused for lost precision.

TF Serving refused such numbers until March 2021 ("Cannot convert JSON value: 9007199254740993 to double without
loss of precision", the case SingleUnnamedTensorErrors then held); its commit 57dac6cd removed that check and its
test ("1435774380 and 1435774380.0 behave exactly the same"), and FloatTensorWithPrecisionLoss now asserts both
are taken. The cases below are today's. One deviation stays, on purpose and documented (docs/api.md, "Tensor
values"): a finite number beyond float32's range is a 400 here, where TF Serving makes it infinity
(FloatTensorThatExceedsMaxReturnsInf)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from function.config import TaskLimits
from function.errors import InvalidInput
from function.log import Timings
from function.model.manifest import Manifest, TensorSpec
from function.protocols import tfserving
from function.tasks.tensor import TensorTask

REPO = Path(__file__).resolve().parents[2]
IMAGES = tfserving.EncodedImages(16, Timings())


def task_of(dtype: str) -> TensorTask:
    """A model of one input, "default" as json_tensor_test names it, of `dtype`, one value per instance."""
    default = TensorSpec("default", (1,), dtype, None, None, "default")
    output = TensorSpec("y", (1, 1), "float32", None, None, "y")
    manifest = Manifest(directory=REPO, name="fake", task="tensor", version="ab" * 32, labels=(), output=None,
                        preprocessing={}, model_file=REPO / "none.tflite", files={}, quantization="float32",
                        signature="serving_default", inputs=(default,), outputs=(output,))
    return TensorTask(manifest, TaskLimits())


def predict(dtype: str, text: str) -> np.ndarray:
    """The "default" tensor of a request body given as JSON text, as the codec reads it."""
    body = tfserving.parse_predict(json.loads(text), task_of(dtype), 16, IMAGES)
    return body.instances.arrays["default"]


def test_float_tensor_with_precision_loss():
    """1435774380 is not a float32; with or without ".0" it is taken and rounds to the nearest one."""
    for text in ('{"instances": [1435774380]}', '{"instances": [1435774380.0]}'):
        tensor = predict("float32", text)
        assert tensor.dtype == np.float32 and tensor.tolist() == [1435774336.0]


def test_an_integer_that_loses_precision_as_a_double_is_taken_rounded():
    """9007199254740993 (2**53 + 1): the case TF Serving refused before 2021, taken as today's TF Serving takes it
    (rapidjson's GetDouble: the nearest double, 9007199254740992)."""
    tensor = predict("float64", '{"instances": [9007199254740993]}')
    assert tensor.dtype == np.float64 and tensor.tolist() == [9007199254740992.0]
    assert predict("float32", '{"instances": [16777217]}').tolist() == [16777216.0]  # the float case it refused


def test_mixed_input_for_float_and_double_tensors():
    floats = predict("float32", '{"instances": [1, 2.0, 3, 4, 5.003, 0.007, 0.0]}')
    assert floats.tolist() == np.array([1, 2.0, 3, 4, 5.003, 0.007, 0.0], np.float32).tolist()
    doubles = predict("float64", '{"instances": [1.0, 2, 3, 4, 0.662, 0, 0.0]}')
    assert doubles.dtype == np.float64 and doubles.tolist() == [1.0, 2, 3, 4, 0.662, 0, 0.0]


def test_float_tensor_that_exceeds_min_returns_zero():
    for value, zero in ((sys.float_info.min, "0.0"), (-sys.float_info.min, "-0.0")):
        tensor = predict("float32", f'{{"instances": [{value!r}]}}')
        assert tensor[0] == 0.0 and str(tensor[0]) == zero


def test_float_tensor_that_exceeds_max_is_refused_here():
    with pytest.raises(InvalidInput, match="largest magnitude"):
        predict("float32", f'{{"instances": [{sys.float_info.max!r}]}}')
