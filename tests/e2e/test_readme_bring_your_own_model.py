"""README.md's "Bring your own model", followed literally: its blocks run as written, the install in a copy of the
checkout, the rest in a folder outside it holding only a `my_model.keras` and a few photos, with the command the
install put on PATH. The model is small and trained here; it takes photos of any size like a user's classifier.

What the test sets around the blocks and why: pip works offline (PIP_NO_INDEX; PIP_NO_BUILD_ISOLATION=0, which
turns build isolation off, and PIP_NO_DEPS: the build backend and every dependency are the dev venv's, reached
through the fresh venv's .pth, tests/support/installed_package.py, and that venv installs requirements.txt without
its packages' own declared dependencies, which pip would otherwise look for); `lambda-tflite serve` gets `--port 0`
appended (8080 may be taken where the tests run) and runs until the test has called it.
"""
from __future__ import annotations

import json
import re
import shlex
import subprocess
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from tests.support.convert_models import seeded_keras
from tests.support.installed_package import REPO, command_serving, copy_checkout, fresh_venv, user_environment

pytestmark = pytest.mark.slow

SECTION = "## Bring your own model"
SIDE = 32


def section_blocks(markdown: str, heading: str) -> list[tuple[str, str]]:
    """(language, code) of every fenced block between `heading` and the next level-2 heading."""
    start = markdown.index(heading) + len(heading)
    end = markdown.find("\n## ", start)
    return re.findall(r"^```(\w+)\n(.*?)^```", markdown[start:None if end < 0 else end], re.S | re.M)


def photos_and_classes(count: int, offset: int) -> tuple[list[np.ndarray], np.ndarray]:
    """load_digits' 0s and 1s as RGB photos of several sizes (what a user's photos/ holds), and their class."""
    from PIL import Image
    from sklearn.datasets import load_digits

    digits = load_digits()
    chosen = np.flatnonzero(digits.target < 2)[offset:offset + count]
    photos = []
    for number, index in enumerate(chosen):
        grey = Image.fromarray(np.round(digits.images[index] * (255 / 16)).astype(np.uint8), mode="L")
        side = SIDE + 8 * (number % 3)
        photos.append(np.asarray(grey.resize((side, side), Image.BILINEAR).convert("RGB")))
    return photos, digits.target[chosen]


def users_keras_file(path: Path) -> None:
    """A user's small classifier: RGB photos resized to 32x32, pixels 0-255 rescaled inside, two classes."""
    from PIL import Image

    keras = seeded_keras()
    photos, classes = photos_and_classes(200, 0)
    batch = np.stack([np.asarray(Image.fromarray(p).resize((SIDE, SIDE), Image.BILINEAR), np.float32) for p in photos])
    inputs = keras.Input(shape=(SIDE, SIDE, 3), name="photo")
    x = keras.layers.Rescaling(1 / 255, name="rescale")(inputs)
    x = keras.layers.Conv2D(4, 3, strides=2, activation="relu", name="conv")(x)
    x = keras.layers.GlobalAveragePooling2D(name="pool")(x)
    outputs = keras.layers.Dense(2, activation="softmax", name="classes")(x)
    model = keras.Model(inputs, outputs, name="my_model")
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="sparse_categorical_crossentropy")
    model.fit(batch, classes, epochs=5, batch_size=32, verbose=0)
    model.save(path)


def run_bash(script: str, cwd: Path, env: dict[str, str]) -> None:
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=1500)
    assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"


def test_bring_your_own_model_runs_as_written(tmp_path):
    from PIL import Image

    blocks = section_blocks((REPO / "README.md").read_text(), SECTION)
    assert [language for language, _ in blocks] == ["bash", "python", "bash"], blocks
    (_, install), (_, script), (_, steps) = blocks

    # 1. The install, in a clone (a copy of the checkout), into the user's own fresh venv.
    assert "pip install '.[convert]'" in install
    bin_dir = fresh_venv(tmp_path / "venv")
    env = user_environment(bin_dir, tmp_path / "home")
    env.update(PIP_NO_INDEX="1", PIP_NO_BUILD_ISOLATION="0", PIP_NO_DEPS="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    clone = copy_checkout(tmp_path / "lambda-tflite-serving")
    run_bash(install, clone, env)

    # 2. The user's folder: my_model.keras and photos/, nothing else; the script under the name its first line gives.
    folder = tmp_path / "home" / "my_project"
    (folder / "photos").mkdir(parents=True)
    users_keras_file(folder / "my_model.keras")
    photos, _ = photos_and_classes(12, 200)
    for number, photo in enumerate(photos):
        Image.fromarray(photo).save(folder / "photos" / f"{number:02d}.jpg", quality=95)
    script_name = re.match(r"# (\S+\.py)\n", script).group(1)
    (folder / script_name).write_text(script)

    # 3. Every command but the server, in order; then the server, as written plus --port 0.
    lines = steps.splitlines()
    (serve,) = [line for line in lines if line.startswith("lambda-tflite serve")]
    run_bash("\n".join(line for line in lines if line != serve), folder, env)
    manifest = json.loads((folder / "models" / "my_model" / "manifest.json").read_text())
    assert manifest["fidelity"]["served"]["passed"] is True, manifest["fidelity"]
    assert "float16" in (folder / "models" / "my_model" / "report.md").read_text()  # --compare's table
    assert "<svg" in (folder / "models" / "my_model" / "report.html").read_text()  # the report page's scatter
    serve_args = shlex.split(serve.split("#")[0])[2:]
    with command_serving([*serve_args, "--port", "0"], folder, env) as (url, first_line):
        assert "my_model" in first_line
        request = urllib.request.Request(f"{url}/classify?model=my_model", method="POST", headers={
            "Content-Type": "image/jpeg"}, data=(folder / "photos" / "00.jpg").read_bytes())
        with urllib.request.urlopen(request, timeout=60) as answer:
            (prediction,) = json.load(answer)["predictions"]
    samples = np.load(folder / "validation.npz")
    assert prediction["label"] == ["cat", "dog"][int(np.argmax(samples["expected"][0]))], prediction
