"""A classifier with outputs beside its class head (a value head): the class head is judged by its own gate (top-1 or
label sets), every other output as the tensor gate judges outputs (its error relative to its range, within the mode's
tolerance). Both must pass."""
from __future__ import annotations

from convert.fidelity.base import GateResult
from convert.fidelity.tensor import TensorErrorGate
from convert.samples import Samples


class BesideGate:
    def __init__(self, classes, beside: list[str]) -> None:
        self.classes = classes  # Top1Gate or MultiLabelGate over the class output
        self.values = TensorErrorGate(beside)
        self.columns = (*classes.columns, *self.values.columns)

    @property
    def output_kind(self) -> str:
        return self.classes.output_kind

    def judge(self, reference, converted, samples: Samples, mode: str) -> GateResult:
        classes = self.classes.judge(reference, converted, samples, mode)
        values = self.values.judge(reference, converted, samples, mode)
        metrics = {**classes.metrics, "outputs": values.metrics["outputs"], "tolerance": values.metrics["tolerance"]}
        summary = f"{classes.summary}, beside: {values.summary}"
        for result in (classes, values):
            if not result.passed:
                return GateResult(False, metrics, summary, result.problem, result.advice)
        return GateResult(True, metrics, summary)
