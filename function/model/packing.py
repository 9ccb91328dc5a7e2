"""The init's share of the first request: the models a request will surely need loaded, their weights packed.

XNNPACK packs a model's weights into its own layout when the interpreter first allocates its tensors, which a
ModelRunner does when it is made (function/model/runner.py): a few ms for the demo models, ~100 ms for ResNet50
(docs/deploy.md, "Memory and threads"). This makes, during the init (function/app.py), the runners of

- every big model (function/model/threads.py): hundreds of ms that a request should not pay;
- the one model of a container that serves one: its first request needs it anyway, so loading it at init costs a
  cold start nothing and a provisioned or kept-warm container's first request nothing at all.

Then it hands back the mapped file pages the packed copies replaced. The small models of a container serving several
still load on first use: an image request need not wait for a text model (docs/api.md, PRELOAD_MODELS).
"""
from __future__ import annotations

import logging
import time

from function.errors import ModelUnavailable
from function.model.threads import is_big

log = logging.getLogger("function")


def load_at_init(registry) -> list[str]:
    """Loads (and so packs) every served version of every big model in the registry, or of its only model; the names
    loaded. A model whose files are not here yet (published to S3) loads on first use, as the others do."""
    started, loaded = time.perf_counter(), []
    only_one = len(registry.tasks) == 1
    for name in sorted(registry.tasks):
        for task in registry.versions(name):
            model_file = task.manifest.model_file
            if model_file.is_file() and (only_one or is_big(model_file, task.manifest.quantization)):
                try:
                    task.load()
                except ModelUnavailable:
                    continue  # logged with its reason; it answers 503 and the others still serve
                task.runner().hand_back_file_pages()
                loaded.append(name)
    if loaded:
        log.info("models loaded at init", extra={"fields": {
            "models": loaded, "timings_ms": {"total": round((time.perf_counter() - started) * 1000.0, 3)}}})
    return loaded
