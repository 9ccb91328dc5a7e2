"""Tensor gate: every output of the converted model must stay close to the SavedModel's, within the mode's tolerance.

Per output: the max absolute error |converted - reference| over every value of every sample, and the max relative
error, which is that absolute error divided by the largest |reference value| of the output over the samples (its
range). Relative to the range, not to each value: a regression output that crosses zero would otherwise have an
unbounded relative error wherever the reference is near 0. Only the relative error is gated; the absolute error is in
the output's own units, so its right size depends on the model and it is reported for the user to judge.
"""
from __future__ import annotations

import numpy as np

from convert.fidelity.base import (NONFINITE_ADVICE, Column, GateResult, cell, milder_mode_advice, nonfinite_problem,
                                   nonfinite_rows, rounded)
from convert.samples import Samples

# The largest relative error (fraction of the output's range) each mode may have; docs/conversion.md says why:
# measured on the demo classifiers read as tensors, these accept what their top-1 gates accept and refuse the rest.
TOLERANCES = {"float32": 1e-4, "float16": 2.5e-2, "dynamic": 0.1, "mixed": 0.1, "int8": 0.1}


def output_errors(reference: np.ndarray, converted: np.ndarray) -> dict:
    difference = np.abs(converted.astype(np.float64) - reference.astype(np.float64))
    max_abs = float(difference.max()) if difference.size else 0.0
    scale = float(np.abs(reference).max()) if reference.size else 0.0
    if scale > 0:
        relative = max_abs / scale
    else:  # an output that is all zeros on the samples: any difference at all is a total one
        relative = 0.0 if max_abs == 0 else float("inf")
    return {"max_abs_error": rounded(max_abs, 9), "max_rel_error": rounded(relative, 9),
            "reference_max_abs": rounded(scale, 9)}


def _advice(mode: str) -> str:
    if mode == "int8":
        return ("full-integer int8 rounds every tensor, inputs and outputs included, to 256 levels across the range "
                "calibration saw, so its error grows with that range (and a feature far smaller than the others in "
                "the same input is rounded away); serve dynamic or float16, or calibrate with --representative "
                "inputs that span the real range")
    return milder_mode_advice(mode)


class TensorErrorGate:
    def __init__(self, outputs: list[str]) -> None:
        self.outputs = outputs  # every served signature output, in the order clients see them
        self.columns = tuple(
            column
            for name in outputs
            for column in (
                Column(f"{name} max abs error", lambda metrics, name=name: _error_cell(metrics, name, "max_abs_error")),
                Column(f"{name} max rel error", lambda metrics, name=name: _error_cell(metrics, name, "max_rel_error")),
            )
        )

    def judge(self, reference, converted, samples: Samples, mode: str) -> GateResult:
        tolerance = TOLERANCES[mode]
        nonfinite = nonfinite_rows([converted[name] for name in self.outputs])
        metrics = {"samples": samples.count, "outputs": {}, "tolerance": {"max_rel_error": tolerance}}
        if nonfinite:
            return GateResult(False, metrics, "NaN/Inf outputs", nonfinite_problem(nonfinite, samples),
                              NONFINITE_ADVICE)
        errors = {name: output_errors(reference[name], converted[name]) for name in self.outputs}
        metrics["outputs"] = errors
        worst = max(self.outputs, key=lambda name: errors[name]["max_rel_error"])
        summary = f"max rel error {errors[worst]['max_rel_error']:.2g} ({worst})"
        over = [name for name in self.outputs if errors[name]["max_rel_error"] > tolerance]
        if over:
            details = ", ".join(f"'{name}' by up to {errors[name]['max_rel_error']:.2%} of its range "
                                f"(max abs error {errors[name]['max_abs_error']:.3g})" for name in over)
            problem = f"differs from the SavedModel on output {details}, above the {tolerance:.2%} tolerance"
            return GateResult(False, metrics, summary, problem, _advice(mode))
        return GateResult(True, metrics, summary)


def _error_cell(metrics: dict, output: str, key: str) -> str:
    return cell(metrics.get("outputs", {}).get(output, {}).get(key), ".2g")
