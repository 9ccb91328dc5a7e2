"""One fresh process of `convert --compare`'s runtime measurement: the function's own init and first answer for one
converted model, then warm answers; prints one JSON line (convert/runtime_measure.py starts it).

`python -m convert.runtime_worker NAME INPUTS.npz STARTED`, with MODEL_DIR holding only that model and
MODEL_THREADS the thread count. It imports `function.app` as Lambda's runtime does (its init loads the container's
only model and packs its weights), then answers INPUTS (role -> batch-1 array) through the model's runner: cold start
is STARTED (the parent's time.time() at the spawn) to that first answer, first invoke what the first answer took
after the init, warm the median of the answers after it. Never TensorFlow: the report says whether the
process saw it imported, and it never does.
"""
from __future__ import annotations

import json
import resource
import sys
import time

WARM_MIN_RUNS = 5
WARM_MAX_RUNS = 50
WARM_BUDGET_S = 2.0  # per process: a big model's warm answers stop after about this long (never fewer than 5)


def peak_rss_mb() -> float:
    """This process's peak resident memory: VmHWM, the high-water mark of its own address space. Not ru_maxrss, which
    keeps the peak of the process it was spawned from (a converter holding TensorFlow) across the exec."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # no /proc (macOS): bytes there, KB on Linux
    return peak / (1024 * 1024 if sys.platform == "darwin" else 1024)


def measure(name: str, inputs_path: str, started: float) -> dict:
    import numpy as np  # noqa: PLC0415  (after the spawn, as the function's own init imports it)

    import function.app  # noqa: PLC0415  (the init is what a cold start pays: timed from the spawn)

    task = function.app.SERVICE.registry.task(name)
    with np.load(inputs_path) as stored:
        inputs = {role: stored[role] for role in stored.files}
    first_began = time.perf_counter()
    task.runner().run(inputs)
    first_ms = (time.perf_counter() - first_began) * 1e3
    cold_s = time.time() - started
    runner, warm = task.runner(), []
    deadline = time.perf_counter() + WARM_BUDGET_S
    while len(warm) < WARM_MAX_RUNS and (len(warm) < WARM_MIN_RUNS or time.perf_counter() < deadline):
        began = time.perf_counter()
        runner.run(inputs)
        warm.append((time.perf_counter() - began) * 1e3)
    return {"cold_start_s": cold_s, "first_invoke_ms": first_ms, "warm_p50_ms": float(np.median(warm)),
            "warm_runs": len(warm), "threads": runner.num_threads,
            "peak_rss_mb": peak_rss_mb(),
            "tensorflow_imported": "tensorflow" in sys.modules}


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1], sys.argv[2], float(sys.argv[3]))))
