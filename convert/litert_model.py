"""A converted model in LiteRT, the runtime the function uses: float in, float out, whatever the tensor types."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from ai_edge_litert.interpreter import Interpreter

from convert.errors import ConversionError, first_line
from convert.quiet import quiet_native_stderr
from convert.saved_model_inspect import SIGNATURE
from function.model.manifest import TensorSpec
from function.model.runner import dequantize, quantize

QUANTIZED_DTYPES = ("int8", "uint8", "int16")
# Op names a converted model has only when its weights were left as uninitialised variables (a Keras model written
# with tf.saved_model.save converts without error to such a model; tests/functional/convert/test_convert_bad_inputs.py
# builds one); model.export() freezes weights into constants.
VARIABLE_OPS = frozenset({"VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"})


@dataclass(frozen=True)
class TensorDetails:
    name: str  # the key in the signature runner
    shape: list[int]  # -1 for open dimensions after the batch (LiteRT's shape_signature); the batch as LiteRT says
    dtype: str
    quantization: dict | None  # {"scale", "zero_point"} for integer-quantized tensors, as in the manifest

    @classmethod
    def from_litert(cls, name: str, details: dict) -> TensorDetails:
        dtype = np.dtype(details["dtype"]).name
        scale, zero_point = details["quantization"]
        quantization = None
        if dtype in QUANTIZED_DTYPES and scale != 0.0:
            quantization = {"scale": float(scale), "zero_point": int(zero_point)}
        signature = details.get("shape_signature", details["shape"])
        shape = [int(details["shape"][0]), *(int(dim) for dim in signature[1:])] if len(signature) else []
        return cls(name=name, shape=shape, dtype=dtype, quantization=quantization)

    def as_manifest(self) -> dict:
        return {"name": self.name, "shape": self.shape, "dtype": self.dtype, "quantization": self.quantization}

    @property
    def spec(self) -> TensorSpec:
        """The function's view of this tensor, as it will read it back from manifest.json."""
        return TensorSpec.from_json(self.as_manifest())


class LiteRTModel:
    """One interpreter and its `serving_default` runner; not thread-safe, like the Interpreter itself."""

    def __init__(self, content: bytes, num_threads: int = 1) -> None:
        try:
            self.interpreter = Interpreter(model_content=content, num_threads=num_threads)
            self.runner = self.interpreter.get_signature_runner(SIGNATURE)
        except (RuntimeError, ValueError) as error:
            raise ConversionError("converted_model_unloadable",
                                  f"LiteRT cannot load the converted model: {first_line(error)}") from None
        self.inputs = {name: TensorDetails.from_litert(name, details)
                       for name, details in self.runner.get_input_details().items()}
        self.outputs = {name: TensorDetails.from_litert(name, details)
                        for name, details in self.runner.get_output_details().items()}
        self._invoked = False

    def op_names(self) -> set[str]:
        return {op["op_name"] for op in self.interpreter._get_ops_details()}  # noqa: SLF001  (no public op listing)

    def prepare(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Float (or id) inputs in the types the tensors hold, ready for `invoke_prepared`."""
        # The function's own int8 arithmetic: the gate must prove what the function will compute.
        return {name: quantize(np.asarray(array), self.inputs[name].spec) for name, array in inputs.items()}

    def invoke_prepared(self, prepared: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        if self._invoked:
            return self.runner(**prepared)
        self._invoked = True
        with quiet_native_stderr():  # the first invoke prints LiteRT's "Created XNNPACK delegate" line
            return self.runner(**prepared)

    def predict(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        raw = self.invoke_prepared(self.prepare(inputs))
        return {name: dequantize(array, self.outputs[name].spec) for name, array in raw.items()}

    def predict_batches(self, inputs: dict[str, np.ndarray], batch_size: int = 32,
                        advance: Callable[[int], None] | None = None) -> dict[str, np.ndarray]:
        """`advance(n)` after each batch of n (a progress count)."""
        count = len(next(iter(inputs.values())))
        chunks = []
        for start in range(0, count, batch_size):
            chunks.append(self.predict({name: array[start:start + batch_size] for name, array in inputs.items()}))
            if advance is not None:
                advance(min(batch_size, count - start))
        return {name: np.concatenate([chunk[name] for chunk in chunks]) for name in self.outputs}
