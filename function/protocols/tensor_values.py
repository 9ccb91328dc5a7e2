"""JSON values <-> typed arrays, one set of rules for every tensor protocol (docs/api.md, "Tensor values").

A JSON tensor becomes an array in two C passes: one `np.asarray` over the whole nested list finds its shape and
the kind of its elements (numbers, booleans, strings, anything else), then one cast to the input's served dtype.
bench/tensor_json.py measured the alternatives; parsing the JSON text itself costs far more than either pass.

- float inputs take JSON numbers, integers included, and NaN / Infinity / -Infinity (passed through, as TensorFlow
  Serving does); a finite number beyond the dtype's range is refused rather than turned into infinity;
- integer inputs take JSON integers within the dtype's range; 1.0 is refused (as TensorFlow Serving does);
- number inputs read true / false as 1 / 0 (numpy's reading, whether or not they are mixed with numbers);
- bool inputs take true / false only;
- string inputs (a structured model's text columns, function/preprocessing/columns.py) take JSON strings only;
- strings, null and objects are otherwise refused; {"b64": ...} too, but for an image model's image input, whose
  encoded images the TF Serving codec decodes before any tensor is read (function/protocols/encoded_bytes.py).
"""
from __future__ import annotations

import math

import numpy as np

from function.errors import InvalidInput, quoted, refuse
from function.model.manifest import TensorSpec
from function.records import named_tuple


@named_tuple
class DtypeNames:
    tf: str  # TensorFlow's DataType enum name, as TF Serving's metadata writes it
    v2: str  # the Open Inference Protocol's datatype


# Every dtype a served tensor may have (TensorTask refuses a model with any other).
DTYPE_NAMES: dict[str, DtypeNames] = {
    "float16": DtypeNames("DT_HALF", "FP16"),
    "float32": DtypeNames("DT_FLOAT", "FP32"),
    "float64": DtypeNames("DT_DOUBLE", "FP64"),
    "int8": DtypeNames("DT_INT8", "INT8"),
    "int16": DtypeNames("DT_INT16", "INT16"),
    "int32": DtypeNames("DT_INT32", "INT32"),
    "int64": DtypeNames("DT_INT64", "INT64"),
    "uint8": DtypeNames("DT_UINT8", "UINT8"),
    "uint16": DtypeNames("DT_UINT16", "UINT16"),
    "uint32": DtypeNames("DT_UINT32", "UINT32"),
    "uint64": DtypeNames("DT_UINT64", "UINT64"),
    "bool": DtypeNames("DT_BOOL", "BOOL"),
    "string": DtypeNames("DT_STRING", "BYTES"),  # a structured model's raw text column only
}
STRING = "string"
# Looked up once, not per input of every request (np.dtype costs ~0.3 us a call); a float dtype's largest value.
DTYPES = {name: np.dtype(name) for name in DTYPE_NAMES if name != STRING}
FLOAT_LIMITS = {name: float(np.finfo(dtype).max) for name, dtype in DTYPES.items() if dtype.kind == "f"}
B64_KEY = "b64"
LARGEST = np.maximum.reduce  # ndarray.max without its Python wrapper (axis=None: over every element)
# The most elements one input tensor of a request may hold, batch included (docs/api.md, "Tensor bounds"): a
# declared shape is checked against it before anything is allocated. 6 MB of body holds far fewer JSON numbers.
MAX_TENSOR_ELEMENTS = 1 << 22


def expected_shape(spec: TensorSpec, batch: str = "batch") -> str:
    """'[batch, 3]': a tensor's shape as clients must send it; -1 (a dynamic dimension) shows as '?'."""
    dims = [batch] + ["?" if dim < 0 else str(dim) for dim in spec.shape[1:]]
    return f"[{', '.join(dims)}]"


def instance_shape(spec: TensorSpec) -> str:
    """'[3]': the shape of one instance (the batch dimension left out)."""
    return "[" + ", ".join("?" if dim < 0 else str(dim) for dim in spec.shape[1:]) + "]"


def check_shape(shape: tuple[int, ...], spec: TensorSpec, where: str, batched: bool) -> None:
    """A shape fits the input: rank, then every fixed dimension (after the batch dimension when `batched`)."""
    wanted = spec.shape[1:]
    got = shape[1:] if batched else shape
    if got == wanted and (shape or not batched):  # every dimension fixed and as sent: the common case, at once
        return
    if (batched and not shape) or len(got) != len(wanted) or any(
            want >= 0 and dim != want for dim, want in zip(got, wanted)):
        expected = expected_shape(spec) if batched else f"{instance_shape(spec)} per instance"
        raise refuse("invalid_shape", f"Input {spec.name!r} takes shape {expected} ({spec.served_dtype}); "
                     f"{where} has shape {list(shape)}.")


def check_bounds(shape: tuple[int, ...], spec: TensorSpec, where: str) -> None:
    """A shape that already fits the input (check_shape) within the tensor element cap and, for each open
    dimension, the largest size the model takes (its manifest's max_shape, found by `convert`)."""
    if max(shape, default=0) > MAX_TENSOR_ELEMENTS or math.prod(shape) > MAX_TENSOR_ELEMENTS:
        raise refuse("tensor_too_large", f"Input {spec.name!r}: {where} has shape {str(list(shape))[:80]}, over "
                     f"{MAX_TENSOR_ELEMENTS} elements (the limit per tensor).")
    if spec.max_shape is None and min(spec.shape[1:], default=0) >= 0:  # no open dimension: all checked by shape
        return
    for axis, (dim, fixed) in enumerate(zip(shape[1:], spec.shape[1:]), start=1):
        if fixed < 0 and dim == 0:  # `convert` probes from 1: a model may fail on an empty sequence
            raise refuse("invalid_shape", f"Input {spec.name!r} takes at least 1 in dimension {axis} (shape "
                         f"{expected_shape(spec)}); {where} has 0.")
    if spec.max_shape is None:
        return
    for axis, (dim, bound) in enumerate(zip(shape[1:], spec.max_shape[1:]), start=1):
        if dim > bound:
            raise refuse("dimension_too_large", f"Input {spec.name!r} takes at most {bound} in dimension {axis} "
                         f"(shape {expected_shape(spec)}); {where} has {dim}.")


def check_values(array: np.ndarray, spec: TensorSpec, where: str) -> None:
    """An id input's values index the model's table: each within its manifest's value_range."""
    if spec.value_range is None or not array.size:
        return
    low, high = spec.value_range
    outside = array[(array < low) | (array > high)]
    if outside.size:
        raise refuse("index_out_of_range", f"Input {spec.name!r} takes ids {low} to {high} (the rows of the "
                     f"model's table); {where} holds {_first(outside)}.")


def to_array(value: object, spec: TensorSpec, where: str) -> np.ndarray:
    """A JSON value (a number, a boolean or nested lists of them) as an array of the input's served dtype."""
    try:
        array = np.asarray(value)
    except ValueError as exc:  # numpy's "inhomogeneous shape": ragged lists, or lists beside plain values
        raise refuse("invalid_tensor", f"{where} is not a tensor: its nested lists differ in length or mix "
                     f"lists with values (input {spec.name!r} takes {expected_shape(spec)}).") from exc
    served = spec.served_dtype  # a property: read once
    if served == STRING:
        return _strings(value, array, spec, where)
    target = DTYPES.get(served) or np.dtype(served)
    if not array.size:  # [] is float64 to numpy; an empty tensor has no element of a wrong kind
        return np.empty(array.shape, target)
    kind = array.dtype.kind
    if kind not in "fiub":
        raise _not_numbers(value, spec, where)
    if target.kind == "b":
        if kind != "b":
            raise refuse("invalid_dtype", f"Input {spec.name!r} takes true/false (bool); {where} holds "
                         f"numbers such as {_first(array)}.")
        return array
    if target.kind in "iu":
        if kind == "f":
            raise refuse("invalid_dtype", f"Input {spec.name!r} takes integers ({target.name}); {where} holds "
                         f"numbers written with a fraction or exponent, such as {_first(array)}.")
        try:  # numpy refuses a Python integer beyond the dtype (OverflowError): one pass, no min and max
            return np.asarray(value, dtype=target)
        except OverflowError:
            info = np.iinfo(target)
            outside = array[(array < info.min) | (array > info.max)]
            raise refuse("value_out_of_range", f"Input {spec.name!r} takes {target.name} ({info.min} to "
                         f"{info.max}); {where} holds {_first(outside)}.") from None
    # Keyed by the spec's dtype name, which names `target` when it is a float: numpy's .name costs ~1.5 us a call.
    if kind == "f" and LARGEST(np.abs(array), axis=None) <= FLOAT_LIMITS.get(served, -1.0):
        return array.astype(target, copy=False)  # every value finite and within range: the cast cannot overflow
    with np.errstate(over="ignore", invalid="ignore"):
        cast = array.astype(target, copy=False)
    if kind != "b" and not np.isfinite(cast).all():  # integers too: 70000 is beyond float16
        overflow = np.isinf(cast) & np.isfinite(array)
        if overflow.any():
            raise refuse("value_out_of_range", f"Input {spec.name!r} takes {target.name}, whose largest "
                         f"magnitude is {np.finfo(target).max:.7g}; {where} holds {_first(array[overflow])}.")
    return cast


def _strings(value: object, array: np.ndarray, spec: TensorSpec, where: str) -> np.ndarray:
    """A string input's values: JSON strings only (numpy would read [1, "a"] as two strings), in numpy's own
    unicode dtype (its bytes are the values, so the cache key is)."""
    culprit = _first_non_string(value)
    if culprit is not None:
        found = "null" if culprit is _NULL else quoted(culprit)
        raise refuse("invalid_dtype", f"Input {spec.name!r} takes strings; {where} holds {found}: send every "
                     "value as a JSON string.")
    return array if array.dtype.kind == "U" else array.astype(str)


_NULL = object()


def _first_non_string(value: object) -> object:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
        elif not isinstance(item, str):
            return _NULL if item is None else item
    return None


def to_json(array: np.ndarray) -> object:
    """An output as JSON-ready values: nested lists of Python numbers or booleans. A float32 keeps its exact
    value, printed as the shortest decimal of the widened double (0.20000000298023224 where TF Serving writes 0.2;
    both read back to the same float32)."""
    return array.tolist()


def is_b64(value: object) -> bool:
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get(B64_KEY), str)


def _first(array: np.ndarray) -> object:
    return array.flat[0].item() if array.size else "nothing"


def _not_numbers(value: object, spec: TensorSpec, where: str) -> InvalidInput:
    """Why a value is not numbers, naming the first element that is not (only on this error path)."""
    culprit = _first_non_number(value)
    if is_b64(culprit):
        found = ('{"b64": ...}, the encoded bytes of a string tensor, which only an image model\'s image input '
                 'takes, one encoded image per instance (the model metadata shows it as DT_STRING); this input '
                 'takes numbers')
    elif isinstance(culprit, str):
        found = f"a string ({culprit[:40]!r}); send JSON numbers, not quoted ones"
    elif culprit is None:
        found = "null"
    elif isinstance(culprit, dict):
        found = "an object"
    elif isinstance(culprit, int):
        found = f"{culprit}, an integer beyond any tensor's range"
    else:
        found = f"a {type(culprit).__name__}"
    return refuse("invalid_dtype", f"Input {spec.name!r} takes {spec.served_dtype} "
                  f"{'true/false values' if spec.served_dtype == 'bool' else 'numbers'}; {where} holds {found}.")


def _first_non_number(value: object) -> object:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
        elif not isinstance(item, (bool, float)) and not (isinstance(item, int) and -2 ** 63 <= item < 2 ** 64):
            return item
    return value
