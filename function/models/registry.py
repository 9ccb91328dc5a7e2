"""Every model directory under MODEL_DIR: the task that serves each, or the reason it cannot be served.

Reading manifests and building tasks is cheap (no interpreter): it all happens at start, so a broken directory is
visible at once on GET /models and answers 503 naming its reason, instead of vanishing. Interpreters load on first
use, or all at once with `preload()`.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from function.errors import ModelNotFound, ModelUnavailable, WrongTask
from function.models.manifest import MANIFEST_FILE, ManifestError, load_manifest
from function.tasks import TASKS
from function.tasks.base import Task, TaskLimits
from function.tasks.tensor import TensorTask

log = logging.getLogger("function")


class ModelDirectoryError(ValueError):
    """MODEL_DIR cannot be served as a whole (two directories claim one model name): the init fails."""


@dataclass(frozen=True)
class UnservableModel:
    """A model directory the function cannot serve, and why."""

    name: str
    directory: Path
    reason: str

    def summary(self) -> dict:
        return {"name": self.name, "available": False, "reason": self.reason}


class ModelRegistry:
    def __init__(self, model_dir: Path, limits: TaskLimits = TaskLimits()):
        self.model_dir = Path(model_dir)
        self.tasks: dict[str, Task] = {}
        self.unservable: dict[str, UnservableModel] = {}
        self._tensor_views: dict[str, TensorTask] = {}
        claimed: dict[str, Path] = {}
        for manifest_file in sorted(self.model_dir.glob(f"*/{MANIFEST_FILE}")):
            directory = manifest_file.parent
            name, entry = open_model(directory, limits)
            if name in claimed:
                raise ModelDirectoryError(f"model directories {claimed[name]} and {directory} both serve a model "
                                          f"named {name!r}: rename one (the name comes from its sidecar.json)")
            claimed[name] = directory
            if isinstance(entry, UnservableModel):
                log.error("model cannot be served", extra={"fields": {"model": name, "problem": entry.reason}})
                self.unservable[name] = entry
            else:
                self.tasks[name] = entry

    @property
    def names(self) -> list[str]:
        return sorted({*self.tasks, *self.unservable})

    def task(self, name: str, task: str | None = None) -> Task:
        """The task serving model `name` (for `task`, when a route needs one kind). Loads nothing."""
        found = self.tasks.get(name)
        if found is None:
            if name in self.unservable:
                raise ModelUnavailable("model_unavailable", f"Model {name!r} cannot be served: "
                                       f"{self.unservable[name].reason}")
            raise ModelNotFound("model_not_found", f"There is no model named {name!r}; available: "
                                f"{', '.join(sorted(self.tasks)) or 'none'}.", param="model")
        if task is not None and found.name != task:
            raise WrongTask("wrong_model_task", f"Model {name!r} does {found.name}, not {task}.", param="model")
        return found

    def tensor_task(self, name: str) -> TensorTask:
        """Model `name` as tensors in, tensors out, whatever its task (TF Serving and Open Inference Protocol)."""
        view = self._tensor_views.get(name)
        if view is None:
            try:
                view = TensorTask.view(self.task(name))
            except ManifestError as exc:  # a tensor the protocols cannot carry (e.g. a string input)
                raise ModelUnavailable("model_unavailable", f"Model {name!r} cannot be served as tensors: {exc}") \
                    from exc
            self._tensor_views[name] = view
        return view

    def is_loaded(self, name: str) -> bool:
        return name in self.tasks and self.tasks[name].loaded

    def preload(self) -> None:
        for task in self.tasks.values():
            try:
                task.load()
            except ModelUnavailable:
                pass  # logged with its reason; the model answers 503 and the others still serve


def open_model(directory: Path, limits: TaskLimits) -> tuple[str, Task | UnservableModel]:
    """(model name, the task that serves the directory or why none can): what `convert` checks a new model
    directory with before it writes it."""
    try:
        manifest = load_manifest(directory)
    except ManifestError as exc:
        return directory.name, UnservableModel(directory.name, directory, str(exc))
    task_class = TASKS.get(manifest.task)
    if task_class is None:
        return manifest.name, UnservableModel(manifest.name, directory, f"{directory / MANIFEST_FILE}: task "
                                              f"{manifest.task!r} is not one of {', '.join(TASKS)}")
    try:
        return manifest.name, task_class(manifest, limits)
    except ManifestError as exc:
        return manifest.name, UnservableModel(manifest.name, directory, str(exc))
