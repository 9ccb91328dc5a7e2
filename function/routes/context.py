"""What every route receives: the request plus the container's long-lived parts."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from function.cache.base import ResultStore
from function.config import ServiceSettings
from function.errors import refuse, wrong_task
from function.events import Request
from function.inference import Prediction, routed_results
from function.log import Timings
from function.catalog.registry import ModelRegistry
from function.tasks import default_kind
from function.tasks.base import Task


class RouteContext:
    __slots__ = ("request", "settings", "registry", "store", "timings", "log_fields", "path_params")

    def __init__(self, request: Request, settings: ServiceSettings, registry: ModelRegistry, store: ResultStore,
                 timings: Timings | None = None, path_params: dict[str, str] | None = None) -> None:
        self.request = request
        self.settings = settings
        self.registry = registry
        self.store = store
        self.timings = Timings() if timings is None else timings
        self.log_fields: dict = {}  # route-specific facts for the request's log line
        self.path_params = {} if path_params is None else path_params  # {name} parts of the route's path

    def task(self, body: dict, task: str, accepts: type[Task] | None = None) -> Task:
        """The task of the model the request names in "model", else the route's default model for `task`.
        The model must do `task`, or be any kind of `accepts` when given (/tokenize takes every text model)."""
        if "model" in body:
            name = body["model"]
            if not isinstance(name, str) or not name:
                raise refuse("invalid_field", "'model' must be a non-empty string.", param="model")
            found = self.registry.task(name)
            if not (isinstance(found, accepts) if accepts else found.name == task):
                raise wrong_task(name, found.name, "a text model" if accepts else task, found.answered_at)
            return found
        name, variable = self.settings.default_model(default_kind(task))
        if name not in self.registry.tasks and name not in self.registry.unservable:
            raise refuse("model_not_found", f"The request names no model and the default {task} model "
                         f"{name!r} (set by {variable}) is not served here; name one of: "
                         f"{', '.join(sorted(self.registry.tasks)) or 'none'} in 'model'.", param="model")
        return self.registry.task(name, task)

    @property
    def names_version(self) -> bool:
        """The path names a version or a label: that version answers, never the weighted choice."""
        return "version" in self.path_params or "label" in self.path_params

    def predict(self, task: Task, items: Sequence[Any], options: dict) -> Prediction:
        """The results for `items` from `task`, or from the version the model's rollout chooses for a request
        naming none (function/inference.py)."""
        return routed_results(self.registry, task, self.store, items, options, self.timings, self.log_fields,
                              self.names_version)
