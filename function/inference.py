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
from function.cache.tiered import lookup_by_tier
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
        by_tier = lookup_by_tier(store, list(first_index))
    hits = {key: result for found in by_tier.values() for key, result in found.items()
            if task.is_valid_result(result, options)}
    hits_by_tier = {f"cache_hits_{tier}": sum(key in hits for key in found) for tier, found in by_tier.items()}
    missing = [key for key in first_index if key not in hits]
    fresh: dict[str, Result] = {}
    if missing:
        computed = task.predict(task.gather(items, [first_index[key] for key in missing]), options, timings)
        fresh = dict(zip(missing, computed))
        with timings.stage("cache"):
            store.put_many(fresh, manifest.version)
    results = [hits[key] if key in hits else fresh[key] for key in keys]
    if log_fields is not None:
        log_fields.update(model=manifest.name, model_version=manifest.version, batch=len(keys),
                          cache_hits=len(hits), cache_misses=len(missing), **hits_by_tier, **tokens_of(results))
    return Prediction(results=results, cached=[key in hits for key in keys])


def tokens_of(results: list[Result]) -> dict:
    """{"tokens": n} when every result says how many tokens its text ran (text models), else {}."""
    counts = [result.get("tokens") if isinstance(result, dict) else None for result in results]
    if counts and all(isinstance(count, int) and not isinstance(count, bool) for count in counts):
        return {"tokens": sum(counts)}
    return {}
