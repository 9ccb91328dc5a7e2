"""Section 7's keras.applications table: one small model per preprocessing family (caffe, tf, torch), converted with
its module's preset and served on raw photos.

Per family: the time `python -m convert DIR OUT --quantization float16` takes (a fresh process: TensorFlow's
import, the served gate on 36 raw photos, the report, the function's check), and how often the function's
/classify on 36 other raw photos (other crops, other sizes, PNG bytes) answers what
`model.predict(<module>.preprocess_input(resized photos))` answers. The models are the tests' too
(kit/keras_applications_models.py): weights=None, a brief fit on crops of six sample photos.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kit.keras_applications_models import FAMILIES, build_family_model, classify_agreement
from bench.paths import REPO_ROOT

CONVERT_TIMEOUT_SECONDS = 600


def measure(name: str, scratch: Path) -> dict:
    from function.catalog.registry import ModelRegistry  # noqa: PLC0415
    from kit.service import make_service  # noqa: PLC0415

    started = time.perf_counter()
    model = build_family_model(name, scratch / name)
    built = time.perf_counter() - started
    out = scratch / "models" / name
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "convert", str(model.directory), str(out), "--quantization", "float16"],
                   cwd=REPO_ROOT, check=True, timeout=CONVERT_TIMEOUT_SECONDS, stdout=subprocess.DEVNULL)
    converted = time.perf_counter() - started
    agreement, _ = classify_agreement(make_service(ModelRegistry(scratch / "models")), name, model)
    return {"family": name, "model": model.family.constructor, "module": model.family.module,
            "side": model.family.side, "built_s": built, "convert_s": converted, "agreement": agreement,
            "photos": len(model.served)}


def table() -> list[str]:
    with tempfile.TemporaryDirectory(prefix="bench-keras-families-") as scratch:
        rows = [measure(name, Path(scratch)) for name in FAMILIES]
    lines = ["| family | model (weights=None) | preset | input | build + brief fit | convert (float16, fresh process) "
             "| /classify agrees with model.predict |", "|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['family']} | {row['model']} | `\"keras_applications\": \"{row['module']}\"` | "
                     f"{row['side']}x{row['side']} | {row['built_s']:.0f} s | {row['convert_s']:.1f} s | "
                     f"{row['agreement']:.1%} of {row['photos']} raw photos |")
    return lines
