"""Tensors in, tensors out: any model, fed its own inputs by name and answering every output by name.

The generic task behind TensorFlow Serving's REST API and the Open Inference Protocol. A `tensor` model serves
this way only; any other model can be viewed as tensors too (`TensorTask.view`), sharing its interpreter, so every
converted model is reachable through both protocols. An instance is one row: input name -> array without the
batch dimension, already in the served dtype. A result keeps every output as raw little-endian bytes in base64,
so a cached answer is bit for bit the computed one.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import math
from collections.abc import Sequence

import numpy as np

from function.log import Timings
from function.model.manifest import TensorSpec
from function.tasks.base import Batch, Result, Task

Instance = dict[str, np.ndarray]
# The dtypes a tensor can be sent and answered in as JSON numbers or booleans (function/protocols/tensor_values.py).
SERVABLE_DTYPES = frozenset({"float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                             "uint64", "bool"})


class TensorTask(Task):
    name = "tensor"

    @classmethod
    def view(cls, task: Task) -> "TensorTask":
        """Another task's model as tensors: the same manifest and the same interpreter (never loaded twice)."""
        if isinstance(task, TensorTask):
            return task
        view = cls(task.manifest, task.limits, task.files)
        view._components = task._components  # noqa: SLF001  (one interpreter per model, whichever task asks)
        view._lock = task._lock  # noqa: SLF001
        return view

    def check_manifest(self) -> None:
        self.require(bool(self.manifest.inputs), "a model needs at least one input")
        for spec in (*self.manifest.inputs, *self.manifest.outputs):
            self.require(len(spec.shape) >= 1, f"tensor {spec.name!r} has no batch dimension")
            self.require(spec.served_dtype in SERVABLE_DTYPES, f"tensor {spec.name!r} is {spec.served_dtype}; only "
                         f"number and bool tensors can be served (string tensors need TensorFlow's Flex ops)")

    @property
    def inputs(self) -> tuple[TensorSpec, ...]:
        return self.manifest.inputs

    @property
    def outputs(self) -> tuple[TensorSpec, ...]:
        return self.manifest.outputs

    def input_digest(self, item: Instance) -> str:
        digest = hashlib.sha256()
        for spec in self.inputs:
            array = np.asarray(item[spec.name])  # the shape before ascontiguousarray, which makes a scalar 1-d
            digest.update(f"{spec.name}\0{array.dtype.str}\0{array.shape}\0".encode())
            digest.update(np.ascontiguousarray(array).tobytes())
        return digest.hexdigest()

    def cache_options(self, options: dict) -> dict:
        return {}

    def preprocess(self, items: Sequence[Instance], timings: Timings) -> Batch:
        with timings.stage("preprocess"):
            tensors = {}
            for spec in self.inputs:
                rows = [item[spec.name] for item in items]
                tensors[spec.role] = rows[0][np.newaxis] if len(rows) == 1 else np.stack(rows)
            return Batch(tensors)

    def postprocess(self, outputs: dict[str, np.ndarray], batch: Batch, options: dict) -> list[Result]:
        # Byte order, contiguity and dtype name once per output, not once per row: a batch of 64 rows took 2x longer.
        arrays = {}
        for spec in self.outputs:
            array = np.ascontiguousarray(outputs[spec.role])
            arrays[spec.name] = (array.astype(array.dtype.newbyteorder("<"), copy=False), array.dtype.name)
        count = len(next(iter(outputs.values())))
        return [{name: {"dtype": dtype, "shape": list(array.shape[1:]),
                        "data": base64.b64encode(array[row].tobytes()).decode("ascii")}
                 for name, (array, dtype) in arrays.items()} for row in range(count)]

    def is_valid_result(self, result: object, options: dict) -> bool:
        if not isinstance(result, dict) or set(result) != {spec.name for spec in self.outputs}:
            return False
        for spec in self.outputs:
            if output_array(result, spec) is None:
                return False
        return True


def output_array(result: Result, spec: TensorSpec) -> np.ndarray | None:
    """One output of one instance as an array, or None when the stored value is not such an output."""
    value = result.get(spec.name)
    if not isinstance(value, dict) or set(value) != {"dtype", "shape", "data"}:
        return None
    dtype, shape, data = value["dtype"], value["shape"], value["data"]
    if dtype != spec.served_dtype or not isinstance(shape, list) or len(shape) != len(spec.shape) - 1:
        return None
    if not all(isinstance(dim, int) and not isinstance(dim, bool) and dim >= 0 and want in (-1, dim)
               for dim, want in zip(shape, spec.shape[1:])):
        return None
    try:
        raw = base64.b64decode(data, validate=True) if isinstance(data, str) else None
    except (binascii.Error, ValueError):
        return None
    little_endian = np.dtype(dtype).newbyteorder("<")
    if raw is None or len(raw) != math.prod(shape) * little_endian.itemsize:  # math.prod: np.prod costs 30 us
        return None
    return np.frombuffer(raw, dtype=little_endian).reshape(shape)
