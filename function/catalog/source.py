"""Where the models come from: a directory (the image's models/, or an EFS mount) or an S3 prefix.

A source lists its models cheaply (manifests only, no model file) and hands each with the files object that makes
its files present before anything reads them. Only a source that can change is polled for a new listing.
"""
from __future__ import annotations

import os
from abc import ABC, abstractmethod
from pathlib import Path

from function.model.files import PRESENT, ModelFiles, ModelFilesError, file_sha256
from function.model.manifest import MANIFEST_FILE, Manifest, ManifestError, load_manifest
from function.records import named_tuple


@named_tuple
class ListedModel:
    name: str  # the manifest's name; the directory's name when the manifest cannot be read
    directory: Path  # where its files are, or will be once `files.ensure()` returns
    manifest: Manifest | ManifestError
    files: ModelFiles = PRESENT
    labelled: tuple[LabelledVersion, ...] = ()  # the model's other versions under a label (an S3 index's labels)


@named_tuple
class LabelledVersion:
    """Another version of a listed model, served to requests that name its label (or its version) and, with a
    weight, to that percent of the requests that name neither (function/catalog/rollout.py)."""

    label: str
    weight: int  # percent, 0-100
    listed: ListedModel


class ModelSourceError(RuntimeError):
    """The source cannot be listed at all (no such bucket, no permission): the init fails, saying so."""


class ModelSource(ABC):
    description: str  # for the logs and the local server's first line
    directory: Path  # where the model directories are on disk (downloaded into, for a remote source)
    # True: a due check runs in the request that sees it (a local disk), not in the background
    checks_on_request = False
    # What prepare() raises when the files cannot be fetched (the registry keeps the serving version): a remote
    # source adds its transport's errors, so the init of a function on local models never imports http.client.
    fetch_errors: tuple[type[BaseException], ...] = (OSError,)

    @abstractmethod
    def models(self) -> list[ListedModel]:
        """Every model, read now."""

    def due(self) -> bool:
        """Whether a refresh check is due now. A directory in the image never changes under a running function (a
        new image or EFS content comes with new containers): never, unless watched (the local server)."""
        return False

    def close(self) -> None:
        """Drops any connection (before a SnapStart snapshot); the next call opens a new one."""

    def renew_credentials(self) -> None:
        """Reads any AWS credentials again (after a SnapStart restore)."""

    def poll(self) -> list[ListedModel] | None:
        """A new listing if the models changed since the last one, else None (also when no check is due)."""
        return None

    def serving(self, directories: set[Path]) -> None:
        """The model directories the registry serves now (maybe older versions than the listing names): a source
        that deletes old downloads keeps these."""

    def prepare(self, listed: ListedModel) -> None:
        """Make a listed model's files present off the request path (the refresh, before it installs a version):
        as patiently as the source allows."""
        listed.files.ensure()


class ModelDirectory(ModelSource):
    """One sub-directory per model, as `python -m convert` writes them: the image's models/, or an EFS mount.

    Hidden sub-directories are never models: `convert` builds a model in `.NAME.staging-*` beside its final place and
    renames it only once complete (convert/output_dir.py). With `watch` (the local server), `due()` is a stat of the
    directory and of every file one level down, a few microseconds per model, so a model converted, copied in,
    replaced or removed while the server runs is served (or gone) at the next request; each file is then checked
    against its manifest's sha256 before it is loaded, so a directory still being copied is not served."""

    def __init__(self, directory: Path, watch: bool = False):
        self.directory = Path(directory)
        self.description = str(self.directory)
        self.watch = watch
        self.checks_on_request = watch  # the check reads a local disk: no reason to leave the request path
        self._seen: tuple | None = None

    def models(self) -> list[ListedModel]:
        self._seen = self._fingerprint() if self.watch else None
        listing = []
        for name in self._model_directories():
            directory = self.directory / name
            try:
                manifest = load_manifest(directory)
                files = VerifiedFiles(manifest) if self.watch else PRESENT
                listing.append(ListedModel(manifest.name, directory, manifest, files))
            except ManifestError as exc:
                listing.append(ListedModel(directory.name, directory, exc))
        return listing

    def _model_directories(self) -> list[str]:
        """The names of the sub-directories holding a manifest, sorted. A scan rather than Path.glob, which compiles
        a pattern for each part of its argument: 0.3 ms of every cold start."""
        try:
            with os.scandir(self.directory) as entries:
                names = sorted(entry.name for entry in entries if not entry.name.startswith(".") and entry.is_dir())
        except OSError:  # no such directory (or not one): no models, as glob found none
            return []
        return [name for name in names if os.path.lexists(os.path.join(self.directory, name, MANIFEST_FILE))]

    def due(self) -> bool:
        return self.watch and self._fingerprint() != self._seen

    def poll(self) -> list[ListedModel] | None:
        return self.models() if self.due() else None

    def _fingerprint(self) -> tuple:
        """What changes when a model directory is added, removed or renamed, or a file in one is written."""
        seen = []
        try:
            entries = sorted(os.scandir(self.directory), key=lambda entry: entry.name)
        except OSError:
            return ()
        for entry in entries:
            if entry.name.startswith(".") or not entry.is_dir():
                continue
            try:
                seen.append((entry.name, entry.inode(), *_stamp(entry.stat())))
                seen.extend((entry.name, file.name, *_stamp(file.stat())) for file in os.scandir(entry.path))
            except OSError:  # removed while looked at: the next request looks again
                seen.append((entry.name, None))
        return tuple(seen)


def _stamp(stat: os.stat_result) -> tuple[int, int, int]:
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


class VerifiedFiles:
    """The files of a model directory that may still be changing under the server: each one's sha256 is checked
    against the manifest once, before the model loads (a copy still being written is refused, and served once the
    directory changes again and its files match)."""

    def __init__(self, manifest: Manifest):
        self.manifest = manifest
        self._verified = False

    def ensure(self) -> None:
        if self._verified:
            return
        for name, expected in self.manifest.files.items():
            path = self.manifest.directory / name
            try:
                actual = file_sha256(path)
            except OSError as exc:
                raise ModelFilesError(f"{path}: {type(exc).__name__}: {exc.strerror or exc}") from exc
            if actual != expected:
                raise ModelFilesError(f"{path}: its sha256 is {actual[:12]}..., the manifest says {expected[:12]}... "
                                      "(still being written? the model is served once its files match)")
        self._verified = True
