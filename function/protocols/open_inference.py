"""The Open Inference Protocol v2 (KServe, Triton, MLServer, Seldon) over the tensor task, with Triton's binary
tensor data extension (a JSON header, then raw little-endian tensor bytes, its length in the
Inference-Header-Content-Length header).

Typed tensors in (`name`, `shape` batch first, `datatype`, `data` flat or nested, or `binary_data_size`), typed
tensors out, every output unless `outputs` names some. Binary outputs when the request asks for them
(`binary_data_output`, or `binary_data` per output), as tritonclient does by default.
"""
from __future__ import annotations

import math

import numpy as np

from function import __version__
from function.errors import quoted, refuse
from function.model.manifest import TensorSpec
from function.protocols.tensor_values import (DTYPE_NAMES, STRING, check_bounds, check_shape, check_values,
                                              expected_shape, to_array, to_json)
from function.records import named_tuple
from function.tasks.base import Result
from function.tasks.tensor import TensorBatch, TensorTask, output_arrays

SERVER_NAME = "lambda-tflite-serving"
SERVER_VERSION = __version__  # the project's one version (function/__init__.py)
# Triton's extension names: binary tensor data here, the other three in triton_extensions.py
EXTENSIONS = ["binary_tensor_data", "model_repository", "model_configuration", "statistics"]
PLATFORM = "litert_tflite"  # "<project>_<format>", as the protocol names platforms
HEADER_LENGTH = "inference-header-content-length"
INT_ONLY = frozenset({int})  # the types a shape's dimensions may have (json gives bool its own type)
UNSUPPORTED_PARAMETERS = {
    "shared_memory_region": "shared memory is not available to a serverless function: send 'data' or binary data",
    "classification": "the classification extension is not supported: ask for the raw output tensor",
}


@named_tuple
class InferRequest:
    id: str | None
    instances: TensorBatch
    outputs: tuple[TensorSpec, ...]  # the outputs to answer, in the order asked
    binary: frozenset[str]  # output names to answer as binary data


def server_metadata() -> dict:
    return {"name": SERVER_NAME, "version": SERVER_VERSION, "extensions": EXTENSIONS}


def _tensor_metadata(spec: TensorSpec) -> dict:
    return {"name": spec.name, "datatype": DTYPE_NAMES[spec.served_dtype].v2, "shape": [-1, *spec.shape[1:]]}


def model_metadata(task: TensorTask, versions: list[str]) -> dict:
    """Shapes are batch first, -1 for the batch and for any dynamic dimension; `versions`: every version served
    (the stable one first), or the one the path names."""
    return {"name": task.manifest.name, "versions": versions, "platform": PLATFORM,
            "inputs": [_tensor_metadata(spec) for spec in task.inputs],
            "outputs": [_tensor_metadata(spec) for spec in task.outputs]}


def split_body(body: bytes, header_length: str | None) -> tuple[bytes, bytes]:
    """(the JSON inference header, the binary tensor data after it): all JSON when the header is absent. The
    length is ASCII digits only (str.isdigit() also takes "²" and Arabic-Indic digits) and no longer than the
    body's own length has digits, so int() never sees a huge or non-ASCII number."""
    if header_length is None:
        return body, b""
    text = header_length.strip(" \t")
    if not (text.isascii() and text.isdigit() and len(text) <= len(str(len(body)))) or not 0 < int(text) <= len(body):
        raise refuse("invalid_header", f"Inference-Header-Content-Length must be the length of the JSON part "
                     f"of the body (1 to {len(body)} bytes, in ASCII digits), not {quoted(header_length)}.")
    length = int(text)
    return body[:length], body[length:]


def _parameters(item: dict, where: str) -> dict:
    parameters = item.get("parameters", {})
    if not parameters and type(parameters) is dict:  # none sent: the common case, no parameter to look up
        return parameters
    if not isinstance(parameters, dict):
        raise refuse("invalid_field", f"{where}.parameters must be an object.")
    for name, problem in UNSUPPORTED_PARAMETERS.items():
        if name in parameters:
            raise refuse("unsupported_parameter", f"{where}.parameters.{name}: {problem}.")
    return parameters


def _flag(parameters: dict, name: str, where: str, default: bool) -> bool:
    value = parameters.get(name, default)
    if not isinstance(value, bool):
        raise refuse("invalid_field", f"{where}.parameters.{name} must be true or false.")
    return value


class _BinaryReader:
    """Hands out the binary tensor data in the order the inputs name it, and checks it is all used."""

    def __init__(self, data: bytes):
        self.data = memoryview(data)
        self.offset = 0

    def take(self, size: int, where: str) -> memoryview:
        if self.offset + size > len(self.data):
            raise refuse("invalid_binary_data", f"{where} declares {size} bytes of binary data, but only "
                         f"{len(self.data) - self.offset} are left after the JSON header.")
        chunk = self.data[self.offset:self.offset + size]
        self.offset += size
        return chunk

    def check_all_used(self) -> None:
        if self.offset != len(self.data):
            raise refuse("invalid_binary_data", f"The body carries {len(self.data)} bytes of binary data after "
                         f"the JSON header, but the inputs declare {self.offset}.")


def _input_array(item: object, index: int, specs: dict[str, TensorSpec], reader: _BinaryReader,
                 model_name: str) -> np.ndarray:
    if not isinstance(item, dict):
        raise refuse("invalid_field", f"'inputs[{index}]' must be an object with name, shape, datatype and data.")
    name = item.get("name")
    if not isinstance(name, str) or name not in specs:
        raise refuse("unknown_input", f"'inputs[{index}]' names input {quoted(name)}; the model's inputs are "
                     f"{list(specs)}.")
    spec = specs[name]
    where = f"'inputs[{index}]' ({name})"
    shape = item.get("shape")
    # Every dimension an int (JSON's: never a bool) and none negative, in two C passes rather than a generator.
    if not isinstance(shape, list) or not INT_ONLY.issuperset(map(type, shape)) or min(shape, default=0) < 0:
        raise refuse("invalid_field", f"{where}.shape must be a list of non-negative integers.")
    dims = tuple(shape)
    check_shape(dims, spec, where, batched=True)
    check_bounds(dims, spec, where)  # before math.prod sizes anything
    datatype, served = item.get("datatype"), spec.served_dtype  # a property: read once
    wanted = DTYPE_NAMES[served].v2
    if datatype != wanted:  # Triton's rule: the model's own datatype, no other width (FP64 for FP32 is refused)
        raise refuse("invalid_dtype", f"Inference input {name!r} data-type is {quoted(datatype)}, but model "
                     f"{model_name!r} expects {wanted!r} (shape {expected_shape(spec)}); {where}.")
    parameters = _parameters(item, where)
    count = math.prod(shape)
    if "binary_data_size" in parameters:
        if "data" in item:
            raise refuse("invalid_field", f"{where} has both 'data' and binary_data_size; send one.")
        array = _binary_array(parameters["binary_data_size"], shape, count, spec, where, reader)
        check_values(array, spec, where)
        return array
    if "data" not in item:
        raise refuse("missing_field", f"{where} has no 'data' (nor binary_data_size).")
    if not isinstance(item["data"], list):  # the protocol's tensor data is a list, even of one value
        raise refuse("invalid_field", f"{where}.data must be a list of values, flat or nested as the shape.")
    array = to_array(item["data"], spec, where)
    if array.size != count or (array.ndim > 1 and list(array.shape) != shape):
        raise refuse("invalid_shape", f"{where}.data holds {array.size} values nested as {list(array.shape)}; "
                     f"shape {shape} needs {count}, flat or nested as the shape.")
    check_values(array, spec, where)
    return array.reshape(shape)


def _binary_array(size: object, shape: list[int], count: int, spec: TensorSpec, where: str,
                  reader: _BinaryReader) -> np.ndarray:
    if spec.served_dtype == STRING:
        return _binary_strings(size, shape, count, where, reader)
    dtype = np.dtype(spec.served_dtype).newbyteorder("<")
    if not isinstance(size, int) or isinstance(size, bool) or size != count * dtype.itemsize:
        raise refuse("invalid_binary_data", f"{where}.parameters.binary_data_size is {quoted(size)}; shape {shape} "
                     f"of {DTYPE_NAMES[spec.served_dtype].v2} takes {count * dtype.itemsize} bytes.")
    raw = reader.take(size, where)
    if dtype.kind == "b" and np.frombuffer(raw, np.uint8).max(initial=0) > 1:
        raise refuse("invalid_binary_data", f"{where}: BOOL binary data must be bytes 0 or 1.")
    array = np.frombuffer(raw, dtype).reshape(shape)
    # A copy in the native dtype: aligned, writable and independent of the request body.
    return array.astype(spec.served_dtype)


def _binary_strings(size: object, shape: list[int], count: int, where: str, reader: _BinaryReader) -> np.ndarray:
    """BYTES binary data as the protocol lays it out: each element a 4-byte little-endian length, then its bytes
    (UTF-8 text here: a structured model's string column)."""
    if not isinstance(size, int) or isinstance(size, bool) or size < 4 * count:
        raise refuse("invalid_binary_data", f"{where}.parameters.binary_data_size is {quoted(size)}; {count} BYTES "
                     f"elements take at least {4 * count} bytes (a 4-byte length each).")
    raw = bytes(reader.take(size, where))
    values, offset = [], 0
    for _ in range(count):
        length = int.from_bytes(raw[offset:offset + 4], "little") if offset + 4 <= size else -1
        if length < 0 or offset + 4 + length > size:
            raise refuse("invalid_binary_data", f"{where}: BYTES element {len(values)} runs past the "
                         f"{size} bytes of binary data.")
        try:
            values.append(raw[offset + 4:offset + 4 + length].decode("utf-8"))
        except UnicodeDecodeError:
            raise refuse("invalid_binary_data", f"{where}: BYTES element {len(values)} is not UTF-8 text.") from None
        offset += 4 + length
    if offset != size:
        raise refuse("invalid_binary_data", f"{where}: the {count} BYTES elements take {offset} bytes; "
                     f"binary_data_size is {size}.")
    return np.array(values, dtype=str).reshape(shape)


def _requested_outputs(body: dict, task: TensorTask, binary_default: bool) -> tuple[tuple[TensorSpec, ...], set]:
    specs = {spec.name: spec for spec in task.outputs}
    if "outputs" not in body:
        return task.outputs, set(specs) if binary_default else set()
    asked = body["outputs"]
    if not isinstance(asked, list) or not asked:
        raise refuse("invalid_field", "'outputs' must be a non-empty list of {\"name\": ...} objects "
                     "(leave it out for every output).")
    chosen, binary = [], set()
    for index, item in enumerate(asked):
        where = f"'outputs[{index}]'"
        name = item.get("name") if isinstance(item, dict) else None
        if not isinstance(name, str) or name not in specs:  # a list or object name is unhashable: refuse first
            raise refuse("unknown_output", f"{where} names output {quoted(name)}; the model's outputs are "
                         f"{list(specs)}.")
        if specs[name] in chosen:
            raise refuse("invalid_field", f"{where} asks for output {name!r} a second time.")
        chosen.append(specs[name])
        if _flag(_parameters(item, where), "binary_data", where, binary_default):
            binary.add(name)
    return tuple(chosen), binary


def parse_infer(body: dict, binary_data: bytes, task: TensorTask, max_batch: int) -> InferRequest:
    request_id = body.get("id")
    if request_id is not None and not isinstance(request_id, str):
        raise refuse("invalid_field", "'id' must be a string.")
    parameters = _parameters(body, "the request")
    binary_default = _flag(parameters, "binary_data_output", "the request", False)
    items = body.get("inputs")
    if not isinstance(items, list) or not items:
        raise refuse("missing_field", "'inputs' must be a non-empty list of tensors: {\"name\", \"shape\", "
                     "\"datatype\", \"data\"}.")
    specs = {spec.name: spec for spec in task.inputs}
    reader = _BinaryReader(binary_data)
    arrays: dict[str, np.ndarray] = {}
    for index, item in enumerate(items):
        array = _input_array(item, index, specs, reader, task.manifest.name)
        name = item["name"]
        if name in arrays:
            raise refuse("invalid_field", f"'inputs[{index}]' sends input {name!r} a second time.")
        arrays[name] = array
    reader.check_all_used()
    missing = [name for name in specs if name not in arrays]
    if missing:
        raise refuse("missing_input", f"The request lacks input(s) {missing}; model {task.manifest.name!r} "
                     f"takes {list(specs)}.")
    sizes = {name: array.shape[0] for name, array in arrays.items()}
    if len(set(sizes.values())) > 1:
        raise refuse("batch_mismatch", f"The inputs' first dimensions differ ({sizes}); it is the batch "
                     "size and must be the same for every input.")
    count = next(iter(sizes.values()))
    if count == 0:
        raise refuse("empty_batch", "The inputs hold no instances (the first dimension is 0).")
    if count > max_batch:
        raise refuse("batch_too_large", f"The inputs hold {count} instances; the limit is {max_batch} "
                     "(MAX_TENSOR_BATCH).")
    outputs, binary = _requested_outputs(body, task, binary_default)
    return InferRequest(request_id, TensorBatch(arrays), outputs, frozenset(binary))


def infer_response(task: TensorTask, request: InferRequest, results: list[Result]) -> tuple[dict, bytes]:
    """(the JSON response, the binary data after it): outputs batch first, data flat, binary in output order."""
    outputs, chunks = [], []
    batches = output_arrays(results, request.outputs)
    for spec in request.outputs:
        batch = batches[spec.name]
        entry = {"name": spec.name, "datatype": DTYPE_NAMES[spec.served_dtype].v2, "shape": list(batch.shape)}
        if spec.name in request.binary:
            raw = batch.astype(batch.dtype.newbyteorder("<"), copy=False).tobytes()
            entry["parameters"] = {"binary_data_size": len(raw)}
            chunks.append(raw)
        else:
            entry["data"] = to_json(batch.reshape(-1))
        outputs.append(entry)
    answer = {"model_name": task.manifest.name, "model_version": task.manifest.version}
    if request.id is not None:
        answer["id"] = request.id
    answer["outputs"] = outputs
    return answer, b"".join(chunks)
