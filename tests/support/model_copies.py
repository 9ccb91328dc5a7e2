"""Copies of a demo model directory that are another serving version of it."""
from __future__ import annotations

import json
import shutil
from pathlib import Path


def relabelled(model_dir: Path, tmp_path: Path) -> Path:
    """The same model with new labels ("digit 3" for "3"), copied once under `tmp_path`: a new serving version
    (function/model/identity.py) whose answers differ."""
    copy = tmp_path / "relabelled" / model_dir.name
    if not copy.exists():
        shutil.copytree(model_dir, copy)
        manifest = json.loads((copy / "manifest.json").read_text())
        manifest["labels"] = [f"digit {label}" for label in manifest["labels"]]
        (copy / "manifest.json").write_text(json.dumps(manifest))
    return copy


def multi_label_copy(model_dir: Path, root: Path, name: str) -> Path:
    """The same model served multi-label under `name` (each unit its own label's score), copied into `root`."""
    copy = root / name
    shutil.copytree(model_dir, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    (copy / "manifest.json").write_text(json.dumps({**manifest, "name": name, "multi_label": True}))
    return copy
