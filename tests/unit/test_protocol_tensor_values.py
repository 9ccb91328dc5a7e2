"""JSON values -> typed arrays: the dtype, range, NaN and shape rules docs/api.md states, one by one."""
from __future__ import annotations

import math

import numpy as np
import pytest

from function.errors import InvalidInput
from function.model.manifest import TensorSpec
from function.protocols.tensor_values import check_shape, expected_shape, to_array, to_json
from function.tasks.tensor import TensorBatch


def spec(dtype: str, shape: tuple[int, ...] = (1, 3), name: str = "x") -> TensorSpec:
    return TensorSpec(name, shape, dtype, None, None, name)


@pytest.mark.parametrize("value,dtype,expected", [
    ([1.5, 2, -3e-2], "float32", [1.5, 2.0, -0.03]),
    ([1, 2, 3], "float32", [1.0, 2.0, 3.0]),
    ([True, False, 1.5], "float32", [1.0, 0.0, 1.5]),  # numpy's reading of booleans among numbers
    ([1, -2, 3], "int32", [1, -2, 3]),
    ([True, False, True], "int8", [1, 0, 1]),
    ([0, 255, 7], "uint8", [0, 255, 7]),
    ([2 ** 63 - 1, 0, -(2 ** 63)], "int64", [2 ** 63 - 1, 0, -(2 ** 63)]),
    ([True, False, True], "bool", [True, False, True]),
])
def test_values_become_the_served_dtype(value, dtype, expected):
    array = to_array(value, spec(dtype), "'x'")
    assert array.dtype == np.dtype(dtype) and array.tolist() == pytest.approx(expected)


def test_float64_rounds_to_the_nearest_float32():
    assert to_array([0.1, 1 / 3, 16777217], spec("float32"), "'x'").tolist() == [
        float(np.float32(0.1)), float(np.float32(1 / 3)), 16777216.0]


def test_nan_and_infinities_pass_through_float_inputs():
    array = to_array([math.nan, math.inf, -math.inf], spec("float32"), "'x'")
    assert np.isnan(array[0]) and array[1] == np.inf and array[2] == -np.inf


@pytest.mark.parametrize("value,dtype,fragment", [
    ([1.0, 2, 3], "int32", "fraction or exponent, such as 1.0"),
    ([math.nan, 2, 3], "int32", "fraction or exponent"),
    ([1, 2, 2 ** 31], "int32", "2147483648"),
    ([1, 2, -1], "uint8", "0 to 255"),
    ([1, 2, 2 ** 64], "int64", "integer beyond any tensor's range"),
    ([1.0, 3.5e38, 2], "float32", "3.5e+38"),
    ([1, 0, 1], "bool", "true/false"),
    ([1.0, "2", 3], "float32", "a string ('2')"),
    ([1.0, None, 3], "float32", "null"),
    ([1.0, {"a": 1}, 3], "float32", "an object"),
    ({"b64": "AAAA"}, "float32", "only an image model's image input takes"),
    ([[1, 2], [3]], "float32", "differ in length"),
    ([[1, 2], 3], "float32", "mix lists with values"),
])
def test_what_cannot_become_the_dtype_is_refused_naming_the_value(value, dtype, fragment):
    with pytest.raises(InvalidInput) as refused:
        to_array(value, spec(dtype), "'instances[0]'")
    assert fragment in refused.value.message and "'instances[0]'" in refused.value.message
    assert "'x'" in refused.value.message


@pytest.mark.parametrize("shape,batched,ok", [
    ((4, 3), True, True), ((1, 3), True, True), ((3,), False, True),
    ((4, 2), True, False), ((3,), True, False), ((), True, False), ((1, 3), False, False),
])
def test_shapes_are_checked_after_the_batch_dimension(shape, batched, ok):
    if ok:
        check_shape(shape, spec("float32"), "'x'", batched)
        return
    with pytest.raises(InvalidInput) as refused:
        check_shape(shape, spec("float32"), "'v'", batched)
    assert f"has shape {list(shape)}" in refused.value.message and "3]" in refused.value.message


def test_dynamic_dimensions_take_any_size():
    dynamic = spec("int32", (1, -1, 2))
    check_shape((3, 17, 2), dynamic, "'x'", batched=True)
    assert expected_shape(dynamic) == "[batch, ?, 2]"


def test_a_scalar_instance_stays_an_array():
    rows = [row["x"] for row in TensorBatch({"x": np.asarray([1, 2], np.int32)})]
    assert [row.shape for row in rows] == [(), ()] and all(isinstance(row, np.ndarray) for row in rows)


def test_float32_outputs_keep_their_exact_value():
    value = np.float32(0.2)
    assert to_json(np.asarray([value])) == [float(value)] and np.float32(to_json(np.asarray([value]))[0]) == value
