"""Where the models come from: a directory (the image's models/, or an EFS mount) or an S3 prefix.

A source lists its models cheaply (manifests only, no model file) and hands each with the files object that makes
its files present before anything reads them. Only a source that can change is polled for a new listing.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from function.model.files import PRESENT, ModelFiles
from function.model.manifest import MANIFEST_FILE, Manifest, ManifestError, load_manifest


@dataclass(frozen=True)
class ListedModel:
    name: str  # the manifest's name; the directory's name when the manifest cannot be read
    directory: Path  # where its files are, or will be once `files.ensure()` returns
    manifest: Manifest | ManifestError
    files: ModelFiles = PRESENT
    labelled: tuple[LabelledVersion, ...] = ()  # the model's other versions under a label (an S3 index's labels)


@dataclass(frozen=True)
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

    @abstractmethod
    def models(self) -> list[ListedModel]:
        """Every model, read now."""

    def due(self) -> bool:
        """Whether a refresh check is due now. A directory never changes under a running function (a new image or
        EFS content comes with new containers): never."""
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
    """One sub-directory per model, as `python -m convert` writes them: the image's models/, or an EFS mount."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.description = str(self.directory)

    def models(self) -> list[ListedModel]:
        listing = []
        for manifest_file in sorted(self.directory.glob(f"*/{MANIFEST_FILE}")):
            directory = manifest_file.parent
            try:
                manifest = load_manifest(directory)
                listing.append(ListedModel(manifest.name, directory, manifest))
            except ManifestError as exc:
                listing.append(ListedModel(directory.name, directory, exc))
        return listing

