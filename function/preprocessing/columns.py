"""Structured inputs: raw column values (strings and numbers, one named input each) -> the model's tensors, as the
Keras preprocessing layers `convert` took out of the model (StringLookup, IntegerLookup, Normalization,
CategoryEncoding; convert/lookup_layers.py) computed them, in numpy.

The manifest's `preprocessing` is `{"type": "columns", "columns": [...]}`, one entry per raw input, in the order
clients see them: `name`, `dtype` (string, int64, int32 or float32), `shape` (as clients send it, batch first),
`keras_shape` (what the layers took, batch first: a (1,) Input is sent one value per instance), `input` (the model
tensor the column ends in) and `steps`, applied in turn:
- `lookup`: `vocabulary` (no special tokens), `mask_token` (or null), `num_oov_indices`, `output_mode` (int,
  one_hot, multi_hot, count) and `depth` (the encoded width). Index layout as the layer's: in int mode the mask
  token is 0, the OOV indices follow, then the vocabulary; in the other modes the mask token is dropped (a row of
  zeros) and the OOV indices come first. With several OOV indices (`oov_method`): an integer goes to OOV index
  `value mod n` ("floormod"); a string, or an integer written in decimal ("farmhash"), to its FarmHash64 mod n,
  or SipHash-2-4 mod n under `salt` ([k0, k1]) when there is one (function/preprocessing/string_hashes.py);
- `hashing`: `num_bins`, `mask_value`, `salt`, `output_mode`: each value (a float truncated to an integer, an
  integer written in decimal) hashed as above into num_bins (num_bins - 1, shifted by one, when a mask value
  takes bin 0), then encoded as the lookup's modes;
- `normalization`: `mean`, `variance` (nested lists broadcast over the batch): (x - mean) / max(sqrt(variance),
  1e-7) in float32;
- `category_encoding`: `num_tokens`, `output_mode` (one_hot, multi_hot, count); values outside [0, num_tokens)
  are refused, as the layer refuses them.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from function.errors import quoted, refuse
from function.model.manifest import ManifestError, TensorSpec
from function.preprocessing.string_hashes import hash_bucket
from function.records import named_tuple

TYPE = "columns"
STRING = "string"
COLUMN_DTYPES = (STRING, "int64", "int32", "float32")
LOOKUP_MODES = ("int", "one_hot", "multi_hot", "count")
ENCODING_MODES = ("one_hot", "multi_hot", "count")
EPSILON = np.float32(1e-7)  # keras.backend.epsilon(): Normalization's floor on the standard deviation


def is_columns(preprocessing: dict | None) -> bool:
    return isinstance(preprocessing, dict) and preprocessing.get("type") == TYPE


@named_tuple
class Column:
    spec: TensorSpec  # the raw input as clients send it (dtype "string" for text values)
    keras_shape: tuple[int, ...]  # what the first layer took, batch first
    model_input: str  # the model tensor (its manifest name) the column ends in
    steps: tuple[dict, ...]


def _field(data: dict, key: str, kinds: type | tuple[type, ...], where: str):
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, kinds):  # no field is a boolean
        raise ManifestError(f"{where}: {key!r} is missing or of the wrong type ({value!r})")
    return value


def _key(salt: object, where: str) -> tuple[int, int] | None:
    if salt is None:
        return None
    if not isinstance(salt, list) or len(salt) != 2 or not all(isinstance(word, int) for word in salt):
        raise ManifestError(f"{where}: salt must be two integers, not {salt!r}")
    return salt[0], salt[1]


def _bucket(raw: object, buckets: int, key: tuple[int, int] | None) -> int:
    """A value's hash bucket as TensorFlow's to_hash_bucket ops give it: strings as UTF-8, numbers in decimal."""
    text = raw if isinstance(raw, str) else str(int(raw))
    return hash_bucket(text, buckets, key)


def _check_step(step: object, dtype: str, where: str) -> dict:
    if not isinstance(step, dict):
        raise ManifestError(f"{where}: not an object")
    kind = step.get("kind")
    if kind == "lookup":
        vocabulary = _field(step, "vocabulary", list, where)
        wanted = str if dtype == STRING else int
        if not all(isinstance(token, wanted) and not isinstance(token, bool) for token in vocabulary):
            raise ManifestError(f"{where}: the vocabulary of a {dtype} column must hold {wanted.__name__}s")
        if step.get("output_mode") not in LOOKUP_MODES:
            raise ManifestError(f"{where}: output_mode {step.get('output_mode')!r} is not one of {LOOKUP_MODES}")
        _field(step, "num_oov_indices", int, where)
        _field(step, "depth", int, where)
        if step.get("oov_method", "floormod") not in ("floormod", "farmhash"):
            raise ManifestError(f"{where}: oov_method {step.get('oov_method')!r} is not floormod or farmhash")
        table = {token: index for index, token in enumerate(vocabulary)}
        return {**step, "table": table, "key": _key(step.get("salt"), where)}
    if kind == "normalization":
        mean = np.asarray(_field(step, "mean", (list, int, float), where), dtype=np.float32)
        variance = np.asarray(_field(step, "variance", (list, int, float), where), dtype=np.float32)
        return {**step, "scale": np.maximum(np.sqrt(variance), EPSILON), "offset": mean}
    if kind == "hashing":
        _field(step, "num_bins", int, where)
        if step.get("output_mode") not in LOOKUP_MODES:
            raise ManifestError(f"{where}: output_mode {step.get('output_mode')!r} is not one of {LOOKUP_MODES}")
        return {**step, "key": _key(step.get("salt"), where)}
    if kind == "category_encoding":
        _field(step, "num_tokens", int, where)
        if step.get("output_mode") not in ENCODING_MODES:
            raise ManifestError(f"{where}: output_mode {step.get('output_mode')!r} is not one of {ENCODING_MODES}")
        return dict(step)
    raise ManifestError(f"{where}: unknown step kind {kind!r}")


def parse_columns(preprocessing: dict, model_inputs: Sequence[TensorSpec]) -> tuple[Column, ...]:
    """The manifest's columns, checked: every model input fed by exactly one column."""
    entries = preprocessing.get("columns")
    if not isinstance(entries, list) or not entries:
        raise ManifestError("preprocessing.columns must be a non-empty list")
    names = {spec.name for spec in model_inputs}
    columns = []
    for index, entry in enumerate(entries):
        where = f"preprocessing.columns[{index}]"
        if not isinstance(entry, dict):
            raise ManifestError(f"{where}: not an object")
        name = _field(entry, "name", str, where)
        dtype = entry.get("dtype")
        if dtype not in COLUMN_DTYPES:
            raise ManifestError(f"{where}: dtype {dtype!r} is not one of {COLUMN_DTYPES}")
        target = _field(entry, "input", str, where)
        if target not in names:
            raise ManifestError(f"{where}: input {target!r} is not one of the model's inputs {sorted(names)}")
        shape = tuple(int(dim) for dim in _field(entry, "shape", list, where))
        keras_shape = tuple(int(dim) for dim in _field(entry, "keras_shape", list, where))
        steps = tuple(_check_step(step, dtype, f"{where}.steps[{number}]")
                      for number, step in enumerate(_field(entry, "steps", list, where)))
        columns.append(Column(TensorSpec(name=name, shape=shape, dtype=dtype, scale=None, zero_point=None, role=name),
                              keras_shape, target, steps))
    fed = [column.model_input for column in columns]
    if sorted(fed) != sorted(names) or len({column.spec.name for column in columns}) != len(columns):
        raise ManifestError(f"preprocessing.columns must name each column once and feed each model input once "
                            f"(they feed {fed}; the model takes {sorted(names)})")
    return tuple(columns)


def _lookup(values: np.ndarray, step: dict, name: str) -> np.ndarray:
    """Each value's index, as the lookup layer gives it (before any encoding); -1 for a dropped mask token."""
    table, mask, oov = step["table"], step.get("mask_token"), step["num_oov_indices"]
    as_int = step["output_mode"] == "int"
    start = oov + (1 if as_int and mask is not None else 0)  # the vocabulary's first index
    flat = values.reshape(-1)
    if flat.dtype.kind == "f":  # an IntegerLookup on a float Input: the layer casts to int64 (toward zero) first
        flat = flat.astype(np.int64)
    indices = np.empty(flat.shape, dtype=np.int64)
    for position, raw in enumerate(flat.tolist()):
        found = table.get(raw)
        if found is not None:
            indices[position] = start + found
        elif mask is not None and raw == mask:
            indices[position] = 0 if as_int else -1
        elif oov == 0:
            raise refuse("unknown_category", f"Input {name!r} takes one of its {len(table)} known values (the "
                         f"model has no out-of-vocabulary index); it was sent {quoted(raw)}.")
        else:
            if oov == 1:
                bucket = 0
            elif isinstance(raw, str) or step.get("oov_method") == "farmhash":
                bucket = _bucket(raw, oov, step["key"])
            else:
                bucket = raw % oov
            indices[position] = start - oov + bucket
    return indices.reshape(values.shape)


def _hashing(values: np.ndarray, step: dict) -> np.ndarray:
    """The Hashing layer's bins (before any encoding)."""
    bins, mask, key = step["num_bins"], step.get("mask_value"), step["key"]
    masked = mask is not None and bins > 1
    flat = values.reshape(-1)
    if flat.dtype.kind == "f":
        flat = flat.astype(np.int64)  # the layer casts floats to int64 (toward zero) before writing them out
    out = np.empty(flat.shape, dtype=np.int64)
    for position, raw in enumerate(flat.tolist()):
        if masked and raw == mask:
            out[position] = 0
        else:
            out[position] = _bucket(raw, bins - 1 if masked else bins, key) + (1 if masked else 0)
    return out.reshape(values.shape)


def encode(indices: np.ndarray, mode: str, depth: int) -> np.ndarray:
    """Keras's encode_categorical_inputs: one_hot over a last dimension of 1 (or a new one), multi_hot and count
    over the last dimension; an index outside [0, depth) sets nothing."""
    if mode == "one_hot":
        if indices.ndim > 1 and indices.shape[-1] == 1:
            indices = indices[..., 0]
        return (indices[..., np.newaxis] == np.arange(depth)).astype(np.float32)
    if indices.ndim == 0:
        indices = indices[np.newaxis]
    hits = (indices[..., np.newaxis] == np.arange(depth)).sum(axis=-2).astype(np.float32)
    return np.minimum(hits, 1.0) if mode == "multi_hot" else hits


def _category_encoding(values: np.ndarray, step: dict, name: str) -> np.ndarray:
    tokens = step["num_tokens"]
    outside = values[(values < 0) | (values >= tokens)]
    if outside.size:
        raise refuse("value_out_of_range", f"Input {name!r} takes category indices 0 to {tokens - 1}; it was sent "
                     f"{outside.flat[0].item()}.")
    return encode(values.astype(np.int64), step["output_mode"], tokens)


def apply_column(column: Column, values: np.ndarray) -> np.ndarray:
    """One column's raw batch -> its model tensor (float32 or int64; the runner casts to the tensor's dtype)."""
    array = values.reshape((len(values), *column.keras_shape[1:]))
    name = column.spec.name
    for step in column.steps:
        kind = step["kind"]
        if kind == "lookup":
            indices = _lookup(array, step, name)
            array = indices if step["output_mode"] == "int" else encode(indices, step["output_mode"], step["depth"])
        elif kind == "hashing":
            indices = _hashing(array, step)
            mode = step["output_mode"]
            array = indices if mode == "int" else encode(indices, mode, step["num_bins"])
        elif kind == "normalization":
            array = (array.astype(np.float32) - step["offset"]) / step["scale"]
        else:
            array = _category_encoding(array, step, name)
    return array

