"""The Lambda memory size and mode `convert --compare` recommends, from what it measured (convert/runtime_measure.py):
the cheapest request, as AWS Lambda Power Tuning's cost strategy finds it, but derived from one machine's numbers
instead of invoking the function at each size.

The model of a request, stated in every report (ASSUMPTIONS):
- Lambda gives CPU in proportion to memory: 1 vCPU at 1,769 MB, up to 6 at 10,240 MB (function/model/threads.py).
  N threads on fewer than N vCPUs take N / vCPUs times their time: below 1,769 MB a request on one thread gets that
  fraction of one CPU, so it takes 1,769 / MB times its 1-thread time.
- The function runs a model over the thread line (function/model/threads.py, is_big) on one thread per vCPU the
  memory buys, any other model on one. The warm time at 1 and 2 threads is measured; at more it is derived from the
  two by Amdahl's law (the share of the work that ran in parallel at 2 threads runs in parallel at N).
- A request is billed its duration rounded up to the millisecond, times the memory in GB, at Lambda's x86 or arm64
  price per GB-second, plus the price of a request. Warm requests only: a cold start is rare at steady traffic.
- The memory must hold the measured peak RSS (the function's init and answers, in a fresh process) with 20% headroom
  and 40 MB for the runtime interface client and a request's buffers.

The size recommended is the cheapest per request; sizes within 2% of the cheapest cost count as equally cheap (the
measurement cannot tell them apart) and the fastest of those by billed milliseconds is taken (then the smallest):
the same bill for a faster answer, since a CPU-bound model costs about the same at every size up to 1,769 MB and
answers 1,769 / MB times slower below it, while an answer under a millisecond is billed one at any size. The mode
recommended is, among the modes that passed the gate, the one whose own recommended size is cheapest, the same 2%
counting as a tie that the faster cold start breaks.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from function.model.threads import LAMBDA_MAX_VCPUS, LAMBDA_MB_PER_VCPU, lambda_vcpus

# The sizes looked at: Power Tuning's usual ones, and each whole number of vCPUs (1,769 MB each) up to Lambda's most.
MEMORY_SIZES_MB = (128, 256, 512, 1024, 1536, 1769, 2048, 3008, 3538, 4096, 5307, 7076, 8845, 10240)
HEADROOM = 1.2
RUNTIME_MB = 40
TIE = 0.02  # costs within 2% of the cheapest are equal for the choice
# Lambda's list prices, USD (us-east-1, the first pricing tier): per GB-second by architecture, per request.
GB_SECOND_USD = {"x86_64": 0.0000166667, "arm64": 0.0000133334}
REQUEST_USD = 0.20 / 1_000_000

ASSUMPTIONS = (
    f"CPU in proportion to memory: 1 vCPU at {LAMBDA_MB_PER_VCPU:,} MB, up to {LAMBDA_MAX_VCPUS} at 10,240 MB; below "
    f"{LAMBDA_MB_PER_VCPU:,} MB a request takes {LAMBDA_MB_PER_VCPU:,} / MB times its 1-thread time (N threads on "
    "fewer vCPUs: N / vCPUs times their time)",
    "threads: one per vCPU for a model over the thread line (function/model/threads.py), else one; beyond 2 threads "
    "the warm time is derived from the 1- and 2-thread times by Amdahl's law",
    "cost per warm request: duration rounded up to 1 ms x memory in GB x the price per GB-second, plus the price of a "
    "request (Lambda list prices, us-east-1)",
    f"memory must hold the peak RSS with {HEADROOM - 1:.0%} headroom plus {RUNTIME_MB} MB for the runtime client and "
    "a request's buffers",
    f"costs within {TIE:.0%} of the cheapest are a tie: the fewest billed milliseconds win it (then the smaller "
    "memory); between modes, the faster cold start",
)


@dataclass(frozen=True)
class ModeRuntime:
    """What was measured of one mode, in fresh processes running the function."""
    mode: str
    passed: bool  # the fidelity gate
    cold_start_s: float
    first_invoke_ms: float
    warm_1_thread_ms: float
    warm_2_threads_ms: float
    peak_rss_mb: float
    over_thread_line: bool  # function/model/threads.py is_big: the function gives it one thread per vCPU


@dataclass(frozen=True)
class Candidate:
    memory_mb: int
    threads: int
    fits: bool
    duration_ms: float
    cost_per_million_usd: float


@dataclass(frozen=True)
class Advice:
    mode: str | None  # None: no mode passed the gate, or none fits in Lambda's memory
    memory_mb: int | None
    threads: int | None
    duration_ms: float | None
    cost_per_million_usd: float | None
    reason: str
    candidates: dict[str, list[Candidate]]  # mode -> every size looked at
    per_mode: dict[str, Candidate | None]  # mode -> its cheapest size that fits (None: none does)


def parallel_share(one_ms: float, two_ms: float) -> float:
    """The share of the work that ran in parallel at 2 threads (Amdahl's law: two = one * (1 - p + p / 2))."""
    return min(1.0, max(0.0, 2.0 * (1.0 - two_ms / one_ms)))


def warm_ms(runtime: ModeRuntime, threads: int) -> float:
    """The warm time at `threads`: measured at 1 and 2, derived beyond."""
    if threads == 1:
        return runtime.warm_1_thread_ms
    if threads == 2:
        return runtime.warm_2_threads_ms
    share = parallel_share(runtime.warm_1_thread_ms, runtime.warm_2_threads_ms)
    return runtime.warm_1_thread_ms * (1.0 - share + share / threads)


def needed_mb(peak_rss_mb: float) -> float:
    return peak_rss_mb * HEADROOM + RUNTIME_MB


def candidate(runtime: ModeRuntime, memory_mb: int, architecture: str = "x86_64") -> Candidate:
    threads = lambda_vcpus(memory_mb) if runtime.over_thread_line else 1
    cpu_share = min(float(LAMBDA_MAX_VCPUS), memory_mb / LAMBDA_MB_PER_VCPU)
    # N threads sharing less than N CPUs take N / share times as long (below 1,769 MB: one thread, 1,769 / MB).
    duration = warm_ms(runtime, threads) * max(1.0, threads / cpu_share)
    billed_s = math.ceil(duration) / 1000.0
    cost = memory_mb / 1024 * billed_s * GB_SECOND_USD[architecture] + REQUEST_USD
    return Candidate(memory_mb, threads, memory_mb >= needed_mb(runtime.peak_rss_mb), round(duration, 3),
                     round(cost * 1_000_000, 4))


def cheapest(candidates: list[Candidate]) -> Candidate | None:
    """The cheapest size that fits; of those within TIE of it, the fewest billed milliseconds (then the smallest)."""
    fitting = [found for found in candidates if found.fits]
    if not fitting:
        return None
    lowest = min(found.cost_per_million_usd for found in fitting)
    return min((found for found in fitting if found.cost_per_million_usd <= lowest * (1 + TIE)),
               key=lambda found: (math.ceil(found.duration_ms), found.memory_mb))


def advise(runtimes: list[ModeRuntime], architecture: str = "x86_64") -> Advice:
    candidates = {runtime.mode: [candidate(runtime, size, architecture) for size in MEMORY_SIZES_MB]
                  for runtime in runtimes}
    per_mode = {mode: cheapest(found) for mode, found in candidates.items()}
    passed = {runtime.mode: runtime for runtime in runtimes if runtime.passed}
    if not passed:
        return Advice(None, None, None, None, None, "no mode passed the fidelity gate", candidates, per_mode)
    fitting = {mode: per_mode[mode] for mode in passed if per_mode[mode] is not None}
    if not fitting:
        return Advice(None, None, None, None, None, f"no mode that passed fits in {MEMORY_SIZES_MB[-1]:,} MB",
                      candidates, per_mode)
    lowest = min(found.cost_per_million_usd for found in fitting.values())
    tied = [mode for mode, found in fitting.items() if found.cost_per_million_usd <= lowest * (1 + TIE)]
    mode = min(tied, key=lambda name: passed[name].cold_start_s)
    chosen = fitting[mode]
    others = [name for name in tied if name != mode]
    reason = (f"{mode} at {chosen.memory_mb:,} MB ({chosen.threads} thread{'s' if chosen.threads > 1 else ''}): the "
              f"cheapest warm request among the modes that passed, ${chosen.cost_per_million_usd:.2f} per million"
              + (f"; as cheap as {', '.join(others)} (within {TIE:.0%}), with the fastest cold start "
                 f"({passed[mode].cold_start_s:.2f} s)" if others else ""))
    return Advice(mode, chosen.memory_mb, chosen.threads, chosen.duration_ms, chosen.cost_per_million_usd, reason,
                  candidates, per_mode)
