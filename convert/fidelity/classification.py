"""Classification gate: the converted model must pick the SavedModel's top-1 class often enough."""
from __future__ import annotations

import numpy as np

from convert.fidelity.base import (NONFINITE_ADVICE, Column, GateResult, agreement_advice, cell, nonfinite_problem,
                                   nonfinite_rows, rounded)
from convert.samples import Samples
from function.model.outputs import probabilities

# Lowest top-1 agreement with the SavedModel each mode may have (docs/conversion.md says why).
THRESHOLDS = {"float32": 0.99, "float16": 0.99, "dynamic": 0.98, "mixed": 0.98, "int8": 0.95}
# The served gate (convert/served_gate.py): the most a score an answer shows may differ from expected's, per mode
# (docs/conversion.md says how these were chosen). A client thresholds or shows the score, so a wrong divisor that
# keeps the top-1 but turns 0.974 into 1.0 fails.
SCORE_BOUNDS = {"float32": 0.01, "float16": 0.05, "dynamic": 0.1, "mixed": 0.1, "int8": 0.1}
# Two classes the SavedModel itself scores within this much probability are a tie: picking either is agreement.
# (EfficientNet-Lite0 float16 "disagreed" once in 105 photos on a 0.0002 margin; that is noise, not a regression.)
TIE_TOLERANCE = 1e-3


def top1(outputs: np.ndarray, output_kind: str) -> np.ndarray:
    """Predicted class per sample; a single unit is binary (sigmoid probability > 0.5, or logit > 0)."""
    flat = outputs.reshape(len(outputs), -1)
    if flat.shape[1] == 1:
        return (flat[:, 0] > (0.5 if output_kind == "probabilities" else 0.0)).astype(np.int64)
    return flat.argmax(axis=1)


def agreeing(reference: np.ndarray, predicted: np.ndarray, expected: np.ndarray, output_kind: str) -> np.ndarray:
    """Per sample: the converted model picks the SavedModel's top-1, or a class the SavedModel ties with it."""
    if reference.reshape(len(reference), -1).shape[1] == 1:
        return predicted == expected
    flat = probabilities(reference, output_kind)  # the function's own reading of the outputs
    rows = np.arange(len(flat))
    return (predicted == expected) | (flat[rows, predicted] >= flat[rows, expected] - TIE_TOLERANCE)


def guess_output_kind(outputs: np.ndarray) -> str:
    """Without a sidecar: rows of values in [0, 1] summing to 1 (or a single unit in [0, 1]) are probabilities."""
    flat = outputs.reshape(len(outputs), -1)
    in_unit_range = bool(((flat >= 0) & (flat <= 1)).all())
    if in_unit_range and (flat.shape[1] == 1 or np.allclose(flat.sum(axis=1), 1.0, atol=1e-3)):
        return "probabilities"
    return "logits"


def _accuracy(metrics: dict) -> str:
    if metrics.get("accuracy") is None:
        return "-"
    return f"{metrics['accuracy']:.2%} ({metrics['reference_accuracy']:.2%})"


class Top1Gate:
    columns = (
        Column("top-1 agreement", lambda metrics: cell(metrics.get("top1_agreement"), ".2%")),
        Column("max abs diff", lambda metrics: cell(metrics.get("max_abs_diff"), ".2g")),
        Column("accuracy (SavedModel)", _accuracy),
    )

    def __init__(self, output: str, output_kind: str, threshold: float | None = None) -> None:
        self.output = output  # the signature output holding the class scores
        self.output_kind = output_kind
        self.threshold = threshold  # None: each mode's own (THRESHOLDS)

    def judge(self, reference, converted, samples: Samples, mode: str) -> GateResult:
        threshold = THRESHOLDS[mode] if self.threshold is None else self.threshold
        wanted, got = reference[self.output], converted[self.output]
        nonfinite = nonfinite_rows([got])
        predicted = top1(np.nan_to_num(got), self.output_kind)
        expected = top1(wanted, self.output_kind)
        agreement = float(np.mean(agreeing(wanted, predicted, expected, self.output_kind)))
        accuracy = reference_accuracy = None
        if samples.labels is not None:
            accuracy = float(np.mean(predicted == samples.labels))
            reference_accuracy = float(np.mean(expected == samples.labels))
        metrics = {"samples": samples.count, "top1_agreement": rounded(agreement),
                   "max_abs_diff": None if nonfinite else rounded(np.max(np.abs(got - wanted))),
                   "accuracy": rounded(accuracy), "reference_accuracy": rounded(reference_accuracy),
                   "threshold": threshold}
        summary = f"top-1 agreement {agreement:.2%}"
        if nonfinite:
            return GateResult(False, metrics, summary, nonfinite_problem(nonfinite, samples), NONFINITE_ADVICE)
        if agreement < threshold:
            problem = (f"agrees with the SavedModel on {agreement:.1%} of top-1 predictions, "
                       f"below the {threshold:.0%} threshold")
            return GateResult(False, metrics, summary, problem, agreement_advice(mode))
        return GateResult(True, metrics, summary)
