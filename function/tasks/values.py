"""Outputs answered as values: an image regression model's, and those beside an image classifier's class output
(a value head). Each instance's answer is {output name: [its values, flattened]}, floats as the model gives them."""
from __future__ import annotations

import math

import numpy as np

from function.model.manifest import Manifest, TensorSpec

SCORES = "scores"  # the class output's role: a classifier's labels score it, every other output is values


def value_specs(manifest: Manifest) -> tuple[TensorSpec, ...]:
    """The outputs answered as values, in manifest order: all but the class output."""
    return tuple(spec for spec in manifest.outputs if spec.role != SCORES)


def value_rows(outputs: dict[str, np.ndarray], specs: tuple[TensorSpec, ...]) -> list[dict[str, list[float]]]:
    """One {output name: values} per instance, from the outputs by role (batch first)."""
    flat = {spec.name: np.asarray(outputs[spec.role], dtype=np.float64).reshape(len(outputs[spec.role]), -1).tolist()
            for spec in specs}
    count = len(next(iter(flat.values())))
    return [{name: rows[row] for name, rows in flat.items()} for row in range(count)]


def value_count(spec: TensorSpec) -> int:
    """How many values one instance of this output has (-1: open, any number)."""
    dims = spec.shape[1:]
    return -1 if any(dim < 0 for dim in dims) else math.prod(dims)


def is_values(value: object, specs: tuple[TensorSpec, ...]) -> bool:
    """{output name: [finite numbers]} with exactly these outputs, each of its size: what value_rows gives."""
    if not isinstance(value, dict) or set(value) != {spec.name for spec in specs}:
        return False
    for spec in specs:
        values, count = value[spec.name], value_count(spec)
        if not isinstance(values, list) or (count >= 0 and len(values) != count) or not all(
                isinstance(item, (int, float)) and not isinstance(item, bool) and math.isfinite(item)
                for item in values):
            return False
    return True


def values_line(values: dict[str, list[float]]) -> str:
    """Values as a short line's words, `name=[first values]` for each output (a completion report's resultString)."""
    return " ".join(f"{name}={row[:4]}" for name, row in values.items())
