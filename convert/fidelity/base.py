"""What every gate returns and how the report shows it."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from convert.errors import ConversionError
from convert.samples import Samples


@dataclass
class GateResult:
    passed: bool
    metrics: dict  # the task's own numbers, JSON-ready: the manifest's "fidelity" block (plus "passed")
    summary: str  # the headline numbers, for the progress line
    problem: str | None = None  # why it failed, as the end of "the converted <mode> model ..."
    advice: str | None = None  # what to do about it
    # The served gate: one record per raw sample (index, served vs expected, agrees, max_score_diff or cosine),
    # docs/conversion.md; kept out of the manifest, whose "worst" holds the few worst of them.
    per_sample: list[dict] | None = None

    def as_manifest(self) -> dict:
        return {**self.metrics, "passed": self.passed}

    def error(self, mode: str) -> ConversionError | None:
        if self.passed:
            return None
        return ConversionError("fidelity_failed", f"the converted {mode} model {self.problem}: {self.advice}")


@dataclass(frozen=True)
class Column:
    header: str
    cell: Callable[[dict], str]  # a row's metrics -> the table cell


class Gate(Protocol):
    columns: tuple[Column, ...]

    def judge(self, reference: Mapping[str, np.ndarray], converted: Mapping[str, np.ndarray], samples: Samples,
              mode: str) -> GateResult: ...


def nonfinite_rows(arrays: list[np.ndarray]) -> int:
    """Samples for which any of these outputs holds NaN or Inf."""
    finite = np.all([np.isfinite(array.reshape(len(array), -1)).all(axis=1) for array in arrays], axis=0)
    return int((~finite).sum())


def nonfinite_problem(count: int, samples: Samples) -> str:
    return f"outputs NaN/Inf on {count} of {samples.count} validation inputs"


NONFINITE_ADVICE = "use float32 (float16 too, after a quantized mode)"  # never only the mode that just failed


def milder_mode_advice(mode: str) -> str:
    """A mode that quantizes less: after dynamic, mixed keeps int8 weights only where the gate allows them."""
    if mode == "dynamic":
        return "use mixed (int8 weights only on the layers the gate allows), float16 or float32"
    if mode == "float16":
        return "use float32"
    if mode == "float32":
        return "float32 is the mildest mode: a convert bug or a kernel LiteRT computes differently, report it"
    return "use a milder mode (float16 or float32)"


def agreement_advice(mode: str) -> str:
    """What to do when a classifier's converted answers agree too rarely with the SavedModel's."""
    if mode == "int8":
        return "give int8 more representative inputs with --representative FILE.npz, or use dynamic or float16"
    return milder_mode_advice(mode)


def rounded(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else round(float(value), digits)


def cell(value: float | None, pattern: str) -> str:
    return "-" if value is None else format(value, pattern)
