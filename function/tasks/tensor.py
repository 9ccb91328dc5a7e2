"""Tensors in, tensors out: any model, fed its own inputs by name and answering every output by name.

The generic task behind TensorFlow Serving's REST API and the Open Inference Protocol. A `tensor` model serves
this way only; any other model can be viewed as tensors too (`TensorTask.view`), sharing its interpreter, so every
converted model is reachable through both protocols.

A request stays one batch (as KServe's InferRequest keeps one array per input): the protocol codec reads a
`TensorBatch` (input name -> batch-first array, in the served dtype), the result cache keys each instance (a row:
the same arrays without the batch dimension, as views), the misses reach the interpreter as one gather of those
arrays (the request's own arrays when every instance misses), and `output_arrays` hands the codec the
interpreter's output arrays back. A result keeps every output of one instance as raw little-endian bytes in base64,
so a cached answer is bit for bit the computed one; only a cache hit is ever decoded.
"""
from __future__ import annotations

import base64
import binascii
import json
import math
import sys
from binascii import b2a_base64  # base64.b64encode without its Python wrapper
from collections.abc import Iterator, Sequence
from time import perf_counter

import numpy as np

from function.digest import hasher
from function.errors import refuse
from function.log import Timings
from function.model.manifest import TensorSpec
from function.preprocessing.columns import Column, apply_column, is_columns, parse_columns
from function.tasks.base import Batch, Result, Task

Instance = dict[str, np.ndarray]
LITTLE_ENDIAN = sys.byteorder == "little"  # results keep little-endian bytes: on such a machine, the arrays as they are
# The dtypes a tensor can be sent and answered in as JSON numbers or booleans (function/protocols/tensor_values.py).
SERVABLE_DTYPES = frozenset({"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
                             "uint32", "uint64", "bool"})


class TensorBatch(Sequence):
    """One request's instances: input name -> batch-first array. Indexing gives one instance, as views."""

    __slots__ = ("arrays",)

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.arrays = arrays

    def __len__(self) -> int:
        return len(next(iter(self.arrays.values())))

    def __getitem__(self, index: int) -> Instance:
        # array[i, ...] keeps a scalar instance a 0-d array (array[i] would be a numpy scalar).
        return {name: array[index, ...] for name, array in self.arrays.items()}

    def __iter__(self) -> Iterator[Instance]:
        return (self[index] for index in range(len(self)))

    @classmethod
    def stack(cls, instances: Sequence[Instance], specs: Sequence[TensorSpec]) -> "TensorBatch":
        return cls({spec.name: np.stack([instance[spec.name] for instance in instances]) for spec in specs})

    def take(self, indices: Sequence[int]) -> "TensorBatch":
        """The instances at `indices`, in that order: this batch itself when that is all of it, in order."""
        if len(indices) == len(self) and all(index == position for position, index in enumerate(indices)):
            return self
        picked = np.asarray(indices, dtype=np.intp)
        return TensorBatch({name: array[picked] for name, array in self.arrays.items()})


class ComputedResult(dict):
    """A result just computed: one instance's outputs in base64, what the cache stores and a hit answers, that
    also points at the interpreter's output arrays it was cut from, so the request that computed it answers from
    those arrays (`output_arrays`) instead of decoding its own base64. Only the dict ever reaches a store."""

    __slots__ = ("outputs", "row")

    def __init__(self, stored: dict, outputs: dict[str, np.ndarray], row: int):
        super().__init__(stored)
        self.outputs = outputs  # output name -> batch-first array, shared by every row of the batch
        self.row = row


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
        view.origin = task
        return view

    origin: Task | None = None  # the task this is a view of: its bytes input is decoded by its own preprocessing

    def bytes_input(self) -> str | None:
        return None if self.origin is None else self.origin.bytes_input()

    def tensor_from_bytes(self, data: bytes, where: str, timings: Timings) -> np.ndarray:
        if self.origin is None:
            return super().tensor_from_bytes(data, where, timings)
        return self.origin.tensor_from_bytes(data, where, timings)

    # A structured model's raw columns, which clients send (function/preprocessing/columns.py); () for the others.
    columns: tuple[Column, ...] = ()

    def check_manifest(self) -> None:
        self.require(bool(self.manifest.inputs), "a model needs at least one input")
        for spec in (*self.manifest.inputs, *self.manifest.outputs):
            self.require(len(spec.shape) >= 1, f"tensor {spec.name!r} has no batch dimension")
            self.require(spec.served_dtype in SERVABLE_DTYPES, f"tensor {spec.name!r} is {spec.served_dtype}; only "
                         f"number and bool tensors can be served (string tensors need TensorFlow's Flex ops)")
        if is_columns(self.manifest.preprocessing):
            try:
                self.columns = parse_columns(self.manifest.preprocessing, self.manifest.inputs)
            except (TypeError, ValueError) as error:  # ManifestError, or a field of the wrong type deeper down
                self.require(False, str(error))

    @property
    def inputs(self) -> tuple[TensorSpec, ...]:
        """What clients send: the model's own tensors, or a structured model's raw columns (strings included)."""
        return tuple(column.spec for column in self.columns) if self.columns else self.manifest.inputs

    @property
    def outputs(self) -> tuple[TensorSpec, ...]:
        return self.manifest.outputs

    def input_digest(self, item: Instance) -> str:
        arrays = [(spec, np.asarray(item[spec.name])) for spec in self.inputs]
        digest = hasher(sum(array.nbytes for _, array in arrays))
        for spec, array in arrays:  # ascontiguousarray makes a scalar 1-d, hence the shape taken before
            if array.dtype.kind == "U":  # a string column: its values, not the batch's longest string's width
                digest.update(f"{spec.name}\0str\0{array.shape}\0{json.dumps(array.tolist())}\0".encode())
                continue
            digest.update(f"{spec.name}\0{array.dtype.str}\0{array.shape}\0".encode())
            digest.update(np.ascontiguousarray(array).tobytes())
        return digest.hexdigest()

    def cache_options(self, options: dict) -> dict:
        return {}

    def gather(self, items: Sequence[Instance], indices: Sequence[int]) -> Sequence[Instance]:
        return items.take(indices) if isinstance(items, TensorBatch) else super().gather(items, indices)

    def preprocess(self, items: Sequence[Instance], timings: Timings) -> Batch:
        """A TensorBatch goes to the interpreter as it is; instances given one by one are stacked once."""
        start = perf_counter()
        try:
            batch = items if isinstance(items, TensorBatch) else TensorBatch.stack(items, self.inputs)
            check_open_dimensions(batch.arrays, self.inputs)
            if self.columns:
                roles = {spec.name: spec.role for spec in self.manifest.inputs}
                return Batch({roles[column.model_input]: apply_column(column, batch.arrays[column.spec.name])
                              for column in self.columns})
            return Batch({spec.role: batch.arrays[spec.name] for spec in self.inputs})
        finally:
            timings.add("preprocess", start)

    def postprocess(self, outputs: dict[str, np.ndarray], batch: Batch, options: dict) -> list[Result]:
        # Byte order, contiguity and dtype name once per output, not once per row: a batch of 64 rows took 2x longer.
        arrays, dtypes = {}, {}
        for spec in self.outputs:
            # The runner widens a float16 output to float32 for the other tasks; the tensor view answers the
            # model's own float16 (exactly: the values came from float16).
            served = spec.served_dtype
            array = np.ascontiguousarray(outputs[spec.role], dtype=served)
            arrays[spec.name] = array if LITTLE_ENDIAN else array.astype(array.dtype.newbyteorder("<"))
            dtypes[spec.name] = served  # the array's dtype name: numpy's .name property costs 1.5 us
        count = len(next(iter(outputs.values())))
        return [ComputedResult({name: {"dtype": dtypes[name], "shape": list(array.shape[1:]),
                                       "data": b2a_base64(array[row].tobytes(), newline=False).decode("ascii")}
                                for name, array in arrays.items()}, arrays, row) for row in range(count)]

    def is_valid_result(self, result: object, options: dict) -> bool:
        if not isinstance(result, dict) or set(result) != {spec.name for spec in self.outputs}:
            return False
        for spec in self.outputs:
            if output_array(result, spec) is None:
                return False
        return True


def check_open_dimensions(arrays: dict[str, np.ndarray], specs: Sequence[TensorSpec]) -> None:
    """Inputs open in the same dimension (a sequence's ids and its mask) have one size there, as the interpreter
    needs: sizes that differ fail its reshape (XNNPack: "failed to reshape runtimeNode"), a 500 for a client's
    mistake. Refused with 400 invalid_shape before the interpreter, whichever protocol sent them."""
    first: dict[int, tuple[str, int]] = {}  # dimension -> the first input open there, and its size
    for spec in specs:
        shape = arrays[spec.name].shape
        for axis, fixed in enumerate(spec.shape[1:len(shape)], start=1):
            if fixed >= 0:
                continue
            name, size = first.setdefault(axis, (spec.name, shape[axis]))
            if size != shape[axis]:
                raise refuse("invalid_shape", f"Inputs {name!r} and {spec.name!r} are both open in dimension {axis} "
                             f"and must have one size there; they have {size} and {shape[axis]}.")


def output_arrays(results: Sequence[Result], specs: Sequence[TensorSpec]) -> dict[str, np.ndarray]:
    """Each output of `results` (valid ones, in instance order) batch first: the interpreter's own arrays when the
    results are one computed batch in order (every instance a miss, none repeated), else stacked once from each
    instance's row (a computed row is a view, only a cache hit is decoded)."""
    first = results[0]
    if isinstance(first, ComputedResult) and len(results) == len(next(iter(first.outputs.values()))) and all(
            isinstance(result, ComputedResult) and result.outputs is first.outputs and result.row == position
            for position, result in enumerate(results)):
        return {spec.name: first.outputs[spec.name] for spec in specs}
    return {spec.name: np.stack([_row_array(result, spec) for result in results]) for spec in specs}


def _row_array(result: Result, spec: TensorSpec) -> np.ndarray:
    if isinstance(result, ComputedResult):
        return result.outputs[spec.name][result.row, ...]
    return output_array(result, spec)


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
