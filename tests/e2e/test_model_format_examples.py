"""docs/model-format.md's examples, run as written in a folder outside the checkout with the installed package:

- each sidecar.json example is accepted by convert's strict reader (beside the files it names);
- the manifest example is JSON;
- the `python -m convert ... --name` command converts the demo `digits` SavedModel (copied into the folder);
- the Python lines that make validation.npz from your own pipeline run on a small 224x224 model of the test's own
  (the snippet's `model` and `photo_paths` are the reader's: the test defines them first), and what they write
  converts with the preprocessing the README names for such a model (`"keras_applications": "resnet50"`), the
  served path checked.
The directory layout block is not a command: it is left alone.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from convert.sidecar_reader import load_sidecar
from tests.support.convert_models import seeded_keras
from tests.support.installed_package import REPO, build_wheel, install_into_fresh_venv, user_environment

pytestmark = pytest.mark.slow

DOC = REPO / "docs" / "model-format.md"


def blocks(language: str) -> list[str]:
    """The fenced blocks of this language ("": no language named), fences paired in order from the top."""
    fenced = re.findall(r"^```(\w*)\n(.*?)^```$", DOC.read_text(), re.S | re.M)
    return [code for named, code in fenced if named == language]


@pytest.fixture(scope="module")
def user(tmp_path_factory):
    """(a folder outside the checkout, the user's environment: the wheel installed in a fresh venv, on PATH)."""
    bin_dir = install_into_fresh_venv(build_wheel(tmp_path_factory.mktemp("wheel")),
                                      tmp_path_factory.mktemp("venv") / "venv")
    home = tmp_path_factory.mktemp("home")
    (home / "work").mkdir()
    return home / "work", user_environment(bin_dir, home)


def test_every_sidecar_example_is_accepted_by_the_strict_reader(tmp_path):
    examples = [json.loads(block) for block in blocks("json")]
    sidecars = [example for example in examples if example.get("schema") == 1]
    assert {sidecar["task"] for sidecar in sidecars} == {"image_classification", "image_regression",
                                                         "text_classification", "text_embedding", "tensor"}
    for sidecar in sidecars:
        directory = tmp_path / sidecar["name"]
        directory.mkdir()
        for name in (*sidecar["validation"].values(), (sidecar.get("preprocessing") or {}).get("tokenizer")):
            if name:
                (directory / name).write_bytes(b"")
        (directory / "sidecar.json").write_text(json.dumps(sidecar))
        assert load_sidecar(directory).task == sidecar["task"]
    (manifest,) = [example for example in examples if example.get("schema") == 2]
    assert manifest["model_file"] == "model.tflite"


def test_the_name_option_example_converts_the_demo_model(user):
    folder, env = user
    (command,) = [line for block in blocks("") for line in block.splitlines() if "--name" in line]
    assert command.startswith("python -m convert saved_model/digits ")
    shutil.copytree(REPO / "saved_model" / "digits", folder / "saved_model" / "digits")
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    manifest = json.loads((folder / "models" / "digits-int8" / "manifest.json").read_text())
    assert (manifest["name"], manifest["quantization"]) == ("digits-int8", "int8")


def photos_of_three_kinds(folder: Path) -> list[Path]:
    """Photos of several sizes, three kinds of colour, as JPEG files: the snippet's `photo_paths`."""
    from PIL import Image

    rng = np.random.default_rng(3)
    paths = []
    for number in range(24):
        kind, height, width = number % 3, 180 + 20 * (number % 4), 200 + 30 * (number % 3)
        pixels = rng.integers(0, 90, (height, width, 3)).astype(np.uint8)
        pixels[..., kind] += 150
        paths.append(folder / f"photo-{number:02d}.jpg")
        Image.fromarray(pixels).save(paths[-1], quality=95)
    return paths


def write_reader_model(path: Path) -> None:
    """A small classifier on resnet50-preprocessed 224x224 photos (BGR, mean subtracted), saved as .keras."""
    keras = seeded_keras()
    inputs = keras.Input(shape=(224, 224, 3), name="image")
    pooled = keras.layers.GlobalAveragePooling2D(name="pool")(inputs)
    outputs = keras.layers.Dense(3, activation="softmax", name="kinds")(
        keras.layers.Rescaling(1 / 64, name="scale")(pooled))
    model = keras.Model(inputs, outputs, name="reader_model")
    rng = np.random.default_rng(4)
    kinds = rng.integers(0, 3, 300)
    means = np.full((300, 3), -60.0, np.float32)
    means[np.arange(300), 2 - kinds] = 90.0  # BGR: red (kind 0) is the last channel
    batch = (means[:, None, None, :] + rng.normal(0, 20, (300, 8, 8, 3))).astype(np.float32)
    model.compile(optimizer=keras.optimizers.Adam(5e-2), loss="sparse_categorical_crossentropy")
    model.fit(keras.ops.image.resize(batch, (224, 224)), kinds, epochs=20, batch_size=50, verbose=0)
    model.save(path)


def test_the_validation_npz_lines_run_and_what_they_write_converts(user):
    folder, env = user
    (snippet,) = [block for block in blocks("python") if "np.savez" in block]  # the validation.npz one
    keras_file = folder / "reader_model.keras"
    write_reader_model(keras_file)
    photo_dir = folder / "photos"
    photo_dir.mkdir()
    photo_paths = photos_of_three_kinds(photo_dir)
    model_dir = folder / "saved_model" / "my_model"
    preamble = ("import keras\n\n"
                f"model = keras.models.load_model({str(keras_file)!r})\n"
                f"photo_paths = sorted(__import__('pathlib').Path('photos').glob('*.jpg'))\n"
                "model.export('saved_model/my_model', verbose=False)\n")
    (folder / "make_validation.py").write_text(preamble + snippet)
    done = subprocess.run(["python", "make_validation.py"], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr

    samples = np.load(model_dir / "validation.npz")
    shapes = samples["raw_image_shapes"]
    assert len(shapes) == len(photo_paths) and samples["expected"].shape == (len(photo_paths), 3)
    assert samples["raw_images"].size == int(np.prod(shapes, axis=1).sum())
    sidecar = {"schema": 1, "name": "my_model", "task": "image_classification", "labels": ["red", "green", "blue"],
               "output": "probabilities",
               "preprocessing": {"type": "image", "size": [224, 224], "keras_applications": "resnet50"},
               "inputs": {"image": "image"}, "validation": {"samples": "validation.npz"}}
    (model_dir / "sidecar.json").write_text(json.dumps(sidecar))
    done = subprocess.run(["lambda-tflite", "convert", "saved_model/my_model", "models/my_model"], cwd=folder,
                          env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    manifest = json.loads((folder / "models" / "my_model" / "manifest.json").read_text())
    assert manifest["fidelity"]["served"]["passed"] is True, manifest["fidelity"]
