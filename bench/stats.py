"""The few statistics every section reports, and one way to print them."""

from __future__ import annotations

import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class Summary:
    runs: int
    median: float
    low: float
    high: float

    def text(self, unit: str, digits: int = 1) -> str:
        """'12.3 ms (min-max 11.0-14.1, n=5)': the figure and how it was measured, in one cell."""
        return f"{self.median:.{digits}f} {unit} (min-max {self.low:.{digits}f}-{self.high:.{digits}f}, n={self.runs})"


def summarize(values: list[float]) -> Summary:
    if not values:
        raise ValueError("no measurements to summarize")
    return Summary(len(values), statistics.median(values), min(values), max(values))


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile: an observed value, never an interpolation between two."""
    ordered = sorted(values)
    rank = max(1, round(fraction * len(ordered) + 0.5 - 1e-9))
    return ordered[min(rank, len(ordered)) - 1]


def ratio(numerator: float, denominator: float) -> str:
    return f"{numerator / denominator:.1f}x" if denominator else "n/a"
