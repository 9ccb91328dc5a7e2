"""The manifest's int8 arithmetic: q = round(x / scale) + zero_point (clipped), x = (q - zero_point) * scale.

convert's gate runs the function's own quantize/dequantize on the spec each TensorDetails becomes in the manifest."""
from __future__ import annotations

import numpy as np

from convert.litert_model import TensorDetails
from function.model.runner import dequantize, quantize

INT8 = TensorDetails("image", [1, 4], "int8", {"scale": 0.5, "zero_point": -10}).spec


def test_quantize_rounds_offsets_and_clips():
    values = np.array([0.0, 1.0, 1.2, -3.0, 1000.0, -1000.0], np.float32)
    assert quantize(values, INT8).tolist() == [-10, -8, -8, -16, 127, -128]
    assert quantize(values, INT8).dtype == np.int8


def test_dequantize_inverts_quantize_within_half_a_step():
    values = np.linspace(-20, 20, 101, dtype=np.float32)
    restored = dequantize(quantize(values, INT8), INT8)
    assert restored.dtype == np.float32
    assert np.max(np.abs(restored - values)) <= 0.25 + 1e-6


def test_float_and_id_tensors_pass_through_as_their_dtype():
    ids = TensorDetails("ids", [1, 3], "int32", None).spec
    assert quantize(np.array([[1, 2, 3]]), ids).dtype == np.int32
    floats = TensorDetails("x", [1, 2], "float32", None).spec
    assert dequantize(np.array([1.5, 2.5], np.float32), floats).tolist() == [1.5, 2.5]


def test_details_from_litert_keep_quantization_only_for_quantized_integer_tensors():
    int8 = TensorDetails.from_litert("image", {"dtype": np.int8, "shape": np.array([1, 8]),
                                                "quantization": (0.0039, -128)})
    assert int8.as_manifest() == {"name": "image", "shape": [1, 8], "dtype": "int8",
                                  "quantization": {"scale": 0.0039, "zero_point": -128}}
    ids = TensorDetails.from_litert("ids", {"dtype": np.int32, "shape": np.array([1, 8]), "quantization": (0.0, 0)})
    assert ids.quantization is None and ids.dtype == "int32"
    floats = TensorDetails.from_litert("x", {"dtype": np.float32, "shape": np.array([1, 2]),
                                             "quantization": (0.0, 0)})
    assert floats.quantization is None and floats.dtype == "float32"
