"""The Lambda entry point: `function.app.handler`. Thin: the adapter for the event's kind (function/entry/) reads
it and calls the container's Service, where the work lives (with the routes).

Everything here runs once per container (the init phase): settings, logging, the result store and the model
manifests. Interpreters load on first use unless PRELOAD_MODELS=all (docs/api.md: lazy measured faster), or
when Lambda initialises a SnapStart version: then every model loads before the snapshot (function/snapstart.py).
A big model (function/model/threads.py: 64 MB and more), and the model of a container serving one, always load
here, their weights packed, so that no request pays that (hundreds of ms for ResNet50: function/model/packing.py).

What this init imports and defines, every cold start pays before its first answer. So the modules it reaches keep
their records as NamedTuples made by @named_tuple (function/records.py; a dataclass costs 0.3-1.2 ms to define on
Python 3.12, twenty cost 11 ms, and typing.NamedTuple twice @named_tuple's cost), none of them imports the HTTP
client stack, tempfile (15 ms) or hashlib's OpenSSL (2 ms) for local models, and the collector stays out of the
init; tests/functional/test_init_cost.py holds all of it, and `python -X importtime -c "import function.app"`
shows the rest.
"""
from __future__ import annotations

import gc
import os

# numpy's OpenBLAS starts a pool of worker threads when it is imported, one per core beyond the first, and each one
# spins for a while waiting for work that never comes: nothing the function computes calls a multi-threaded BLAS
# routine, and a Lambda at up to 1,769 MB has one vCPU anyway. Where cores are shared, the spinning thread took CPU
# from the import itself: `import numpy` 55 ms with one thread against 96-110 ms with two, here at load average 2.
# Before the first import of numpy; a value the environment sets wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# The init allocates some 20,000 objects (numpy's, LiteRT's, the function's modules, the manifests) that live as long
# as the container, and Python's collector walked them 30-40 times while they were made, finding next to nothing:
# 3-6 ms of every cold start. So it is off until the init is done, and what the init made is then frozen out of
# every later collection (gc.freeze: a full collection in a warm request no longer walks them either).
gc.disable()
try:
    from function.cache.factory import open_result_store
    from function.config import CacheSettings, Env, ServiceSettings
    from function.entry import handle_event
    from function.log import configure
    from function.service import Service

    SETTINGS = ServiceSettings.from_env()
    CACHE_SETTINGS = CacheSettings.from_env()
    configure(SETTINGS.log_level)
    SERVICE = Service(SETTINGS, open_result_store(CACHE_SETTINGS))
    if not SETTINGS.preload_models:
        from function.model.packing import load_at_init  # noqa: PLC0415

        load_at_init(SERVICE.registry)
    if os.environ.get(Env.AWS_LAMBDA_INITIALIZATION_TYPE) == "snap-start":
        from function.snapstart import register_hooks  # noqa: PLC0415  (only the snapshotted init pays the import)

        register_hooks(SERVICE)
    gc.freeze()
finally:
    gc.enable()


def handler(event: dict, context: object) -> dict:
    return handle_event(SERVICE, event, context)
