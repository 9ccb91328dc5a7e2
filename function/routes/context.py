"""What every route receives: the request plus the container's long-lived parts."""
from __future__ import annotations

from dataclasses import dataclass, field

from function.cache.base import ResultStore
from function.config import ServiceSettings
from function.events import Request
from function.log import Timings
from function.models.registry import ModelRegistry


@dataclass
class RouteContext:
    request: Request
    settings: ServiceSettings
    registry: ModelRegistry
    store: ResultStore
    timings: Timings = field(default_factory=Timings)
    log_fields: dict = field(default_factory=dict)  # route-specific facts for the request's log line
