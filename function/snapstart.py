"""SnapStart's two hooks (serverless.yml's snapStart param; docs/deploy.md, "SnapStart").

Lambda initialises a published version once, snapshots its memory and starts later cold starts from copies of that
snapshot. So the init does the expensive part once: every model loaded and invoked once (its tensors allocated,
its weights packed). Whatever one copy must not share with another is closed before the snapshot (sockets, SQLite
connections) or renewed after the restore (random state, credentials), and the first request's log line says
`cold_start: "restore"`.

Imported only when AWS_LAMBDA_INITIALIZATION_TYPE is snap-start (function/app.py): an ordinary cold start neither
imports snapshot_restore_py (which the Lambda base image ships with the runtime client) nor runs any of this.
"""
from __future__ import annotations

import logging
import random
import time

import numpy as np
from snapshot_restore_py import register_after_restore, register_before_snapshot

from function.errors import ServingError
from function.model.runner import release_packed
from function.service import Service

log = logging.getLogger("function")


def before_snapshot(service: Service) -> None:
    """Every model loaded and invoked once, its mapped file handed back, then every connection closed."""
    started = time.perf_counter()
    first_invoke_ms, models = {}, []
    service.registry.preload()
    for name, task in sorted(service.registry.tasks.items()):
        if not task.loaded:
            continue
        models.append(name)
        invoked = time.perf_counter()
        try:  # packed when it loaded; its first invoke still sizes the graph and touches its arena (~1-2 ms)
            task.runner().warm_up()
        except ServingError:  # a model that cannot run on one zero instance: its first request invokes it
            continue
        first_invoke_ms[name] = round((time.perf_counter() - invoked) * 1000.0, 3)
    release_packed()  # the mapped files' pages, now copied into XNNPACK's packed weights, stay out of the snapshot
    service.close_connections()
    log.info("before snapshot", extra={"fields": {
        "models": models, "first_invoke_ms": first_invoke_ms,
        "timings_ms": {"total": round((time.perf_counter() - started) * 1000.0, 3)}}})


def after_restore(service: Service) -> None:
    """Each restored copy draws its own random numbers and signs with the credentials it was given."""
    # Every copy of one snapshot would otherwise draw the same sequence (retry jitter, anything sampling).
    # uuid.uuid4 reads os.urandom on each call: it has no state to renew.
    random.seed()
    np.random.seed()
    service.restored()
    log.info("after restore", extra={"fields": {"cold_start": "restore"}})


def register_hooks(service: Service) -> None:
    # The runtime client runs the before-snapshot hooks, asks the Runtime API for restore/next (the snapshot is
    # taken there), then runs the after-restore hooks.
    register_before_snapshot(before_snapshot, service)
    register_after_restore(after_restore, service)
