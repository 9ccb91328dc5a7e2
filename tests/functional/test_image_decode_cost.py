"""Any image is answered or refused within what decoding it costs, not only its pixel count: small files that decode
to images just under the pixel cap, in every costly mode (16-bit grey, 32-bit integer and float, palette, 8-bit
with alpha), each decoded and preprocessed in a fresh process whose peak memory (ru_maxrss) is read back. Before
the cost was bounded, a 77 KB 16-bit PNG took ~1 GB."""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

REPO = Path(__file__).resolve().parents[2]
SIDE = 6300  # 39.7 MP: under the default 40 MP cap
PEAK_LIMIT_MB = 300
DECODE = """
import json, sys
from function.errors import ServingError
from function.preprocessing.image import ImagePreprocessor
data = open(sys.argv[1], "rb").read()
preprocessor = ImagePreprocessor({"color_mode": sys.argv[2], "size": [224, 224]}, 40_000_000)
try:
    outcome = list(preprocessor.to_array(preprocessor.decode(data)).shape)
except ServingError as exc:
    outcome = exc.code
print(json.dumps(outcome))
"""
# Linux keeps a process's peak RSS across exec: a child of pytest would report pytest's own peak. So a small
# launcher runs the decode in a child of its own and reports that child's ru_maxrss.
LAUNCH = """
import json, resource, subprocess, sys
done = subprocess.run([sys.executable, "-c", sys.argv[1], *sys.argv[2:]], capture_output=True, text=True)
print(json.dumps({"outcome": json.loads(done.stdout) if done.returncode == 0 else done.stderr[-2000:],
                  "peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def bomb(kind: str) -> bytes:
    """A small file that decodes to SIDE x SIDE pixels of `kind`."""
    buffer = io.BytesIO()
    if kind == "png-16-bit-grey":
        Image.fromarray(np.zeros((SIDE, SIDE), dtype=np.uint16)).save(buffer, "PNG")
    elif kind == "png-rgba":
        Image.new("RGBA", (SIDE, SIDE), (0, 0, 0, 0)).save(buffer, "PNG")
    elif kind == "png-palette":
        Image.new("P", (SIDE, SIDE)).save(buffer, "PNG")
    elif kind == "tiff-32-bit-int":
        Image.new("I", (SIDE, SIDE)).save(buffer, "TIFF", compression="tiff_deflate")
    elif kind == "tiff-float":
        Image.new("F", (SIDE, SIDE)).save(buffer, "TIFF", compression="tiff_deflate")
    elif kind == "png-1-bit":
        Image.new("1", (SIDE, SIDE)).save(buffer, "PNG")
    return buffer.getvalue()


@pytest.mark.parametrize("color_mode", ["RGB", "L"])
@pytest.mark.parametrize("kind", ["png-16-bit-grey", "png-rgba", "png-palette", "tiff-32-bit-int", "tiff-float",
                                  "png-1-bit"])
def test_an_image_under_the_pixel_cap_is_answered_or_refused_within_the_memory_bound(kind, color_mode, tmp_path):
    path = tmp_path / kind
    path.write_bytes(bomb(kind))
    assert path.stat().st_size < 1_000_000  # a small upload
    finished = subprocess.run([sys.executable, "-c", LAUNCH, DECODE, str(path), color_mode], cwd=REPO,
                              capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    measured = json.loads(finished.stdout)
    assert measured["outcome"] in ([224, 224, 3 if color_mode == "RGB" else 1], "image_too_large"), measured
    assert measured["peak_mb"] < PEAK_LIMIT_MB, measured
