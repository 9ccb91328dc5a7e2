"""Single-input invoke latency in LiteRT as the function sees it: one thread, warmed up, a bounded number of runs.

Several models are timed in interleaved rounds, so a burst of load from other processes on a shared machine
lands on all of them alike instead of on whichever mode happened to be measured at that moment.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np

from convert.litert_model import LiteRTModel
from convert.progress import progress

WARMUP_RUNS = 10
ROUNDS = 5
MAX_RUNS = 300  # per model, over all rounds
MIN_RUNS = 20  # per model, even when the time budget is spent
# Per model: stop early on slow models so timing never takes more than a few seconds per mode.
TIME_BUDGET_S = 3.0


@dataclass
class Latency:
    mean_ms: float
    p50_ms: float  # the median resists the noise of a shared CPU better than the mean
    p99_ms: float
    runs: int

    def as_dict(self) -> dict:
        return asdict(self)


def _summary(seconds: list[float]) -> Latency:
    milliseconds = np.array(seconds) * 1000.0
    return Latency(mean_ms=round(float(milliseconds.mean()), 3), p50_ms=round(float(np.median(milliseconds)), 3),
                   p99_ms=round(float(np.percentile(milliseconds, 99)), 3), runs=len(seconds))


def measure_latencies(contents: dict[str, bytes], one_input: dict[str, np.ndarray]) -> dict[str, Latency]:
    """Latency of each model (by key) on the same single input."""
    models = {key: LiteRTModel(content, num_threads=1) for key, content in contents.items()}
    prepared = {key: model.prepare(one_input) for key, model in models.items()}
    for key, model in models.items():
        for _ in range(WARMUP_RUNS):
            model.invoke_prepared(prepared[key])
    timings: dict[str, list[float]] = {key: [] for key in models}
    with progress().step("timing", total=ROUNDS * len(models)) as step:
        for key, model in ((key, model) for _ in range(ROUNDS) for key, model in models.items()):
            runs = timings[key]
            round_start = len(runs)
            deadline = time.perf_counter() + TIME_BUDGET_S / ROUNDS
            while len(runs) - round_start < MAX_RUNS // ROUNDS and (
                    len(runs) - round_start < MIN_RUNS // ROUNDS or time.perf_counter() < deadline):
                start = time.perf_counter()
                model.invoke_prepared(prepared[key])
                runs.append(time.perf_counter() - start)
            step.advance()
    return {key: _summary(runs) for key, runs in timings.items()}
