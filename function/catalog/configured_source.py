"""The model source ServiceSettings names: MODEL_SOURCE when it is an s3:// URL, else the directory."""
from __future__ import annotations

from pathlib import Path

from function.catalog.source import ModelDirectory, ModelSource
from function.config import ServiceSettings


def open_model_source(settings: ServiceSettings) -> ModelSource:
    if settings.model_source and settings.model_source.startswith("s3://"):
        # The S3 client (http.client, ssl, the signer): ~30 ms and 39 modules after function.app's own imports.
        from function.catalog.s3_source import S3ModelSource  # noqa: PLC0415

        return S3ModelSource.from_settings(settings)
    return ModelDirectory(Path(settings.model_source or settings.model_dir), watch=settings.model_dir_watch)
