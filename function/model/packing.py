"""The init's share of a big model's first request: the interpreter made and its weights packed before any request.

XNNPACK packs a model's weights into its own layout when the interpreter first allocates its tensors (on its first
invoke, unless allocated before): a few ms for the demo models, ~100 ms for ResNet50 (docs/deploy.md, "Memory and
threads"). A big model's ModelRunner allocates, and so packs, when it is made (function/model/runner.py); this makes
those runners during the init (function/app.py), then hands back the mapped file pages the packed copy replaced. The
small models still load on first use.
"""
from __future__ import annotations

import logging
import time

from function.errors import ModelUnavailable
from function.model.runner import release_packed
from function.model.threads import is_big

log = logging.getLogger("function")


def load_big_models(registry) -> list[str]:
    """Loads (and so packs) every served version of every big model in the registry; the names loaded. A model
    whose files are not here yet (published to S3) loads on first use, as the others do."""
    started, loaded = time.perf_counter(), []
    for name in sorted(registry.tasks):
        for task in registry.versions(name):
            model_file = task.manifest.model_file
            if model_file.is_file() and is_big(model_file, task.manifest.quantization):
                try:
                    task.load()
                except ModelUnavailable:
                    continue  # logged with its reason; it answers 503 and the others still serve
                loaded.append(name)
    if loaded:
        release_packed()
        log.info("big models loaded at init", extra={"fields": {
            "models": loaded, "timings_ms": {"total": round((time.perf_counter() - started) * 1000.0, 3)}}})
    return loaded
