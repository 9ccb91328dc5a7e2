"""A convolution over an open-length sequence (token ids -> embedding -> Conv1D -> max over time, as keras.io's text
CNNs are built), converted by the real convert and served by the real function. LiteRT cannot size such a graph at
the 1 token its open length is saved as, nor for a request shorter than the kernel, and neither can Keras: convert
probes its bounds from the shortest length it runs at, the function loads it (its weights packed on the first call
instead of when it loads), answers full-length inputs as the Keras model does, and a too-short request gets 400
(invalid_shape), the model answering the next one as before."""
from __future__ import annotations

import json

import numpy as np
import pytest

from function.catalog.registry import ModelRegistry
from function.entry import handle_event
from function.model.manifest import load_manifest
from function.model.runner import ModelRunner
from kit.events import http_api_event
from tests.support.convert_models import SEED, seeded_keras, write_model_dir
from tests.support.function_fixtures import make_service

KERNEL, VOCABULARY, LENGTH = 5, 50, 12


@pytest.fixture(scope="module")
def sequence_cnn(tmp_path_factory):
    """(the converted model directory, the Keras model)."""
    keras = seeded_keras()
    ids = keras.Input(shape=(None,), dtype="int32", name="ids")
    hidden = keras.layers.Embedding(VOCABULARY, 8)(ids)
    hidden = keras.layers.Conv1D(4, KERNEL, activation="relu")(hidden)
    scores = keras.layers.Dense(3, activation="softmax", name="scores")(keras.layers.GlobalMaxPooling1D()(hidden))
    model = keras.Model(ids, scores, name="sequence_cnn")
    samples = np.random.default_rng(SEED).integers(1, VOCABULARY, (40, LENGTH)).astype(np.int32)
    root = tmp_path_factory.mktemp("sequence_cnn")
    saved = write_model_dir(root / "saved", model, {"schema": 1, "name": "sequence_cnn", "task": "tensor",
                                                     "validation": {"samples": "validation.npz"}},
                            {"inputs_ids": samples})
    from convert.__main__ import main  # noqa: PLC0415 (TensorFlow: imported once seeded_keras has)

    out = root / "models" / "sequence_cnn"
    assert main([str(saved), str(out), "--quantization", "float32"]) == 0
    return out, model


def test_convert_probes_its_bounds_from_the_shortest_length_it_runs_at(sequence_cnn):
    out, _ = sequence_cnn
    (ids,) = json.loads((out / "manifest.json").read_text())["inputs"]
    assert ids["value_range"] == [0, VOCABULARY - 1]  # checked at 5 tokens, the kernel's width
    assert ids["max_shape"][0] == -1 and ids["max_shape"][1] >= 1024  # no position table: long texts run


def predict(service, instances: list) -> tuple[int, dict]:
    body = {"instances": instances}
    result = handle_event(service, http_api_event("POST", "/v1/models/sequence_cnn:predict", body), None)
    return result["statusCode"], json.loads(result["body"])


def test_it_loads_though_its_saved_shape_cannot_be_sized_and_packs_on_its_first_call(sequence_cnn):
    out, model = sequence_cnn
    runner = ModelRunner(load_manifest(out))
    assert not runner.weights_packed  # the 1 token saved for the open length is under the kernel's 5
    ids = np.random.default_rng(1).integers(1, VOCABULARY, (3, LENGTH)).astype(np.int32)
    (got,) = runner.run({"ids": ids}).values()
    assert runner.weights_packed
    np.testing.assert_allclose(got, model.predict(ids, verbose=0), rtol=1e-5, atol=1e-6)


def test_a_sequence_under_the_kernel_is_refused_400_and_the_model_keeps_answering(sequence_cnn):
    out, model = sequence_cnn
    service = make_service(ModelRegistry(out.parent))
    full = np.random.default_rng(2).integers(1, VOCABULARY, (2, LENGTH)).astype(np.int32)
    status, answer = predict(service, full.tolist())
    assert status == 200, answer
    np.testing.assert_allclose(answer["predictions"], model.predict(full, verbose=0), rtol=1e-5, atol=1e-6)
    status, answer = predict(service, [[3, 4, 5]])  # 3 tokens: the convolution has no output position
    assert status == 400, answer
    assert "cannot run on inputs of shapes" in answer["error"] and "kernel" in answer["error"]  # TF Serving's shape
    status, again = predict(service, full.tolist())
    assert status == 200 and again["predictions"] == answer_of(service, full)


def answer_of(service, ids: np.ndarray) -> list:
    return predict(service, ids.tolist())[1]["predictions"]
