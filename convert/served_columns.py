"""The served gate's measure for a structured model (raw columns in, function/preprocessing/columns.py): its one
output, answered from raw rows through the function's own path, against `expected` (the Keras model called on the
same raw values), as the tensor gate measures outputs: the largest difference relative to the output's range,
within the mode's TOLERANCES. Metrics and records have the shape of the other value measures ("outputs",
"max_value_error", served/expected "outputs"), which the report and the refusal show."""
from __future__ import annotations

import numpy as np

from convert.errors import ConversionError
from convert.fidelity.tensor import TOLERANCES, output_errors
from function.tasks.base import Result, Task
from function.tasks.tensor import output_arrays

WORST_SAMPLES = 5


def _first_values(array: np.ndarray, row: int) -> list[float]:
    return [round(float(value), 4) for value in array[row][:3]]


def measure_columns(task: Task, results: list[Result], expected: np.ndarray, threshold: float | None, mode: str
                    ) -> tuple[dict, str | None]:
    (output,) = task.outputs
    served = output_arrays(results, task.outputs)[output.name].astype(np.float64).reshape(len(results), -1)
    wanted = expected.astype(np.float64).reshape(len(results), -1)
    if served.shape != wanted.shape:
        raise ConversionError("bad_samples", f"expected has {wanted.shape[1]} values per raw sample; the model's "
                              f"output {output.name!r} has {served.shape[1]}")
    errors = output_errors(wanted, served)
    tolerance = TOLERANCES[mode]
    relative = np.abs(served - wanted).max(axis=1) / (errors["reference_max_abs"] or 1.0)
    records = [{"index": index, "agrees": bool(relative[index] <= tolerance),
                "max_value_error": round(float(relative[index]), 6),
                "served": {"outputs": {output.name: _first_values(served, index)}},
                "expected": {"outputs": {output.name: _first_values(wanted, index)}}} for index in range(len(results))]
    worst = sorted(records, key=lambda record: (record["agrees"], -record["max_value_error"]))[:WORST_SAMPLES]
    metrics = {"samples": len(results), "outputs": {output.name: errors}, "tolerance": {"max_rel_error": tolerance},
               "worst": worst, "per_sample": records}
    if errors["max_rel_error"] <= tolerance:
        return metrics, None
    first = records[int(relative.argmax())]
    return metrics, (f"answers output {output.name!r} off expected's by up to {errors['max_rel_error']:.2%} of its "
                     f"range, above the {tolerance:.2%} tolerance for {mode} (raw sample {first['index']}: served "
                     f"{first['served']['outputs']}, expected {first['expected']['outputs']})")
