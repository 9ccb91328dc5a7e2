"""docs/tensor-models.md, "Structured data": the documented model code runs as written (on the Palmer penguins'
training columns, tests/support/penguins.py), the documented convert command converts its penguins.keras, and each
documented request, sent with curl to the real local server, answers what the document shows: the error exactly,
the answers as the Keras model's predict gives them for the same raw rows (and the document's numbers to within
what a retraining elsewhere may move them)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from function.catalog.registry import ModelRegistry
from tests.support import penguins
from tests.support.function_fixtures import REPO, make_service
from tests.support.local_api import serving

pytestmark = pytest.mark.slow

DOC = REPO / "docs" / "tensor-models.md"
ADDRESS = "127.0.0.1:8080"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
ATOL = 1e-5


def blocks() -> list[tuple[str, str]]:
    doc = DOC.read_text(encoding="utf-8")
    start = doc.index("\n## 6. Structured data")
    return FENCE.findall(doc[start:])


def consoles() -> list[tuple[str, str]]:
    """(command, the output the document shows) of each console block."""
    found = []
    for language, text in blocks():
        if language == "console":
            command, output = text.rstrip("\n").split("\n", 1)
            found.append((command.removeprefix("$ "), output))
    return found


@pytest.fixture(scope="module")
def documented(tmp_path_factory):
    """The document's model code run as written in a fresh folder, then its convert command; the trained model."""
    folder = tmp_path_factory.mktemp("penguins_doc")
    keras = __import__("tests.support.convert_models", fromlist=["seeded_keras"]).seeded_keras()
    keras.utils.set_random_seed(3)
    train, labels, _, _ = penguins.split()
    (program,) = [text for language, text in blocks() if language == "python"]
    (command,) = [text for language, text in blocks() if language == "bash"]
    here = os.getcwd()
    os.chdir(folder)
    try:
        namespace = {"train": train, "train_ds": penguins.dataframe_to_dataset(train, labels)}
        exec(program, namespace)  # noqa: S102  (the document's code, as a reader runs it)
    finally:
        os.chdir(here)
    argv = command.strip().split()
    assert argv[:3] == [".venv/bin/python", "-m", "convert"]
    run = subprocess.run([sys.executable, *argv[1:]], cwd=folder, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert run.returncode == 0, run.stderr
    assert "column 'island': StringLookup" in run.stdout and "the served path was checked" in run.stdout
    return folder, namespace["model"]


@pytest.fixture(scope="module")
def api(documented):
    folder, _ = documented
    registry = ModelRegistry(folder / "models")
    assert not registry.unservable, registry.unservable
    with serving(make_service(registry)) as url:
        yield url.removeprefix("http://")


def _curl(command: str, api: str) -> str:
    assert shutil.which("curl"), "curl runs the documented commands"
    run = subprocess.run(["bash", "-c", command.replace(ADDRESS, api)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return run.stdout.rstrip("\n")


def _rows_sent(command: str) -> list[dict]:
    body = json.loads(command.split(" -d '", 1)[1].rstrip("'"))
    if "instances" in body:
        return body["instances"]
    return [{item["name"]: item["data"][0] for item in body["inputs"]}]


def _predict(model, rows: list[dict]) -> np.ndarray:
    import tensorflow as tf

    columns = {name: [row[name] for row in rows] for name in rows[0]}
    fed = {name: tf.constant(np.array(values, dtype=object if isinstance(values[0], str) else
                                      ("int64" if name == "year" else "float32")).reshape(-1, 1))
           for name, values in columns.items()}
    return np.asarray(model.predict(fed, verbose=0))


def test_the_document_shows_three_requests():
    assert len(consoles()) == 3


@pytest.mark.parametrize("index", [0, 1])
def test_the_documented_answers_are_the_keras_models(api, documented, index):
    _, model = documented
    command, shown = consoles()[index]
    answer = json.loads(_curl(command, api))
    served = np.array(answer["predictions"] if "predictions" in answer else
                      [answer["outputs"][0]["data"]], dtype=np.float64)
    wanted = _predict(model, _rows_sent(command))
    np.testing.assert_allclose(served, wanted, atol=ATOL, rtol=0)
    documented_answer = json.loads(shown)
    in_doc = np.array(documented_answer["predictions"] if "predictions" in documented_answer else
                      [documented_answer["outputs"][0]["data"]])
    assert in_doc.shape == served.shape and (in_doc.argmax(axis=1) == served.argmax(axis=1)).all()
    assert np.abs(in_doc - served).max() < 0.1  # the document's run and this one train the same seeded model


def test_the_documented_error_is_answered_as_shown(api):
    command, shown = consoles()[2]
    assert _curl(command, api) == shown
