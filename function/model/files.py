"""A model's files, made present before anything reads them: a no-op for a directory on disk (the image, EFS),
a verified download for a published model (function/catalog/download.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Protocol

HASH_CHUNK_BYTES = 1 << 20


class ModelFilesError(RuntimeError):
    """The files cannot be made present now (network, space): the next request tries again."""


class ModelFilesRefused(ModelFilesError):
    """A file is not what the manifest says (its sha256 differs): never served, not fetched again for this version."""


class ModelFiles(Protocol):
    def ensure(self) -> None:
        """Return once every file the manifest lists is in the model directory and verified; raise
        ModelFilesError (or a network error) otherwise. Cheap after the first success."""


class PresentFiles:
    """Files already on a disk this process trusts as it trusts its own code."""

    def ensure(self) -> None:
        return None


PRESENT = PresentFiles()


def file_sha256(path: Path) -> str:
    import hashlib  # noqa: PLC0415  (OpenSSL's, fastest on megabytes; only a watched or downloaded model needs it)

    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(HASH_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()
