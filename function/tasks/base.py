"""What every task shares: load on first use, run batches, and know its own cache keys and result shape.

A task is one kind of model (image classification, text classification, ...). It turns client inputs into the
model's tensors, runs the model and turns the outputs into one JSON-ready result per input:
load -> preprocess -> predict -> postprocess, each timed as a named stage. It knows nothing of HTTP: routes and
protocol codecs build its inputs and read its results, and `function/inference.py` puts the result cache around
`predict`, so every entry point gets the same answers and the same cache.

Building a task is cheap (no interpreter, no tokenizer): the registry builds one per model directory at start, so
a bad directory is reported at once and a cache hit never loads anything.
"""
from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from time import perf_counter
from typing import Any, ClassVar

import numpy as np

from function.config import TaskLimits
from function.errors import first_line, refuse
from function.log import Timings
from function.model.files import PRESENT, ModelFiles
from function.model.manifest import Manifest, ManifestError
from function.model.runner import ModelRunner
from function.records import named_tuple
from function.tasks.values import values_line

Result = dict


@named_tuple
class Batch:
    tensors: dict[str, np.ndarray]  # role -> batch-first array
    notes: Sequence[dict] = ()  # per input: what preprocessing did that a result reports
log = logging.getLogger("function")


class Task(ABC):
    name: ClassVar[str]
    # The default model a route of this kind uses when a request names none: "image", "text" or "embedding" for
    # ServiceSettings.default_<it>_model (set by DEFAULT_<IT>_MODEL), "" for none.
    default_model: ClassVar[str] = ""
    # Whether the model's outputs besides its class scores are answered as values ("outputs": {name: [...]}).
    answers_values: ClassVar[bool] = False
    # Where this task's answers are, for a request that names its model on a route of another task ("" to say
    # nothing more than which task the model does); {name} is the model's name.
    answered_at: ClassVar[str] = ""

    def __init__(self, manifest: Manifest, limits: TaskLimits, files: ModelFiles = PRESENT):
        self.manifest = manifest
        self.limits = limits
        self.files = files  # made present (downloaded and verified, for a published model) before any part loads
        self._components: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.check_manifest()

    # ---- what the task needs of its manifest, checked at start -----------------------------------------------

    def check_manifest(self) -> None:
        """Raise ManifestError when the manifest lacks what this task needs (the registry shows the reason)."""

    def require(self, condition: bool, problem: str) -> None:
        if not condition:
            raise ManifestError(f"{self.manifest.directory / 'manifest.json'}: {problem}")

    # ---- loading ----------------------------------------------------------------------------------------------

    def component(self, name: str, factory: Callable[[], Any]) -> Any:
        """A heavy part of the model (interpreter, tokenizer, image decoder), built on first use, once even when
        threads race; a failure is ModelUnavailable with the reason, and the next request tries again."""
        part = self._components.get(name)
        if part is None:
            with self._lock:
                part = self._components.get(name)
                if part is None:
                    part = self._components[name] = self._build(factory)
        return part

    def _build(self, factory: Callable[[], Any]) -> Any:
        try:
            self.files.ensure()
            return factory()
        except Exception as exc:  # noqa: BLE001  (whatever broke, this model cannot answer: say so, keep serving)
            log.exception("model failed to load", extra={"fields": {"model": self.manifest.name}})
            raise refuse("model_unavailable", f"Model {self.manifest.name!r} could not be loaded: "
                         f"{type(exc).__name__}: {first_line(exc)}") from exc

    @property
    def loaded(self) -> bool:
        return "runner" in self._components

    def runner(self) -> ModelRunner:
        runner = self._components.get("runner")  # a warm request's case, before making the closure
        return runner if runner is not None else self.component("runner", lambda: ModelRunner(self.manifest))

    def load(self) -> None:
        """Everything a request needs, loaded now (the warm-up event and PRELOAD_MODELS=all)."""
        self.runner()

    # ---- the pipeline: preprocess -> invoke -> postprocess ---------------------------------------------------

    @abstractmethod
    def input_digest(self, item: Any) -> str:
        """The canonical digest of one client input: what the cache key is made of, besides the options."""

    def cache_options(self, options: dict) -> dict:
        """The options that change a result (and so belong in its cache key)."""
        return dict(options)

    def gather(self, items: Sequence[Any], indices: Sequence[int]) -> Sequence[Any]:
        """The items at `indices`, in that order, as `predict` takes them (a batched task keeps one batch)."""
        return [items[index] for index in indices]

    def predict(self, items: Sequence[Any], options: dict, timings: Timings) -> list[Result]:
        """One result per item, in order, computed as one batch."""
        start = perf_counter()
        try:
            self.load()  # ~0 when warm; the interpreter load on a cold start
        finally:
            timings.add("load", start)
        batch = self.preprocess(items, timings)
        start = perf_counter()
        try:
            outputs = self.invoke(batch.tensors)
        finally:
            timings.add("invoke", start)
        start = perf_counter()
        try:
            return self.postprocess(outputs, batch, options)
        finally:
            timings.add("postprocess", start)

    def invoke(self, tensors: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The model on a preprocessed batch, outputs by role (a task may split the batch to run it faster)."""
        return self.runner().run(tensors)

    def answer_tensors(self, tensors: dict[str, np.ndarray], options: dict) -> list[Result]:
        """Results for inputs that are already the model's tensors: what `convert` checks a new model directory
        with, on its validation samples, before it writes it."""
        return self.postprocess(self.runner().run(tensors), Batch(tensors, self.notes_of(tensors)), options)

    def notes_of(self, tensors: dict[str, np.ndarray]) -> list[dict]:
        """What preprocessing would have noted per input, for inputs given as tensors."""
        return [{} for _ in range(len(next(iter(tensors.values()))))]

    def bytes_input(self) -> str | None:
        """The input (by name) this task fills from encoded bytes, such as an image file: the one the tensor
        protocols take as {"b64": ...}, TF Serving's string tensor. None: the model takes numbers only."""
        return None

    def tensor_from_bytes(self, data: bytes, where: str, timings: Timings) -> np.ndarray:
        """One instance of bytes_input() from its encoded bytes, as this task's own preprocessing makes it."""
        raise refuse("invalid_dtype", f"Model {self.manifest.name!r} takes numbers, not encoded bytes ({where}).")

    @abstractmethod
    def preprocess(self, items: Sequence[Any], timings: Timings) -> Batch:
        """Client inputs -> the model's input tensors by role, batch first."""

    @abstractmethod
    def postprocess(self, outputs: dict[str, np.ndarray], batch: Batch, options: dict) -> list[Result]:
        """The model's outputs by role -> one JSON-ready result per input."""

    @abstractmethod
    def is_valid_result(self, result: object, options: dict) -> bool:
        """Whether a stored result is one this task could have produced for these options: a cache entry that
        is not (forged, from an older code, damaged in a way its checksum missed) is a miss, never an answer."""

    def summary(self, result: Result) -> dict:
        """What a bulk run's report says of one result (the full answer is its result file): a classifier's label
        and score, or its labels (multi-label: every label at or above the threshold, best first), and the values
        of the outputs beside them (a value head's `outputs`), as the answer has them."""
        if "labels" in result:
            found = {"labels": [entry["label"] for entry in result["labels"]]}
        else:
            found = {"label": result["label"], "score": result["score"]}
        return {**found, "outputs": result["outputs"]} if "outputs" in result else found

    def summary_line(self, summary: dict) -> str:
        """`summary` as a short line (an S3 Batch Operations completion report's resultString)."""
        if "labels" in summary:
            line = "labels: " + (" ".join(summary["labels"]) or "none")
        else:
            line = f"{summary['label']} {summary['score']:.3f}"
        return f"{line} {values_line(summary['outputs'])}" if "outputs" in summary else line
