"""Outputs answered as values on raw samples (an image regression model's, the outputs beside an image classifier's
class output): which expected answers they are held to, and how, for the served gate (convert/served_gate.py). As
the tensor gate measures outputs: the largest difference relative to the output's range, within the mode's
TOLERANCES."""
from __future__ import annotations

import numpy as np

from convert.errors import ConversionError
from convert.fidelity.tensor import TOLERANCES, output_errors
from convert.raw_samples import RawSamples
from convert.tasks.base import Binding

VALUE_TASKS = ("image_classification", "image_regression")  # the tasks that may answer outputs as values
SCORES = "scores"  # a classifier's class output's role: its labels, not values


def expected_values(task: str, binding: Binding, raw: RawSamples) -> dict[str, np.ndarray]:
    """Output name -> expected values, for each output answered as values: every output of an image regression
    model, the outputs beside an image classifier's class output. A single output's are `expected`; with several,
    each needs its expected_<name> array, refused by name when missing."""
    if task not in VALUE_TASKS:
        return {}
    names = [name for role, name in binding.outputs.items() if role != SCORES or task == "image_regression"]
    if task == "image_regression" and len(names) == 1 and names[0] not in raw.expected_outputs:
        return {names[0]: raw.expected}
    missing = [name for name in names if name not in raw.expected_outputs]
    if missing:
        listed = ", ".join(f"expected_{name}" for name in missing)
        raise ConversionError("bad_samples", f"{raw.source}: the model answers output {', '.join(map(repr, missing))} "
                              f"as values but the file has no {listed}: save each output's model.predict answers "
                              "for the raw samples as expected_<output name> (model.predict of a model with "
                              "several outputs gives one array per output)")
    return {name: raw.expected_outputs[name] for name in names}


def _values_text(values: dict[str, np.ndarray], row: int) -> dict[str, list[float]]:
    """One sample's values per output, the first three of each, rounded for a message."""
    return {name: [round(float(value), 4) for value in array[row][:3]] for name, array in values.items()}


def measure_values(results: list[dict], expected: dict[str, np.ndarray], mode: str
                   ) -> tuple[dict, list[dict], str | None]:
    """The values each answer gives per output ("outputs": {name: [...]}) against expected's, relative to the
    output's range as the tensor gate measures them: (metrics, one record per sample, problem or None)."""
    tolerance = TOLERANCES[mode]
    served = {name: np.array([result["outputs"][name] for result in results], dtype=np.float64).reshape(
        len(results), -1) for name in expected}
    wanted = {name: array.reshape(len(array), -1).astype(np.float64) for name, array in expected.items()}
    errors = {name: output_errors(wanted[name], served[name]) for name in expected}
    relative = np.zeros(len(results))
    for name in expected:
        scale = float(np.abs(wanted[name]).max()) or 1.0
        relative = np.maximum(relative, np.abs(served[name] - wanted[name]).max(axis=1) / scale)
    records = [{"index": index, "agrees": bool(relative[index] <= tolerance),
                "max_value_error": round(float(relative[index]), 6),
                "served": {"outputs": _values_text(served, index)},
                "expected": {"outputs": _values_text(wanted, index)}} for index in range(len(results))]
    metrics = {"outputs": errors, "tolerance": {"max_rel_error": tolerance}}
    over = [name for name in expected if errors[name]["max_rel_error"] > tolerance]
    if not over:
        return metrics, records, None
    first = int(relative.argmax())
    details = ", ".join(f"'{name}' by up to {errors[name]['max_rel_error']:.2%} of its range" for name in over)
    return metrics, records, (f"answers values off expected's on output {details}, above the {tolerance:.2%} "
                              f"tolerance for {mode} (raw sample {first}: served {_values_text(served, first)}, "
                              f"expected {_values_text(wanted, first)})")
