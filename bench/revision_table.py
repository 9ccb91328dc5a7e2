"""The side-by-side table of two revisions: one row per measured figure, BASE and HEAD, and HEAD/BASE.

A figure measured in rounds keeps its samples in round order, BASE's i-th and HEAD's i-th taken in the same round,
so the ratio is taken round by round: a burst of load on this shared machine falls on both sides of one ratio, and
the spread of the per-round ratios is what the machine's noise does to one comparison.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from bench.report import table
from bench.stats import percentile, summarize


@dataclass(frozen=True)
class Metric:
    what: str
    base: list[float]  # one sample per round (or a single value for a count)
    head: list[float]
    unit: str = "ms"  # "" for a count
    digits: int = 1
    # A difference of two timings (an overhead over a floor) can be near zero or below: its ratio says nothing, so
    # the last column gives the per-round HEAD - BASE instead.
    difference: bool = False

    def cell(self, values: list[float]) -> str:
        if not values:
            return "-"
        if len(set(values)) == 1:
            return _number(values[0], self.unit, self.digits)
        summary = summarize(values)
        return (f"{_number(summary.median, self.unit, self.digits)} (min-max {summary.low:.{self.digits}f}-"
                f"{summary.high:.{self.digits}f}, n={summary.runs})")

    def ratio(self) -> str:
        """HEAD/BASE round by round: the median and interquartile range of the per-round ratios (each round's load
        falls on both sides), then the ratio and the difference of the two medians."""
        if not self.base or not self.head:
            return "-"
        if self.difference:
            return self._paired_difference()
        base, head = statistics.median(self.base), statistics.median(self.head)
        if base == 0:
            return "n/a"
        difference = _number(head - base, self.unit, self.digits, signed=True)
        paired = paired_ratios(self.base, self.head)
        if len(paired) < 2 or len(set(paired)) < 2:
            return f"**{head / base:.2f}x** ({difference})"
        return (f"**{statistics.median(paired):.2f}x** (IQR {percentile(paired, 0.25):.2f}-"
                f"{percentile(paired, 0.75):.2f}); medians {head / base:.2f}x, {difference}")

    def _paired_difference(self) -> str:
        if len(self.base) != len(self.head):
            raise ValueError(f"unpaired samples: {len(self.base)} BASE rounds, {len(self.head)} HEAD rounds")
        paired = [h - b for b, h in zip(self.base, self.head)]
        text = f"**{_number(statistics.median(paired), self.unit, self.digits, signed=True)}**"
        if len(set(paired)) > 1:
            text += f" (IQR {percentile(paired, 0.25):+.{self.digits}f} to {percentile(paired, 0.75):+.{self.digits}f})"
        return text + " per round"


def paired_ratios(base: list[float], head: list[float]) -> list[float]:
    """HEAD/BASE round by round; a single value on one side pairs with every round of the other."""
    if len(base) == 1 or len(head) == 1:
        base, head = base * (len(head) if len(base) == 1 else 1), head * (len(base) if len(head) == 1 else 1)
    if len(base) != len(head):
        raise ValueError(f"unpaired samples: {len(base)} BASE rounds, {len(head)} HEAD rounds")
    return [h / b for b, h in zip(base, head) if b]


def _number(value: float, unit: str, digits: int, signed: bool = False) -> str:
    digits = digits if unit else 0 if float(value).is_integer() else digits
    text = f"{value:+,.{digits}f}" if signed else f"{value:,.{digits}f}"
    return f"{text} {unit}" if unit else text


def render(metrics: list[Metric], base_label: str, head_label: str) -> str:
    return table(["what", f"BASE {base_label}", f"HEAD {head_label}", "HEAD/BASE"],
                 [[metric.what, metric.cell(metric.base), metric.cell(metric.head), metric.ratio()]
                  for metric in metrics])
