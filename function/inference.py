"""The one path from inputs to results, for every entry point: the result cache around a task's `predict`.

Lookups first; only the misses are computed, as one batch; identical inputs in one call are computed once; a hit
skips decoding, tokenization and inference. A stored result the task would not have produced (forged, damaged
past its checksum, from another version of the code) is a miss.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from function.cache.base import ResultStore
from function.cache.keys import result_key
from function.log import Timings
from function.tasks.base import Result, Task


@dataclass(frozen=True)
class Prediction:
    results: list[Result]  # one per input, in input order
    cached: list[bool]

    def with_cached_flags(self) -> list[Result]:
        return [{**result, "cached": cached} for result, cached in zip(self.results, self.cached)]


def cached_results(task: Task, store: ResultStore, items: Sequence[Any], options: dict, timings: Timings,
                   log_fields: dict | None = None) -> Prediction:
    manifest = task.manifest
    cache_options = task.cache_options(options)
    keys = [result_key(manifest.version, task.name, task.input_digest(item), cache_options) for item in items]
    first_index: dict[str, int] = {}  # each distinct key -> its first input, in input order
    for index, key in enumerate(keys):
        first_index.setdefault(key, index)
    with timings.stage("cache"):
        stored = store.get_many(list(first_index))
    hits = {key: result for key, result in stored.items() if task.is_valid_result(result, options)}
    missing = [key for key in first_index if key not in hits]
    fresh: dict[str, Result] = {}
    if missing:
        computed = task.predict(task.gather(items, [first_index[key] for key in missing]), options, timings)
        fresh = dict(zip(missing, computed))
        with timings.stage("cache"):
            store.put_many(fresh, manifest.version)
    if log_fields is not None:
        log_fields.update(model=manifest.name, batch=len(keys), cache_hits=len(hits), cache_misses=len(missing))
    return Prediction(results=[hits[key] if key in hits else fresh[key] for key in keys],
                      cached=[key in hits for key in keys])
