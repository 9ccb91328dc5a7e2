"""Per model version, what this container has answered since it started: requests, instances computed, model runs
and the time spent in each stage, from the stage timings every request already keeps (function/log.py Timings).

One `InferenceStatistics` per container, held by its ModelRegistry and fed by `inference.routed_results`, the one
path every entry point takes to a result; Triton's statistics extension (GET /v2/models/stats) reads it. A Lambda
container lives minutes to hours and each keeps its own counts: they describe this container, not the deployment.
"""
from __future__ import annotations

import threading
import time


NS_PER_MS = 1_000_000
# Triton's duration statistics kept: each a count and a sum of nanoseconds.
DURATIONS = ("success", "fail", "compute_input", "compute_infer", "compute_output", "cache_hit", "cache_miss")
DECODE_STAGE, PREPROCESS_STAGE = "decode", "preprocess"  # bytes or values to the model's tensors
INFER_STAGE, OUTPUT_STAGE, CACHE_STAGE = "invoke", "postprocess", "cache"


class VersionStatistics:
    """Triton's model statistics for one model version, counted in place: a request's update costs ~4 us
    (python -m timeit on this class), where an immutable record rebuilt per request cost 21.

    - last_inference_ms: milliseconds since the epoch (0 before the first); inference_count: instances the model
      computed (cache hits are not); execution_count: model runs, one per request with an instance to compute;
    - <duration>_count, <duration>_ns for each of DURATIONS: success and fail are requests with their whole time
      from the cache lookup to the results (fail: a bad image, a model that cannot load); compute_* are model runs
      and the time of their decode+preprocess, interpreter and postprocess stages; cache_hit counts instances
      answered from the cache (ns: the lookups of requests all answered so), cache_miss instances computed (ns: the
      other requests' lookups and stores).
    """

    __slots__ = ("last_inference_ms", "inference_count", "execution_count",
                 *(f"{name}_{part}" for name in DURATIONS for part in ("count", "ns")))

    def __init__(self) -> None:
        for slot in self.__slots__:
            setattr(self, slot, 0)

    def duration(self, name: str) -> dict:
        return {"count": getattr(self, f"{name}_count"), "ns": getattr(self, f"{name}_ns")}


NEVER_RAN = VersionStatistics()  # what a version no request reached reads as (never written)


class InferenceStatistics:
    """(model name, model_version) -> VersionStatistics, updated under a lock (the dev server runs threads)."""

    def __init__(self) -> None:
        self._versions: dict[tuple[str, str], VersionStatistics] = {}
        self._lock = threading.Lock()

    def of(self, name: str, version: str) -> VersionStatistics:
        return self._versions.get((name, version), NEVER_RAN)

    def _counters(self, name: str, version: str) -> VersionStatistics:
        found = self._versions.get((name, version))
        if found is None:
            found = self._versions[(name, version)] = VersionStatistics()
        return found

    def succeeded(self, name: str, version: str, elapsed_ms: float, hits: int, computed: int,
                  before: dict[str, float], after: dict[str, float]) -> None:
        """One request answered: `hits` instances from the cache, `computed` by the model (0: no model run);
        `before` and `after`: the request's stage timings (Timings.stages) when it reached the model and when it
        had its results, whose differences are this request's stage times."""
        cache_ns = _ns(after.get(CACHE_STAGE, 0.0) - before.get(CACHE_STAGE, 0.0))
        now = int(time.time() * 1000)
        with self._lock:
            stats = self._counters(name, version)
            stats.last_inference_ms = now
            stats.success_count += 1
            stats.success_ns += _ns(elapsed_ms)
            stats.cache_hit_count += hits
            if not computed:
                stats.cache_hit_ns += cache_ns
                return
            stats.inference_count += computed
            stats.execution_count += 1
            stats.cache_miss_count += computed
            stats.cache_miss_ns += cache_ns
            stats.compute_input_count += 1
            stats.compute_input_ns += _ns(after.get(DECODE_STAGE, 0.0) - before.get(DECODE_STAGE, 0.0)
                                          + after.get(PREPROCESS_STAGE, 0.0) - before.get(PREPROCESS_STAGE, 0.0))
            stats.compute_infer_count += 1
            stats.compute_infer_ns += _ns(after.get(INFER_STAGE, 0.0) - before.get(INFER_STAGE, 0.0))
            stats.compute_output_count += 1
            stats.compute_output_ns += _ns(after.get(OUTPUT_STAGE, 0.0) - before.get(OUTPUT_STAGE, 0.0))

    def failed(self, name: str, version: str, elapsed_ms: float) -> None:
        with self._lock:
            stats = self._counters(name, version)
            stats.fail_count += 1
            stats.fail_ns += _ns(elapsed_ms)


def _ns(ms: float) -> int:
    return int(ms * NS_PER_MS)
