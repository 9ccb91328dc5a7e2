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
A model's labelled versions (an S3 index's canary) are tasks too, kept in its Rollout (function/catalog/rollout.py);
`task(name)` is always the stable one.
"""
from __future__ import annotations

import logging
import threading
from pathlib import Path

from function.catalog.rollout import STABLE, Rollout
from function.catalog.source import ListedModel, ModelDirectory, ModelSource
from function.catalog.statistics import InferenceStatistics
from function.config import TaskLimits
from function.errors import ModelUnavailable, quoted, refuse, wrong_task
from function.model.files import ModelFilesError
from function.model.manifest import MANIFEST_FILE, Manifest, ManifestError, load_manifest
from function.records import named_tuple
from function.tasks import TASKS
from function.tasks.base import Task
from function.tasks.tensor import TensorTask

log = logging.getLogger("function")


# The `code` GET /models gives an unservable model: two directories claim its name, or anything else (its
# manifest, its task, its files), which the reason names.
DUPLICATE_NAME = "duplicate_model_name"
UNSERVABLE = "model_unavailable"


@named_tuple
class UnservableModel:
    """A model the function cannot serve, and why."""

    name: str
    directory: Path
    reason: str
    code: str = UNSERVABLE

    def summary(self) -> dict:
        return {"name": self.name, "available": False, "code": self.code, "reason": self.reason}


class ModelRegistry:
    def __init__(self, source: ModelSource | Path | str, limits: TaskLimits = TaskLimits()):
        self.source = source if isinstance(source, ModelSource) else ModelDirectory(Path(source))
        self.limits = limits
        self.tasks: dict[str, Task] = {}
        self.unservable: dict[str, UnservableModel] = {}
        self.rollouts: dict[str, Rollout] = {}  # models with labelled versions beside the stable one
        self._tensor_views: dict[tuple[str, str], TensorTask] = {}  # (name, version) -> the version's tensor view
        # Per model serving an older version than its source lists: {"version": listed, "problem": why not yet}.
        self.pending: dict[str, dict] = {}
        self.statistics = InferenceStatistics()  # per model version, what this container answered (Triton's stats)
        self._unsettled: list[ListedModel] | None = None  # a listing not wholly taken in: tried again when due
        self._refresh_lock = threading.Lock()
        self._refresher: threading.Thread | None = None
        self._install(self.source.models())

    @property
    def model_dir(self) -> Path:
        return self.source.directory

    def _install(self, listing: list[ListedModel]) -> None:
        """The listing at start: every model's task, built but not loaded."""
        listing, unservable = claimed_once(listing)
        tasks: dict[str, Task] = {}
        rollouts: dict[str, Rollout] = {}
        for listed in listing:
            entry = task_for(listed, self.limits)
            if isinstance(entry, UnservableModel):
                log.error("model cannot be served", extra={"fields": {"model": listed.name, "problem": entry.reason}})
                unservable[listed.name] = entry
            else:
                tasks[listed.name] = entry
                if listed.labelled:
                    rollouts[listed.name] = self._rollout(entry, listed, self._build_task)
        self._swap(tasks, unservable, {}, rollouts)

    def _build_task(self, listed: ListedModel) -> Task | UnservableModel:
        return self._current_task(listed) or task_for(listed, self.limits)

    def _rollout(self, stable: Task, listed: ListedModel, task_of) -> Rollout:
        """The model's labelled versions beside `stable`, each built by `task_of` (at start: built, loaded on
        first use; at a refresh: downloaded and loaded first)."""
        labels: dict[str, Task | str] = {}
        for other in listed.labelled:
            task = task_of(other.listed)
            if isinstance(task, UnservableModel):
                log.error("labelled model version cannot be served", extra={"fields": {
                    "model": listed.name, "label": other.label, "problem": task.reason}})
                task = task.reason
            elif task.manifest.version == stable.manifest.version:
                task = stable  # one task, one interpreter per version
            labels[other.label] = task
        weights = {other.label: other.weight for other in listed.labelled if other.weight}
        return Rollout(listed.name, stable, labels, weights)

    def _swap(self, tasks: dict[str, Task], unservable: dict[str, UnservableModel], pending: dict[str, dict],
              rollouts: dict[str, Rollout]) -> None:
        # Whole dictionaries swapped at once: a request in flight keeps the task it already holds.
        self.tasks, self.unservable, self.pending, self.rollouts, self._tensor_views = \
            tasks, unservable, pending, rollouts, {}
        serving = [*tasks.values(), *(task for rollout in rollouts.values() for task in rollout.tasks())]
        self.source.serving({task.manifest.directory for task in serving})

    def _current_task(self, listed: ListedModel) -> Task | None:
        """The task already serving this very version (its interpreter stays loaded), if any."""
        if not isinstance(listed.manifest, Manifest):
            return None
        current = self.tasks.get(listed.name)
        rollout = self.rollouts.get(listed.name)
        for task in rollout.tasks() if rollout else [current] if current else []:
            if (task.manifest.version, task.manifest.directory) == (listed.manifest.version,
                                                                    listed.manifest.directory):
                return task
        return None

    def refresh(self) -> None:
        """Called by every request: starts a check of the source in the background when one is due (a cheap no-op
        otherwise). Never waits for S3: the request goes on with the models served now. A watched local directory
        is checked here and now instead (a few reads of a local disk), so the request that follows a conversion
        sees the new model; concurrent requests wait for that one check."""
        if not self.source.due():
            return
        if self.source.checks_on_request:
            with self._refresh_lock:
                self.refresh_now()
            return
        with self._refresh_lock:
            if self._refresher is not None and self._refresher.is_alive():
                return
            self._refresher = threading.Thread(target=self._refresh_in_background, name="model-refresh", daemon=True)
            self._refresher.start()

    def _refresh_in_background(self) -> None:
        """refresh_now on the check's own thread: whatever it raises is logged, the models served stay, and the
        next due check runs again (a bug in one check never ends the checking)."""
        try:
            self.refresh_now()
        except Exception:  # noqa: BLE001  (a bug of ours: logged with its traceback, never the container's end)
            log.exception("model refresh failed; the models served stay", extra={"fields": {
                "source": self.source.description}})

    def settle(self, timeout: float | None = None) -> None:
        """Waits for a background check in progress (tests, benchmarks)."""
        refresher = self._refresher
        if refresher is not None:
            refresher.join(timeout)

    def refresh_now(self) -> None:
        """One check, here and now: the source's new listing, or the last one not wholly taken in, when due."""
        listing = self.source.poll()
        if listing is None:  # unchanged ([] is a change: every model is gone)
            listing = self._unsettled
        if listing is None:
            return
        before = {name: task.manifest.version for name, task in self.tasks.items()}
        self._take_in(listing)
        after = {name: task.manifest.version for name, task in self.tasks.items()}
        changed = {name: {"from": before.get(name), "to": version} for name, version in after.items()
                   if before.get(name) != version}
        changed.update({name: {"from": version, "to": None} for name, version in before.items() if name not in after})
        if changed:
            log.info("models changed", extra={"fields": {"source": self.source.description, "changes": changed}})

    def _take_in(self, listing: list[ListedModel]) -> None:
        """A refresh's listing, model by model: a new version replaces the one serving only once it is loaded. A name
        two directories claim is served by neither (which one is meant is not for the function to guess)."""
        listing, unservable = claimed_once(listing)
        tasks: dict[str, Task] = {}
        pending: dict[str, dict] = {}
        rollouts: dict[str, Rollout] = {}
        for listed in listing:
            current = self.tasks.get(listed.name)
            entry = self._current_task(listed) or self._loaded_task(listed)
            if isinstance(entry, Task):
                tasks[listed.name] = entry
                if listed.labelled:
                    rollouts[listed.name] = self._rollout(
                        entry, listed, lambda other: self._current_task(other) or self._loaded_task(other))
                continue
            fields = {"model": listed.name, "version": listed_version(listed), "problem": entry.reason}
            if current is None:
                log.error("model cannot be served", extra={"fields": fields})
                unservable[listed.name] = entry
            else:
                log.error("new model version refused; serving the current one",
                          extra={"fields": {**fields, "serving": current.manifest.version}})
                tasks[listed.name] = current
                if listed.name in self.rollouts:
                    rollouts[listed.name] = self.rollouts[listed.name]
                pending[listed.name] = {"version": listed_version(listed), "problem": entry.reason}
        self._unsettled = listing if pending or unservable else None
        self._swap(tasks, unservable, pending, rollouts)

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
        except (ModelFilesError, *self.source.fetch_errors) as exc:
            return UnservableModel(listed.name, listed.directory, f"{type(exc).__name__}: {exc}")
        return entry

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

    def versions(self, name: str) -> list[Task]:
        """Every servable version of model `name`, the stable one first."""
        rollout = self.rollouts.get(name)
        return rollout.tasks() if rollout else [self.task(name)]

    def version_task(self, name: str, version: str) -> Task:
        """The task serving that version of model `name` (its stable or a labelled one)."""
        for task in self.versions(name):
            if task.manifest.version == version:
                return task
        raise refuse("version_not_found", f"Model {name!r} has no version {version!r}; it serves "
                     f"{', '.join(task.manifest.version for task in self.versions(name))}.")

    def label_version(self, name: str, label: str) -> str:
        """The version model `name` serves under `label` ("stable": the one requests naming none get)."""
        stable = self.task(name)
        rollout = self.rollouts.get(name)
        found = rollout.label(label) if rollout else stable if label == STABLE else None
        if found is None:
            labels = [STABLE, *sorted(rollout.labels)] if rollout else [STABLE]
            raise refuse("label_not_found", f"Model {name!r} has no version labelled {label!r}; its labels: "
                         f"{', '.join(labels)}.")
        if isinstance(found, str):
            raise refuse("model_unavailable", f"Model {name!r} version labelled {label!r} cannot be served: {found}")
        return found.manifest.version

    def tensor_task(self, name: str, version: str | None = None) -> TensorTask:
        """Model `name` (in `version`, else its stable one) as tensors in, tensors out, whatever its task (TF
        Serving and Open Inference Protocol)."""
        task = self.task(name) if version is None else self.version_task(name, version)
        key = (name, task.manifest.version)
        view = self._tensor_views.get(key)
        if view is None:
            try:
                view = TensorTask.view(task)
            except ManifestError as exc:  # a tensor the protocols cannot carry (e.g. a string input)
                raise refuse("model_unavailable", f"Model {quoted(name)} cannot be served as tensors: {exc}") \
                    from exc
            self._tensor_views[key] = view
        return view

    def rollout_of(self, task: Task) -> Rollout | None:
        """The rollout whose weighted choice a request naming no version makes, when `task` (or its tensor view)
        is that model's stable version and another label has a weight."""
        rollout = self.rollouts.get(task.manifest.name)
        if rollout is None or not rollout.weights or task.manifest.version != rollout.stable.manifest.version:
            return None
        return rollout

    def is_loaded(self, name: str) -> bool:
        return name in self.tasks and self.tasks[name].loaded

    def preload(self) -> None:
        for task in [task for name in self.tasks for task in self.versions(name)]:
            try:
                task.load()
            except ModelUnavailable:
                pass  # logged with its reason; the model answers 503 and the others still serve


def claimed_once(listing: list[ListedModel]) -> tuple[list[ListedModel], dict[str, UnservableModel]]:
    """The listed models whose name one directory alone claims, and, for each name two or more claim, why none of
    them is served (one float16 and one int8 conversion of one SavedModel side by side, say)."""
    claims: dict[str, list[Path]] = {}
    for listed in listing:
        claims.setdefault(listed.name, []).append(listed.directory)
    unservable = {}
    for name, directories in claims.items():
        if len(directories) > 1:
            named = ", ".join(str(directory) for directory in directories[:-1]) + f" and {directories[-1]}"
            claim = "both claim" if len(directories) == 2 else "all claim"
            unservable[name] = UnservableModel(name, directories[0], f"the model directories {named} {claim} "
                                               f"the name {name!r}: give each its own (`python -m convert --name`) "
                                               "or remove one", DUPLICATE_NAME)
            log.error("model cannot be served", extra={"fields": {"model": name, "problem": unservable[name].reason}})
    return [listed for listed in listing if listed.name not in unservable], unservable


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
