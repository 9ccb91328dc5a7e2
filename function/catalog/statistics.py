"""Per model version, what this container has answered since it started: requests, instances computed, model runs
and the time spent in each stage, from the stage timings every request already keeps (function/log.py Timings).

One `InferenceStatistics` per container, held by its ModelRegistry and fed by `inference.routed_results`, the one
path every entry point takes to a result; Triton's statistics extension (GET /v2/models/stats) reads it. A Lambda
container lives minutes to hours and each keeps its own counts: they describe this container, not the deployment.
"""
from __future__ import annotations

import threading
import time

from function.records import named_tuple

NS_PER_MS = 1_000_000
INPUT_STAGES = ("decode", "preprocess")  # bytes or values to the model's tensors
INFER_STAGE, OUTPUT_STAGE, CACHE_STAGE = "invoke", "postprocess", "cache"


@named_tuple
class Duration:
    count: int = 0
    ns: int = 0

    def plus(self, count: int, ms: float) -> "Duration":
        return Duration(self.count + count, self.ns + round(ms * NS_PER_MS))


@named_tuple
class VersionStatistics:
    """Triton's model statistics, for one model version: counts and cumulative nanoseconds."""

    last_inference_ms: int = 0  # milliseconds since the epoch; 0 before the first
    inference_count: int = 0  # instances computed by the model (cache hits are not)
    execution_count: int = 0  # model runs: one per request with at least one instance to compute
    success: Duration = Duration()  # requests answered, whole time from the cache lookup to the results
    fail: Duration = Duration()  # requests whose inference failed (a bad image, a model that cannot load)
    compute_input: Duration = Duration()  # decoding and preprocessing, per model run
    compute_infer: Duration = Duration()  # the interpreter, per model run
    compute_output: Duration = Duration()  # postprocessing, per model run
    cache_hit: Duration = Duration()  # instances answered from the result cache; ns: lookups of all-hit requests
    cache_miss: Duration = Duration()  # instances computed; ns: lookups and stores of the other requests


class InferenceStatistics:
    """(model name, model_version) -> VersionStatistics, updated under a lock (the dev server runs threads)."""

    def __init__(self) -> None:
        self._versions: dict[tuple[str, str], VersionStatistics] = {}
        self._lock = threading.Lock()

    def of(self, name: str, version: str) -> VersionStatistics:
        return self._versions.get((name, version), VersionStatistics())

    def succeeded(self, name: str, version: str, elapsed_ms: float, hits: int, computed: int,
                  stages_ms: dict[str, float]) -> None:
        """One request answered: `hits` instances from the cache, `computed` by the model (0: no model run), and the
        time each stage took in it (`stages_ms`: the request's stage timings added while it was answered)."""
        with self._lock:
            now = self.of(name, version)
            ran = 1 if computed else 0
            cache_ms = stages_ms.get(CACHE_STAGE, 0.0)
            self._versions[(name, version)] = now._replace(
                last_inference_ms=int(time.time() * 1000),
                inference_count=now.inference_count + computed,
                execution_count=now.execution_count + ran,
                success=now.success.plus(1, elapsed_ms),
                compute_input=now.compute_input.plus(ran, sum(stages_ms.get(stage, 0.0) for stage in INPUT_STAGES)),
                compute_infer=now.compute_infer.plus(ran, stages_ms.get(INFER_STAGE, 0.0)),
                compute_output=now.compute_output.plus(ran, stages_ms.get(OUTPUT_STAGE, 0.0)),
                cache_hit=now.cache_hit.plus(hits, 0.0 if computed else cache_ms),
                cache_miss=now.cache_miss.plus(computed, cache_ms if computed else 0.0),
            )

    def failed(self, name: str, version: str, elapsed_ms: float) -> None:
        with self._lock:
            now = self.of(name, version)
            self._versions[(name, version)] = now._replace(fail=now.fail.plus(1, elapsed_ms))


def stage_deltas(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """The milliseconds each stage gained between two readings of a request's Timings.stages."""
    return {stage: ms - before.get(stage, 0.0) for stage, ms in after.items() if ms != before.get(stage, 0.0)}
