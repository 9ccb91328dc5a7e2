"""The one path from inputs to results, for every entry point: the result cache around a task's `predict`.

Lookups first; only the misses are computed, as one batch; identical inputs in one call are computed once; a hit
skips decoding, tokenization and inference. With the cache off (RESULTS_CACHE=off) no input is digested: the
whole batch goes to the task as it came. A stored result the task would not have produced (forged, damaged
past its checksum, from another version of the code) is a miss. `routed_results` first picks the version: for an
input that names none, the one the model's rollout (function/catalog/rollout.py) chooses for it.
"""
from __future__ import annotations

from collections.abc import Sequence
from time import perf_counter
from typing import TYPE_CHECKING, Any

from function.cache.base import NullResultStore, ResultStore
from function.cache.keys import result_key
from function.cache.tiered import lookup_by_tier
from function.errors import ModelUnavailable, ServingError
from function.log import Timings
from function.records import named_tuple
from function.tasks.base import Result, Task

if TYPE_CHECKING:
    from function.catalog.registry import ModelRegistry


@named_tuple
class Prediction:
    results: list[Result]  # one per input, in input order
    cached: list[bool]
    task: Task  # the version that answered: its manifest's version is the answer's model_version
    # Per input, the version that answered it, when a canary's choice split the inputs between versions; else None.
    tasks: tuple[Task, ...] | None = None

    def with_cached_flags(self) -> list[Result]:
        if self.tasks is None:
            return [{**result, "cached": cached} for result, cached in zip(self.results, self.cached)]
        return [{**result, "cached": cached, "model_version": task.manifest.version}
                for result, cached, task in zip(self.results, self.cached, self.tasks)]

    def task_of(self, index: int) -> Task:
        """The version that answered input `index`."""
        return self.task if self.tasks is None else self.tasks[index]


def cached_results(task: Task, store: ResultStore, items: Sequence[Any], options: dict, timings: Timings,
                   log_fields: dict | None = None) -> Prediction:
    manifest = task.manifest
    if isinstance(store, NullResultStore):  # nothing will read a key: no digest, no key, every input computed
        results = task.predict(items, options, timings)
        if log_fields is not None:
            log_fields.update(model=manifest.name, model_version=manifest.version, batch=len(items), cache_hits=0,
                              cache_misses=len(items), **tokens_of(results))
        return Prediction(results=results, cached=[False] * len(items), task=task)
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
    return Prediction(results=results, cached=[key in hits for key in keys], task=task)


def routed_results(registry: "ModelRegistry", task: Task, store: ResultStore, items: Sequence[Any], options: dict,
                   timings: Timings, log_fields: dict, names_version: bool = False) -> Prediction:
    """_routed_results, counted in the container's statistics (function/catalog/statistics.py) under the version
    that answered: the request, its cache hits, the instances computed and the time of each stage."""
    start, before = perf_counter(), dict(timings.stages)
    try:
        prediction = _routed_results(registry, task, store, items, options, timings, log_fields, names_version)
    except Exception:
        registry.statistics.failed(task.manifest.name, task.manifest.version, (perf_counter() - start) * 1000.0)
        raise
    manifest = prediction.task.manifest
    registry.statistics.succeeded(manifest.name, manifest.version, (perf_counter() - start) * 1000.0,
                                  log_fields.get("cache_hits", 0), log_fields.get("cache_misses", len(items)),
                                  before, timings.stages)
    return prediction


def _routed_results(registry: "ModelRegistry", task: Task, store: ResultStore, items: Sequence[Any], options: dict,
                    timings: Timings, log_fields: dict, names_version: bool = False) -> Prediction:
    """cached_results from `task`, or, when the request names no version and the model has a weighted label (a
    canary), from the version its rollout chooses for each input: the one that input gets alone, whatever batch it
    is in (a batch whose inputs choose different versions is answered by each, and says so per input). The tensor
    protocols' answers carry one version: a tensor request is answered by the version all its inputs choose
    together. A chosen canary that fails never fails the request: the stable version answers it, and a canary that
    could not load takes no weighted request again."""
    rollout = None if names_version else registry.rollout_of(task)
    if rollout is None:
        return cached_results(task, store, items, options, timings, log_fields)
    if task is not rollout.stable or len(items) <= 1:
        choice = rollout.choose([task.input_digest(item) for item in items])
        return _answered_by(registry, rollout, task, choice, store, items, options, timings, log_fields)
    choices = [rollout.choose([task.input_digest(item)]) for item in items]
    groups: dict[str, list[int]] = {}
    for index, (label, _) in enumerate(choices):
        groups.setdefault(label, []).append(index)
    if len(groups) == 1:
        return _answered_by(registry, rollout, task, choices[0], store, items, options, timings, log_fields)
    results: list = [None] * len(items)
    cached: list = [False] * len(items)
    tasks: list = [task] * len(items)
    counts: dict[str, int] = {}
    for indexes in groups.values():
        fields: dict = {}
        part = _answered_by(registry, rollout, task, choices[indexes[0]], store, [items[i] for i in indexes],
                            options, timings, fields)
        for index, result, hit in zip(indexes, part.results, part.cached):
            results[index], cached[index], tasks[index] = result, hit, part.task
        for name in ("batch", "cache_hits", "cache_misses", "tokens"):
            if name in fields:
                counts[name] = counts.get(name, 0) + fields[name]
        log_fields.setdefault("model_labels", {})[fields.get("model_label", "stable")] = len(indexes)
        if "label_failed" in fields:
            log_fields["label_failed"] = fields["label_failed"]
    log_fields.update(model=task.manifest.name, model_version=task.manifest.version, model_label="mixed", **counts)
    return Prediction(results=results, cached=cached, task=task, tasks=tuple(tasks))


def _answered_by(registry: "ModelRegistry", rollout, task: Task, choice: tuple, store: ResultStore,
                 items: Sequence[Any], options: dict, timings: Timings, log_fields: dict) -> Prediction:
    """The Prediction from the version `choice` names, the stable one answering when that version fails."""
    label, chosen = choice
    if chosen is not rollout.stable:
        if task is not rollout.stable:  # the route asked for the model as tensors: the canary's view too
            chosen = registry.tensor_task(rollout.name, chosen.manifest.version)
        try:
            prediction = cached_results(chosen, store, items, options, timings, log_fields)
            log_fields["model_label"] = label
            return prediction
        except ServingError as exc:  # a refusal: the stable version refuses it too, or answers it
            if isinstance(exc, ModelUnavailable):
                rollout.stop(label, exc.message)
            log_fields["label_failed"] = {"label": label, "code": exc.code}
        except Exception as exc:  # noqa: BLE001  (a canary's bug is the canary's, never the request's)
            rollout.stop(label, f"{type(exc).__name__}: {exc}")
            log_fields["label_failed"] = {"label": label, "code": "internal_error"}
    log_fields["model_label"] = "stable"
    return cached_results(task, store, items, options, timings, log_fields)


def tokens_of(results: list[Result]) -> dict:
    """{"tokens": n} when every result says how many tokens its text ran (text models), else {}."""
    if not results or not isinstance(results[0], dict) or "tokens" not in results[0]:  # a tensor or image result
        return {}
    counts = [result.get("tokens") if isinstance(result, dict) else None for result in results]
    if counts and all(isinstance(count, int) and not isinstance(count, bool) for count in counts):
        return {"tokens": sum(counts)}
    return {}
