"""A published model's files, downloaded into its directory under /tmp on first use and verified before use.

Each file streams into a hidden temporary name in the model directory while its sha256 is computed, and gets its
real name (an atomic rename) only when the digest equals the manifest's. A file that differs is refused, and that
version is not downloaded again (a newly published version is): a version seen at start answers 503 with the
reason, a version seen by a refresh is never installed (function/catalog/registry.py). A download cut short leaves
nothing under a real name and is tried again later. A request waits for a download only with the source's short
limits (one attempt, short waits, one deadline for all the files: function/catalog/s3_source.py); the background
refresh downloads patiently. Before downloading, the free
space of the file system is checked against the sizes the index gives, after making room by deleting versions no
longer published.
"""
from __future__ import annotations

import hashlib
import logging
import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from function.aws.s3 import S3Client
from function.model.files import ModelFilesError, ModelFilesRefused, file_sha256

log = logging.getLogger("function")

# Left free on /tmp beyond the files themselves: the SQLite cache, Python's own temporary files.
SPARE_BYTES = 16 << 20


class DownloadedFiles:
    """The ModelFiles of one published version (function/model/files.py)."""

    def __init__(self, client: S3Client, bucket: str, key_prefix: str, directory: Path, digests: dict[str, str],
                 sizes: dict[str, int], model: str, make_room: Callable[[], None] = lambda: None) -> None:
        self.client = client
        self.bucket = bucket
        self.key_prefix = key_prefix  # "prefix/<name>/<version>/"
        self.directory = directory
        self.digests = digests  # file name -> sha256, from the manifest
        self.sizes = sizes
        self.model = model
        self.make_room = make_room
        self._ready = False
        self._refused: ModelFilesRefused | None = None
        self._lock = threading.Lock()

    def ensure(self, client: S3Client | None = None) -> None:
        """Every file present and verified; `client` in place of the request path's own (the refresh's)."""
        if self._ready:
            return
        with self._lock:
            if self._ready:
                return
            if self._refused is not None:
                raise self._refused
            try:
                self._fetch(client or self.client)
            except ModelFilesRefused as refused:
                self._refused = refused
                raise
            self._ready = True

    def _fetch(self, client: S3Client) -> None:
        started = time.perf_counter()
        self.directory.mkdir(parents=True, exist_ok=True)
        # Files left by an earlier process in this sandbox count only if they still verify.
        missing = [name for name in sorted(self.digests) if not self._verified(self.directory / name)]
        self._check_space(sum(self.sizes.get(name, 0) for name in missing))
        deadline = client.deadline()  # the request path's client: one deadline for every file of the model
        received = sum(self._download(name, client, deadline) for name in missing)
        log.info("model files ready", extra={"fields": {
            "model": self.model, "directory": str(self.directory), "downloaded_files": len(missing),
            "downloaded_bytes": received, "timings_ms": {"download": round((time.perf_counter() - started) * 1e3, 3)},
        }})

    def _verified(self, path: Path) -> bool:
        return path.is_file() and file_sha256(path) == self.digests[path.name]

    def _check_space(self, needed: int) -> None:
        if not needed:
            return
        if shutil.disk_usage(self.directory).free < needed + SPARE_BYTES:
            self.make_room()
        free = shutil.disk_usage(self.directory).free
        if free < needed + SPARE_BYTES:
            raise ModelFilesError(f"{needed / 1e6:.1f} MB to download but {free / 1e6:.1f} MB free in "
                                  f"{self.directory.parent.parent} (keeping {SPARE_BYTES >> 20} MB spare): give the "
                                  "function more ephemeral storage")

    def _download(self, name: str, client: S3Client, deadline: float | None) -> int:
        final = self.directory / name
        partial = self.directory / f".{name}.{uuid.uuid4().hex}.partial"  # never a name the model reads
        where = f"s3://{self.bucket}/{self.key_prefix}{name}"
        digest = hashlib.sha256()
        try:
            with open(partial, "wb") as out:
                def write(chunk: bytes) -> None:
                    digest.update(chunk)
                    out.write(chunk)

                size = client.download(self.bucket, self.key_prefix + name, write, deadline=deadline)
            if digest.hexdigest() != self.digests[name]:
                raise ModelFilesRefused(f"{name} has sha256 {digest.hexdigest()[:16]}... ({size} bytes) but the "
                                        f"manifest says {self.digests[name][:16]}...: refused, publish the model "
                                        f"again ({where})")
            os.replace(partial, final)
            return size
        finally:
            partial.unlink(missing_ok=True)
