"""Inputs the fidelity gate and int8 calibration feed both models: real ones from an .npz, or generated ones."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from convert.errors import ConversionError
from convert.npz_reader import read_arrays
from convert.saved_model_inspect import TensorInfo

GENERATED_COUNT = 32
# Sizes for dimensions the signature leaves open (besides the batch): a sequence length and an image side.
OPEN_SEQUENCE_LENGTH = 16
OPEN_IMAGE_SIDE = 64
# Generated token ids stay below this: small enough for any real vocabulary, large enough to vary.
GENERATED_MAX_TOKEN_ID = 100


@dataclass
class Samples:
    inputs: dict[str, np.ndarray]  # signature input name -> batch-first array in the signature's dtype
    labels: np.ndarray | None
    source: str  # the .npz file name, or "generated"

    @property
    def count(self) -> int:
        return len(next(iter(self.inputs.values())))

    def one(self, index: int) -> dict[str, np.ndarray]:
        return {name: array[index:index + 1] for name, array in self.inputs.items()}

    def first(self, count: int) -> Samples:
        return Samples({name: array[:count] for name, array in self.inputs.items()},
                       None if self.labels is None else self.labels[:count], self.source)


def _bad(path: Path, problem: str) -> ConversionError:
    return ConversionError("bad_samples", f"{path.name}: {problem}")


def _fits(array: np.ndarray, spec: TensorInfo) -> bool:
    same_rank = array.ndim == len(spec.shape)
    return same_rank and all(want in (None, got) for want, got in zip(spec.shape[1:], array.shape[1:]))


def _as_signature_dtype(path: Path, key: str, array: np.ndarray, spec: TensorInfo) -> np.ndarray:
    numeric = np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_
    if spec.is_float:
        if not numeric:
            raise _bad(path, f"{key} holds {array.dtype} values, the model expects {spec.dtype}")
        return array.astype(spec.dtype)
    whole = np.issubdtype(array.dtype, np.integer) or array.dtype == np.bool_ or (
        np.issubdtype(array.dtype, np.floating) and np.array_equal(array, np.round(array)))
    if not whole or (spec.dtype == "bool" and not np.isin(array, (0, 1)).all()):
        raise _bad(path, f"{key} holds {array.dtype} values, the model expects whole {spec.dtype} values")
    return array.astype(spec.dtype)


def load_samples(path: Path, roles: dict[str, str], specs: dict[str, TensorInfo], limit: int | None = None) -> Samples:
    """The `inputs_<role>` arrays (and `labels`, if any) of an .npz, checked against the serving signature.
    roles: role -> signature input name (for the tensor task each input's role is its own name)."""
    arrays = read_arrays(path)
    inputs = {}
    for role, name in roles.items():
        key = f"inputs_{role}"
        if key not in arrays:
            raise _bad(path, f"no '{key}' array (found: {', '.join(sorted(arrays)) or 'none'}): "
                             "save the preprocessed inputs as inputs_<role>")
        array, spec = arrays[key], specs[name]
        if not _fits(array, spec):
            expected = "(" + ", ".join("N" if dim is None else str(dim) for dim in spec.shape) + ")"
            raise _bad(path, f"{key} has shape {array.shape}, the signature input '{name}' expects {expected}")
        inputs[name] = _as_signature_dtype(path, key, array, spec)[:limit]
    counts = {len(array) for array in inputs.values()}
    if len(counts) != 1 or 0 in counts:
        raise _bad(path, "the inputs_<role> arrays must hold the same, non-zero number of samples")
    labels = arrays.get("labels")
    if labels is not None:
        if labels.ndim != 1 or not np.issubdtype(labels.dtype, np.integer):
            raise _bad(path, "labels must be a 1-D array of integer class ids")
        labels = labels[:limit]
        if len(labels) != counts.pop():
            raise _bad(path, "labels must have one entry per sample")
    return Samples(inputs=inputs, labels=labels, source=path.name)


def generate_samples(roles: dict[str, str], specs: dict[str, TensorInfo], count: int = GENERATED_COUNT,
                     seed: int = 0) -> Samples:
    """Inputs that fit the signature when nothing real is known: uniform floats in [0, 1), small token ids."""
    rng = np.random.default_rng(seed)
    inputs = {}
    for role, name in roles.items():
        spec = specs[name]
        if spec.dtype in ("object", "bytes_", "str_"):
            raise ConversionError("needs_flex", f"signature input '{name}' is a string: LiteRT cannot run string ops; "
                                  "tokenize outside the model, feed int32 ids")
        open_size = OPEN_IMAGE_SIDE if spec.is_float else OPEN_SEQUENCE_LENGTH
        shape = (count, *(open_size if dim is None else dim for dim in spec.shape[1:]))
        if spec.is_float:
            inputs[name] = rng.random(shape, dtype=np.float64).astype(spec.dtype)
        elif role == "attention_mask":
            inputs[name] = np.ones(shape, dtype=spec.dtype)
        else:
            inputs[name] = rng.integers(1, GENERATED_MAX_TOKEN_ID, size=shape).astype(spec.dtype)
    return Samples(inputs=inputs, labels=None, source="generated")


# int8 calibration fixes each float tensor's range from the representative inputs; inputs on another scale than
# the validation inputs (raw 0..255 pixels for a model fed [-1, 1]) calibrate to the wrong range, and the gate would
# then fail with advice that misses the cause. A larger spread than this factor either way is refused.
RANGE_FACTOR = 4.0


def check_value_ranges(representative: Samples, validation: Samples, float_inputs: list[str]) -> None:
    """Raises ConversionError("representative_range") when a float input's values span a range more than
    RANGE_FACTOR times wider or narrower in the representative inputs than in the validation inputs."""
    for name in float_inputs:
        calibration, checked = representative.inputs[name], validation.inputs[name]
        low, high = float(calibration.min()), float(calibration.max())
        want_low, want_high = float(checked.min()), float(checked.max())
        span, want_span = high - low, want_high - want_low
        if want_span <= 0 and span <= 0:
            continue
        ratio = span / want_span if want_span > 0 else float("inf")
        if ratio > RANGE_FACTOR or ratio < 1 / RANGE_FACTOR:
            factor = ratio if ratio >= 1 else (1 / ratio if ratio > 0 else float("inf"))
            raise ConversionError("representative_range", f"{representative.source}: input '{name}' spans "
                                  f"[{low:.4g}, {high:.4g}] but the validation inputs ({validation.source}) span "
                                  f"[{want_low:.4g}, {want_high:.4g}], {factor:.3g}x "
                                  "apart: int8 would calibrate to the wrong range; preprocess the representative "
                                  "inputs exactly as the validation inputs (the model's own input scale)")
