"""The shared shape of /classify and /sentiment: cache lookup first, compute only the misses as one batch."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from function.cache.keys import result_key
from function.events import Response, json_response
from function.models.manifest import Manifest
from function.routes.context import RouteContext


def answer_with_cache(
    ctx: RouteContext,
    manifest: Manifest,
    digests: Sequence[str],
    options: dict,
    compute: Callable[[list[int]], list[dict]],
) -> Response:
    """digests: one per input, in input order. compute(indexes of inputs to run) -> one result per index.

    Identical inputs in one request are computed once; hits skip decoding and inference entirely."""
    keys = [result_key(manifest.model_sha256, manifest.task, digest, options) for digest in digests]
    first_index: dict[str, int] = {}  # each distinct key -> its first input, in input order
    for index, key in enumerate(keys):
        first_index.setdefault(key, index)
    with ctx.timings.stage("cache"):
        hits = ctx.store.get_many(list(first_index))
    missing = [key for key in first_index if key not in hits]
    fresh: dict[str, dict] = {}
    if missing:
        computed = compute([first_index[key] for key in missing])
        fresh = dict(zip(missing, computed))
        with ctx.timings.stage("cache"):
            ctx.store.put_many(fresh)
    ctx.log_fields.update(model=manifest.name, batch=len(keys), cache_hits=len(hits), cache_misses=len(missing))
    predictions = [{**(hits[key] if key in hits else fresh[key]), "cached": key in hits} for key in keys]
    return json_response(200, {"model": manifest.name, "model_version": manifest.model_sha256,
                               "predictions": predictions})
