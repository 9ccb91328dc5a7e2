"""Single-input invoke latency in LiteRT as the function sees it: one thread, warmed up, a bounded number of runs."""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np

from convert.litert_model import LiteRTModel

WARMUP_RUNS = 10
MAX_RUNS = 300
MIN_RUNS = 20
# Stop early on slow models so a conversion never spends more than a few seconds timing one mode.
TIME_BUDGET_S = 3.0


@dataclass
class Latency:
    mean_ms: float
    p50_ms: float  # the median resists the noise of a shared CPU better than the mean
    p99_ms: float
    runs: int

    def as_dict(self) -> dict:
        return asdict(self)


def measure_latency(content: bytes, one_input: dict[str, np.ndarray]) -> Latency:
    model = LiteRTModel(content, num_threads=1)
    prepared = model.prepare(one_input)
    for _ in range(WARMUP_RUNS):
        model.invoke_prepared(prepared)
    timings = []
    deadline = time.perf_counter() + TIME_BUDGET_S
    while len(timings) < MAX_RUNS and (len(timings) < MIN_RUNS or time.perf_counter() < deadline):
        start = time.perf_counter()
        model.invoke_prepared(prepared)
        timings.append(time.perf_counter() - start)
    milliseconds = np.array(timings) * 1000.0
    return Latency(mean_ms=round(float(milliseconds.mean()), 3), p50_ms=round(float(np.median(milliseconds)), 3),
                   p99_ms=round(float(np.percentile(milliseconds, 99)), 3), runs=len(timings))
