"""Every model a source lists (function/catalog/source.py): the task that serves each, or the reason it cannot be
served.

Reading manifests and building tasks is cheap (no interpreter, no model file): it all happens at start, so a broken
model is visible at once on GET /models and answers 503 naming its reason, instead of vanishing. Interpreters load
(and a published model's files download) on first use, or all at once with `preload()`.

A source that can change (S3 with MODEL_REFRESH_SECONDS) is checked in the background: `refresh()`, called by
every request, only starts a check when one is due and never waits for it. The check takes in a new listing
version by version: a model whose version changed gets a new task, installed only once every file of the new
version is downloaded, verified and loaded, so its cache keys follow; the others keep their loaded interpreters.
Whatever is wrong with a new version (its manifest, a file's sha256, S3 going away midway), the version that was
serving keeps serving, the reason is logged and GET /models shows it under that model's `refresh`; the next due
check tries that listing again.
"""
from __future__ import annotations

import http.client
import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from function.catalog.source import ListedModel, ModelDirectory, ModelSource
from function.config import TaskLimits
from function.errors import ModelUnavailable, quoted, refuse, wrong_task
from function.model.files import ModelFilesError
from function.model.manifest import MANIFEST_FILE, Manifest, ManifestError, load_manifest
from function.tasks import TASKS
from function.tasks.base import Task
from function.tasks.tensor import TensorTask

log = logging.getLogger("function")


class ModelDirectoryError(ValueError):
    """The models cannot be served as a whole (two directories claim one model name): the init fails."""


@dataclass(frozen=True)
class UnservableModel:
    """A model the function cannot serve, and why."""

    name: str
    directory: Path
    reason: str

    def summary(self) -> dict:
        return {"name": self.name, "available": False, "reason": self.reason}


class ModelRegistry:
    def __init__(self, source: ModelSource | Path | str, limits: TaskLimits = TaskLimits()):
        self.source = source if isinstance(source, ModelSource) else ModelDirectory(Path(source))
        self.limits = limits
        self.tasks: dict[str, Task] = {}
        self.unservable: dict[str, UnservableModel] = {}
        self._tensor_views: dict[str, TensorTask] = {}
        # Per model serving an older version than its source lists: {"version": listed, "problem": why not yet}.
        self.pending: dict[str, dict] = {}
        self._unsettled: list[ListedModel] | None = None  # a listing not wholly taken in: tried again when due
        self._refresh_lock = threading.Lock()
        self._refresher: threading.Thread | None = None
        self._install(self.source.models())

    @property
    def model_dir(self) -> Path:
        return self.source.directory

    def _install(self, listing: list[ListedModel]) -> None:
        """The listing at start: every model's task, built but not loaded."""
        self._check_names(listing)
        tasks: dict[str, Task] = {}
        unservable: dict[str, UnservableModel] = {}
        for listed in listing:
            entry = task_for(listed, self.limits)
            if isinstance(entry, UnservableModel):
                log.error("model cannot be served", extra={"fields": {"model": listed.name, "problem": entry.reason}})
                unservable[listed.name] = entry
            else:
                tasks[listed.name] = entry
        self._swap(tasks, unservable, {})

    def _swap(self, tasks: dict[str, Task], unservable: dict[str, UnservableModel], pending: dict[str, dict]) -> None:
        # Whole dictionaries swapped at once: a request in flight keeps the task it already holds.
        self.tasks, self.unservable, self.pending, self._tensor_views = tasks, unservable, pending, {}
        self.source.serving({task.manifest.directory for task in tasks.values()})

    def _current_task(self, listed: ListedModel) -> Task | None:
        """The task already serving this very version (its interpreter stays loaded), if any."""
        current = self.tasks.get(listed.name)
        if current is not None and isinstance(listed.manifest, Manifest) and (
                current.manifest.version, current.manifest.directory) == (listed.manifest.version,
                                                                          listed.manifest.directory):
            return current
        return None

    def refresh(self) -> None:
        """Called by every request: starts a check of the source in the background when one is due (a cheap no-op
        otherwise). Never waits for S3: the request goes on with the models served now."""
        if not self.source.due():
            return
        with self._refresh_lock:
            if self._refresher is not None and self._refresher.is_alive():
                return
            self._refresher = threading.Thread(target=self.refresh_now, name="model-refresh", daemon=True)
            self._refresher.start()

    def settle(self, timeout: float | None = None) -> None:
        """Waits for a background check in progress (tests, benchmarks)."""
        refresher = self._refresher
        if refresher is not None:
            refresher.join(timeout)

    def refresh_now(self) -> None:
        """One check, here and now: the source's new listing, or the last one not wholly taken in, when due."""
        listing = self.source.poll() or self._unsettled
        if listing is None:
            return
        before = {name: task.manifest.version for name, task in self.tasks.items()}
        try:
            self._take_in(listing)
        except ModelDirectoryError as exc:
            log.error("new model listing refused; serving the previous one", extra={"fields": {"problem": str(exc)}})
            return
        after = {name: task.manifest.version for name, task in self.tasks.items()}
        changed = {name: {"from": before.get(name), "to": version} for name, version in after.items()
                   if before.get(name) != version}
        changed.update({name: {"from": version, "to": None} for name, version in before.items() if name not in after})
        if changed:
            log.info("models changed", extra={"fields": {"source": self.source.description, "changes": changed}})

    def _take_in(self, listing: list[ListedModel]) -> None:
        """A refresh's listing, model by model: a new version replaces the one serving only once it is loaded."""
        self._check_names(listing)
        tasks: dict[str, Task] = {}
        unservable: dict[str, UnservableModel] = {}
        pending: dict[str, dict] = {}
        for listed in listing:
            current = self.tasks.get(listed.name)
            entry = self._current_task(listed) or self._loaded_task(listed)
            if isinstance(entry, Task):
                tasks[listed.name] = entry
                continue
            fields = {"model": listed.name, "version": listed_version(listed), "problem": entry.reason}
            if current is None:
                log.error("model cannot be served", extra={"fields": fields})
                unservable[listed.name] = entry
            else:
                log.error("new model version refused; serving the current one",
                          extra={"fields": {**fields, "serving": current.manifest.version}})
                tasks[listed.name] = current
                pending[listed.name] = {"version": listed_version(listed), "problem": entry.reason}
        self._unsettled = listing if pending or unservable else None
        self._swap(tasks, unservable, pending)

    def _loaded_task(self, listed: ListedModel) -> Task | UnservableModel:
        """The task of a version not served yet, with its files downloaded and verified and its parts loaded."""
        entry = task_for(listed, self.limits)
        if isinstance(entry, UnservableModel):
            return entry
        try:
            self.source.prepare(listed)
            entry.load()
        except ModelUnavailable as exc:
            return UnservableModel(listed.name, listed.directory, exc.message)
        except (ModelFilesError, OSError, http.client.HTTPException) as exc:
            return UnservableModel(listed.name, listed.directory, f"{type(exc).__name__}: {exc}")
        return entry

    def _check_names(self, listing: list[ListedModel]) -> None:
        claimed: dict[str, Path] = {}
        for listed in listing:
            if listed.name in claimed:
                raise ModelDirectoryError(f"model directories {claimed[listed.name]} and {listed.directory} both "
                                          f"serve a model named {listed.name!r}: rename one (the name comes from "
                                          "its sidecar.json)")
            claimed[listed.name] = listed.directory

    @property
    def names(self) -> list[str]:
        return sorted({*self.tasks, *self.unservable})

    def task(self, name: str, task: str | None = None) -> Task:
        """The task serving model `name` (for `task`, when a route needs one kind). Loads nothing."""
        found = self.tasks.get(name)
        if found is None:
            if name in self.unservable:
                raise refuse("model_unavailable", f"Model {quoted(name)} cannot be served: "
                             f"{self.unservable[name].reason}")
            raise refuse("model_not_found", f"There is no model named {quoted(name)}; available: "
                         f"{', '.join(sorted(self.tasks)) or 'none'}.", param="model")
        if task is not None and found.name != task:
            raise wrong_task(name, found.name, task)
        return found

    def tensor_task(self, name: str) -> TensorTask:
        """Model `name` as tensors in, tensors out, whatever its task (TF Serving and Open Inference Protocol)."""
        view = self._tensor_views.get(name)
        if view is None:
            try:
                view = TensorTask.view(self.task(name))
            except ManifestError as exc:  # a tensor the protocols cannot carry (e.g. a string input)
                raise refuse("model_unavailable", f"Model {quoted(name)} cannot be served as tensors: {exc}") \
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


def listed_version(listed: ListedModel) -> str:
    """The version a listing names: its manifest's, or its directory's name when the manifest cannot be read (a
    published model's directory is named after its version)."""
    return listed.manifest.version if isinstance(listed.manifest, Manifest) else listed.directory.name


def task_for(listed: ListedModel, limits: TaskLimits) -> Task | UnservableModel:
    """The task that serves a listed model, or why none can."""
    manifest, directory = listed.manifest, listed.directory
    if isinstance(manifest, ManifestError):
        return UnservableModel(listed.name, directory, str(manifest))
    task_class = TASKS.get(manifest.task)
    if task_class is None:
        return UnservableModel(manifest.name, directory, f"{directory / MANIFEST_FILE}: task {manifest.task!r} is "
                               f"not one of {', '.join(TASKS)}")
    try:
        return task_class(manifest, limits, listed.files)
    except ManifestError as exc:
        return UnservableModel(manifest.name, directory, str(exc))


def open_model(directory: Path, limits: TaskLimits) -> tuple[str, Task | UnservableModel]:
    """(model name, the task that serves the directory or why none can): what `convert` checks a new model
    directory with before it writes it."""
    try:
        manifest = load_manifest(directory)
        listed = ListedModel(manifest.name, directory, manifest)
    except ManifestError as exc:
        listed = ListedModel(directory.name, directory, exc)
    return listed.name, task_for(listed, limits)
