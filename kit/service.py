"""The function's core as the tests and benchmarks call it in process: a Service on a model registry, with an empty
in-memory result cache, so `cached` flags are predictable."""
from __future__ import annotations

from function.cache.memory import MemoryResultStore
from function.catalog.registry import ModelRegistry
from function.config import ServiceSettings
from function.service import Service


def make_service(registry: ModelRegistry, **overrides) -> Service:
    """`overrides`: ServiceSettings fields, as the environment would set them."""
    settings = ServiceSettings.from_env({}, model_dir=registry.model_dir, **overrides)
    return Service(settings, MemoryResultStore(max_items=1000, ttl_seconds=3600), registry)
