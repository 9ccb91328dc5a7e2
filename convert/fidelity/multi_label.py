"""Multi-label gate: per label, the converted model must take the SavedModel's yes/no decision (score at or above
the default threshold), and whole label sets must agree as often as top-1 must for a single-label classifier.

A label the SavedModel itself scores within TIE_TOLERANCE of the threshold counts as agreeing either way: which
side of 0.5 a 0.4996 lands on is float rounding, not a regression (the same rule as top-1 near-ties)."""
from __future__ import annotations

import numpy as np

from convert.fidelity.base import (NONFINITE_ADVICE, Column, GateResult, agreement_advice, cell, nonfinite_problem,
                                   nonfinite_rows, rounded)
from convert.fidelity.classification import THRESHOLDS, TIE_TOLERANCE
from convert.samples import Samples
from function.model.outputs import label_scores
from function.tasks.classification import DEFAULT_THRESHOLD


def decisions(outputs: np.ndarray, output_kind: str, threshold: float = DEFAULT_THRESHOLD) -> np.ndarray:
    """(samples, labels) booleans: the labels a multi-label answer lists (the function's own scoring)."""
    return label_scores(outputs, output_kind) >= threshold


def agreeing_decisions(reference: np.ndarray, converted: np.ndarray, output_kind: str,
                       threshold: float = DEFAULT_THRESHOLD) -> np.ndarray:
    """(samples, labels): the converted decision is the reference's, or the reference is a near-tie."""
    return decisions_agree(label_scores(reference, output_kind), decisions(converted, output_kind, threshold),
                           threshold)


def decisions_agree(wanted: np.ndarray, decided: np.ndarray, threshold: float = DEFAULT_THRESHOLD) -> np.ndarray:
    """(samples, labels): each yes/no in `decided` is the one the reference scores `wanted` make, or the reference
    is a near-tie (within TIE_TOLERANCE of the threshold)."""
    return (decided == (wanted >= threshold)) | (np.abs(wanted - threshold) <= TIE_TOLERANCE)


class MultiLabelGate:
    columns = (
        Column("label-set agreement", lambda metrics: cell(metrics.get("label_set_agreement"), ".2%")),
        Column("per-label agreement", lambda metrics: cell(metrics.get("decision_agreement"), ".2%")),
        Column("max abs diff", lambda metrics: cell(metrics.get("max_abs_diff"), ".2g")),
    )

    def __init__(self, output: str, output_kind: str, threshold: float | None = None) -> None:
        self.output = output
        self.output_kind = output_kind
        self.threshold = threshold  # the lowest label-set agreement; None: each mode's own (THRESHOLDS)

    def judge(self, reference, converted, samples: Samples, mode: str) -> GateResult:
        threshold = THRESHOLDS[mode] if self.threshold is None else self.threshold
        wanted, got = reference[self.output], converted[self.output]
        nonfinite = nonfinite_rows([got])
        agree = agreeing_decisions(wanted, np.nan_to_num(got), self.output_kind)
        sets, each = float(np.mean(agree.all(axis=1))), float(np.mean(agree))
        metrics = {"samples": samples.count, "label_set_agreement": rounded(sets), "decision_agreement": rounded(each),
                   "max_abs_diff": None if nonfinite else rounded(np.max(np.abs(got - wanted))),
                   "decision_threshold": DEFAULT_THRESHOLD, "threshold": threshold}
        summary = f"label-set agreement {sets:.2%} (per label {each:.2%})"
        if nonfinite:
            return GateResult(False, metrics, summary, nonfinite_problem(nonfinite, samples), NONFINITE_ADVICE)
        if sets < threshold:
            problem = (f"lists the SavedModel's labels (score >= {DEFAULT_THRESHOLD}) on {sets:.1%} of samples "
                       f"({each:.1%} of per-label decisions), below the {threshold:.0%} threshold")
            return GateResult(False, metrics, summary, problem, agreement_advice(mode))
        return GateResult(True, metrics, summary)
