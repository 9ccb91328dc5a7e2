"""Where a baseline handler finds its model directory (sidecar.json + model files): one environment variable,
kept free of any inference or image library so every handler can import it at no cost."""

from __future__ import annotations

import json
import os
from pathlib import Path

MODEL_DIR_ENV = "BASELINE_MODEL_DIR"


def model_dir() -> Path:
    return Path(os.environ[MODEL_DIR_ENV])


def load_sidecar(directory: Path) -> dict:
    return json.loads((directory / "sidecar.json").read_text())
