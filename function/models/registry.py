"""Every model under MODEL_DIR, each loaded once per container and reused by every request after that."""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from function.errors import ApiError, bad_request, not_found
from function.models.manifest import Manifest, ManifestError, load_manifest
from function.models.runner import ModelRunner

log = logging.getLogger("function")


@dataclass(frozen=True)
class LoadedModel:
    manifest: Manifest
    runner: ModelRunner
    preprocessor: object  # ImagePreprocessor or TextEncoder, by task


class ModelRegistry:
    """Reads every manifest at start (cheap), loads interpreters on first use or all at once with `preload()`."""

    def __init__(self, model_dir: Path, max_image_pixels: int):
        self.model_dir = Path(model_dir)
        self.max_image_pixels = max_image_pixels
        self.manifests: dict[str, Manifest] = {}
        self._loaded: dict[str, LoadedModel] = {}
        self._lock = threading.Lock()
        for manifest_file in sorted(self.model_dir.glob("*/manifest.json")):
            try:
                manifest = load_manifest(manifest_file.parent)
            except ManifestError as exc:
                # One broken model directory must not take the others down with it.
                log.error("skipping model", extra={"fields": {"problem": str(exc)}})
                continue
            self.manifests[manifest.name] = manifest

    def manifest(self, name: str, task: str) -> Manifest:
        """The manifest of model `name` for `task`: 404 if unknown, 400 if it does another task. Loads nothing."""
        manifest = self.manifests.get(name)
        if manifest is None:
            known = ", ".join(sorted(self.manifests)) or "none"
            raise not_found("model_not_found", f"There is no model named {name!r}; available: {known}.")
        if manifest.task != task:
            raise bad_request("wrong_model_task", f"Model {name!r} does {manifest.task}, not {task}.")
        return manifest

    def load(self, manifest: Manifest) -> LoadedModel:
        """The interpreter and preprocessor of a model, loaded on first use (one load even if threads race)."""
        loaded = self._loaded.get(manifest.name)
        if loaded is None:
            with self._lock:
                loaded = self._loaded.get(manifest.name) or self._load(manifest)
        return loaded

    def get(self, name: str, task: str) -> LoadedModel:
        return self.load(self.manifest(name, task))

    def is_loaded(self, name: str) -> bool:
        return name in self._loaded

    def preload(self) -> None:
        for manifest in self.manifests.values():
            self.load(manifest)

    def _load(self, manifest: Manifest) -> LoadedModel:
        try:
            runner = ModelRunner(manifest)
            if manifest.task == "image_classification":
                from function.preprocessing.image import ImagePreprocessor  # noqa: PLC0415

                preprocessor = ImagePreprocessor(manifest.preprocessing, self.max_image_pixels)
            else:
                from function.preprocessing.text import TextEncoder  # noqa: PLC0415

                spec = manifest.preprocessing
                preprocessor = TextEncoder(manifest.directory / spec.get("tokenizer", "tokenizer.json"),
                                           spec["max_length"], bool(spec.get("lowercase", False)))
        except Exception as exc:
            log.exception("model failed to load", extra={"fields": {"model": manifest.name}})
            raise ApiError(503, "model_unavailable", f"Model {manifest.name!r} could not be loaded.") from exc
        loaded = LoadedModel(manifest, runner, preprocessor)
        self._loaded[manifest.name] = loaded
        return loaded
