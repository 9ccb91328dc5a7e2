"""Models published under an S3 prefix (function/catalog/published.py): listed from index.json, downloaded to /tmp
per model on first use (function/catalog/download.py), and a new version seen within MODEL_REFRESH_SECONDS.

The listing at start is one GET of index.json, which holds every model's manifest. A refresh check is one GET of it
with If-None-Match: S3 answers 304, with no body, as long as nothing was published. The check runs in the
background (function/catalog/registry.py), with one attempt and short waits (REQUEST_LIMITS): a hung S3 costs the
check ~1 s and the next check waits a whole interval. A request that must download a model's files (its first use)
waits with the same limits, so a hung S3 turns it into a 503 within ~1 s instead of 30 s; the refresh downloads a
new version with the client's own patient limits.
"""
from __future__ import annotations

import http.client
import logging
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from function.aws.s3 import S3Client, S3Error, client_from_environment
from function.catalog.download import DownloadedFiles
from function.catalog.published import (INDEX_FILE, MODEL_NAME, STABLE, ModelIndexError, PublishedEntry, PublishedModel,
                                        parse_s3_url, read_index)
from function.catalog.source import LabelledVersion, ListedModel, ModelSource, ModelSourceError
from function.config import ServiceSettings
from function.errors import quoted
from function.model.manifest import ManifestError, parse_manifest

log = logging.getLogger("function")

UNREADABLE_ENTRY = "unreadable-entry"  # the version GET /models shows for an index entry that cannot be read
# What S3 may cost a request, or a refresh check: one attempt, a connect and each read waiting at most 1 s, and the
# whole operation (a model's every file, however S3 trickles them) at most 2.5 s: a request never waits 3 s for S3.
REQUEST_LIMITS = {"connect_timeout": 1.0, "read_timeout": 1.0, "max_attempts": 1, "deadline_seconds": 2.5}


class S3ModelSource(ModelSource):
    fetch_errors = (OSError, http.client.HTTPException)

    def __init__(self, bucket: str, prefix: str, client: S3Client, download_dir: Path, refresh_seconds: float = 0.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.bucket = bucket
        self.prefix = prefix
        self.client = client  # the patient one: the listing at start, a new version's download by the refresh
        self.request_client = client.with_limits(**REQUEST_LIMITS)
        self.directory = Path(download_dir)
        self.description = f"s3://{bucket}/{prefix}"
        self.refresh_seconds = refresh_seconds
        self._clock = clock
        self._etag: str | None = None
        self._next_check = 0.0
        self._files: dict[tuple[str, str], DownloadedFiles] = {}  # kept across polls: a refusal stays remembered
        self._current: set[tuple[str, str]] = set()  # (name, version) of the last listing
        self._serving: set[Path] = set()  # what the registry serves: kept, even when the listing names another
        self.checks = {"unchanged": 0, "changed": 0, "failed": 0}

    @classmethod
    def from_settings(cls, settings: ServiceSettings) -> "S3ModelSource":
        bucket, prefix = parse_s3_url(settings.model_source)
        return cls(bucket, prefix, client_from_environment(), settings.model_download_dir,
                   settings.model_refresh_seconds)

    def close(self) -> None:
        self.client.close()

    def renew_credentials(self) -> None:
        self.client.renew_credentials()

    @property
    def index_key(self) -> str:
        return self.prefix + INDEX_FILE

    def models(self) -> list[ListedModel]:
        self._next_check = self._clock() + self.refresh_seconds
        where = f"s3://{self.bucket}/{self.index_key}"
        try:
            index = self.client.get_object(self.bucket, self.index_key)
        except S3Error as exc:
            if exc.code == "NoSuchKey":
                log.warning("no model published yet", extra={"fields": {"index": where}})
                return []
            hint = (" (without s3:ListBucket, S3 answers AccessDenied for a missing key too: has a model been "
                    "published there with `python -m convert publish`?)") if exc.code == "AccessDenied" else ""
            raise ModelSourceError(f"cannot read {where}: {exc}{hint}") from exc
        except self.fetch_errors as exc:
            raise ModelSourceError(f"cannot read {where}: {type(exc).__name__}: {exc}") from exc
        try:
            models, broken = read_index(index.body, where)
        except ModelIndexError as exc:
            raise ModelSourceError(str(exc)) from exc
        listing = self._listing(models, broken)
        self._etag = index.etag
        return listing

    def due(self) -> bool:
        return self.refresh_seconds > 0 and self._clock() >= self._next_check

    def poll(self) -> list[ListedModel] | None:
        if not self.due():
            return None
        self._next_check = self._clock() + self.refresh_seconds
        where = f"s3://{self.bucket}/{self.index_key}"
        try:
            index = self.request_client.get_object(self.bucket, self.index_key, if_none_match=self._etag)
            if index is None:
                self.checks["unchanged"] += 1
                return None
            models, broken = read_index(index.body, where)
        except (S3Error, OSError, http.client.HTTPException, ModelIndexError) as exc:
            # Keep serving what is loaded; the next check tries again.
            self.checks["failed"] += 1
            log.warning("model index check failed", extra={"fields": {"index": where, "problem": str(exc)}})
            return None
        listing = self._listing(models, broken)
        self.checks["changed"] += 1
        self._etag = index.etag  # only once the listing is made: a check that failed midway is made again
        return listing

    def _listing(self, models: dict[str, PublishedEntry], broken: dict[str, str]) -> list[ListedModel]:
        """Every model of the index; one whose entry cannot be read is listed with why (the registry shows it on
        GET /models: unavailable, or, while an older version serves, under its `refresh`)."""
        for name, problem in sorted(broken.items()):
            log.error("model index entry refused", extra={"fields": {"model": name, "problem": problem}})
        listing = [ListedModel(name, self.directory / name / UNREADABLE_ENTRY, ManifestError(problem))
                   for name, problem in sorted(broken.items()) if MODEL_NAME.fullmatch(name)]
        for name, entry in sorted(models.items()):
            labelled = tuple(LabelledVersion(label, entry.weights.get(label, 0), self._listed(published))
                             for label, published in sorted(entry.labelled().items()) if label != STABLE)
            stable = self._listed(entry.stable)
            listing.append(ListedModel(stable.name, stable.directory, stable.manifest, stable.files, labelled))
        self._current = {(model.name, version.directory.name) for model in listing
                         for version in (model, *(other.listed for other in model.labelled))}
        return listing

    def _listed(self, published: PublishedModel) -> ListedModel:
        name = published.name
        directory = self.directory / name / published.version
        where = f"s3://{self.bucket}/{self.prefix}{INDEX_FILE} (model {name!r} version {published.version[:12]})"
        try:
            manifest = parse_manifest(published.manifest, directory, where)
            if manifest.name != name:
                raise ManifestError(f"{where}: the manifest names the model {quoted(manifest.name)}")
            if manifest.version != published.version:
                raise ManifestError(f"{where}: the index says version {published.version[:16]}... but its "
                                    f"manifest is version {manifest.version[:16]}...: publish the model again")
        except ManifestError as exc:
            return ListedModel(name, directory, exc)
        except (TypeError, ValueError, OverflowError, RecursionError) as exc:  # what no check foresaw: its problem
            return ListedModel(name, directory, ManifestError(f"{where}: {type(exc).__name__}: {exc}"))
        files = self._files.get((name, published.version))
        if files is None:
            files = self._files[(name, published.version)] = DownloadedFiles(
                self.request_client, self.bucket, self.prefix + published.path, directory, manifest.files,
                published.sizes, name, self._make_room)
        return ListedModel(name, directory, manifest, files)

    def serving(self, directories: set[Path]) -> None:
        self._serving = set(directories)

    def prepare(self, listed: ListedModel) -> None:
        if isinstance(listed.files, DownloadedFiles):
            listed.files.ensure(self.client)
        else:
            listed.files.ensure()

    def _make_room(self) -> None:
        """Deletes the downloaded versions neither published nor served."""
        for directory in sorted(self.directory.glob("*/*")):
            if directory.is_dir() and (directory.parent.name, directory.name) not in self._current \
                    and directory not in self._serving:
                shutil.rmtree(directory, ignore_errors=True)
                self._files.pop((directory.parent.name, directory.name), None)
                log.info("deleted an old model version", extra={"fields": {"directory": str(directory)}})
