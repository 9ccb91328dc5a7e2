"""Keras text models with strings in, as the Keras tutorials make them, converted from their .keras file and served:
/sentiment on raw strings answers as `model.predict(strings)` does, for a pooled, an LSTM, a GRU and a
Bidirectional(LSTM) classifier, a multi-label model's label sets are Keras's thresholded sigmoids, and /embed on a
text_embedding model's raw strings gives model.predict's vectors."""
from __future__ import annotations

import json

import numpy as np
import pytest

from kit import keras_text_models as kt
from function.catalog.registry import ModelRegistry
from function.entry import handle_event
from kit.events import http_api_event
from tests.support.function_fixtures import make_service

pytestmark = pytest.mark.slow

REQUEST_TEXTS = 100  # under MAX_TEXT_BATCH


@pytest.fixture(scope="session")
def text_models_root(tmp_path_factory):
    return tmp_path_factory.mktemp("keras-text")


@pytest.fixture(scope="session")
def converted_sentiment(text_models_root, tmp_path_factory):
    """kind -> (model directory, converted models root), each trained and converted once per session."""
    from convert.__main__ import main

    made = {}

    def get(kind: str):
        if kind not in made:
            source = kt.trained_sentiment_dir(text_models_root, kind)
            out_root = tmp_path_factory.mktemp(f"served-{kind}")
            code = main([str(source / "model.keras"), str(out_root / source.name), "--sidecar",
                         str(source / "sidecar.json"), "--quantization", "float32"])
            assert code == 0
            made[kind] = source, out_root
        return made[kind]

    return get


def post(service, path: str, body: dict, status: int = 200) -> dict:
    result = handle_event(service, http_api_event("POST", path, body), None)
    assert result["statusCode"] == status, result["body"]
    return json.loads(result["body"])


def served_predictions(service, name: str, texts, **options) -> list[dict]:
    predictions = []
    for start in range(0, len(texts), REQUEST_TEXTS):
        chunk = [str(text) for text in texts[start:start + REQUEST_TEXTS]]
        predictions += post(service, "/sentiment", {"model": name, "texts": chunk, **options})["predictions"]
    return predictions


@pytest.mark.parametrize("kind", kt.BODIES)
def test_sentiment_from_a_keras_file_answers_as_model_predict_on_raw_strings(kind, converted_sentiment):
    import keras

    source, out_root = converted_sentiment(kind)
    texts = np.load(source / "validation.npz")["raw_texts"]
    assert len(texts) == kt.HELD_OUT
    probability = keras.saving.load_model(source / "model.keras").predict(kt.strings(texts), verbose=0)[:, 0]
    registry = ModelRegistry(out_root)
    assert not registry.unservable, registry.unservable
    predictions = served_predictions(make_service(registry), source.name, texts)
    labels = [p["label"] for p in predictions]
    assert labels == ["positive" if p > 0.5 else "negative" for p in probability]
    scores = np.array([p["score"] for p in predictions])
    assert np.abs(scores - np.maximum(probability, 1 - probability)).max() <= 1e-3
    assert len(set(labels)) == 2  # a model that learnt something: both labels occur on the held-out texts


def test_the_tokenizer_json_is_the_layers_own_tokenization(converted_sentiment):
    from tokenizers import Tokenizer

    source, out_root = converted_sentiment("pool")
    manifest = json.loads((out_root / source.name / "manifest.json").read_text())
    assert manifest["preprocessing"] == {"type": "text", "tokenizer": "tokenizer.json",
                                         "max_length": kt.SEQUENCE_LENGTH, "lowercase": False}
    assert manifest["inputs"][0]["role"] == "input_ids" and manifest["inputs"][0]["shape"] == [1, kt.SEQUENCE_LENGTH]
    tokenizer = Tokenizer.from_file(str(out_root / source.name / "tokenizer.json"))
    assert tokenizer.padding["pad_id"] == 0
    assert tokenizer.token_to_id("[UNK]") == 1
    assert tokenizer.encode("Zzyzx-qwv!").ids == [1]  # an unknown word, its punctuation stripped
    report = json.loads((out_root / source.name / "report.json").read_text())
    assert report["saved_model"].endswith("model.keras")


def test_an_lstm_exported_as_a_saved_model_is_refused_naming_the_layer(converted_sentiment, tmp_path, run_convert):
    import keras

    source, _ = converted_sentiment("lstm")
    model = keras.saving.load_model(source / "model.keras")
    ids = keras.Input((kt.SEQUENCE_LENGTH,), dtype="int32", name="input_ids")
    body = keras.Model(ids, model.layers[-1](model.layers[-2](model.layers[-3](ids))))  # without TextVectorization
    body.export(str(tmp_path / "lstm_saved_model"), verbose=False)
    code, _, err = run_convert(tmp_path / "lstm_saved_model", tmp_path / "out")
    assert code == 2
    assert err.strip().endswith("[recurrent_layer]")
    assert "recurrent layer 'lstm" in err and "unroll=True" in err and "MODEL.keras" in err
    assert len(err.strip().splitlines()) == 1


@pytest.fixture(scope="session")
def converted_multi_label(text_models_root, tmp_path_factory):
    from convert.__main__ import main

    source = kt.trained_multi_label_dir(text_models_root)
    out_root = tmp_path_factory.mktemp("served-tags")
    assert main([str(source / "model.keras"), str(out_root / source.name), "--sidecar", str(source / "sidecar.json"),
                 "--quantization", "float32"]) == 0
    return source, out_root


def test_multi_label_label_sets_are_keras_thresholded_sigmoids(converted_multi_label):
    import keras

    source, out_root = converted_multi_label
    texts = np.load(source / "validation.npz")["raw_texts"]
    sigmoids = keras.saving.load_model(source / "model.keras").predict(kt.strings(texts), verbose=0)
    manifest = json.loads((out_root / source.name / "manifest.json").read_text())
    assert manifest["multi_label"] is True
    assert {"label_set_agreement", "decision_agreement"} <= set(manifest["fidelity"])
    # The served gate answered the raw texts as /sentiment does and held label sets against model.predict's.
    served_gate = manifest["fidelity"]["served"]
    assert served_gate["passed"] and served_gate["label_set_agreement"] >= served_gate["threshold"]
    service = make_service(ModelRegistry(out_root))
    for threshold in (0.5, 0.3):
        predictions = served_predictions(service, source.name, texts, threshold=threshold)
        served = [{entry["label"] for entry in p["labels"]} for p in predictions]
        wanted = [{label for label, score in zip(kt.MULTI_LABELS, row) if score >= threshold} for row in sigmoids]
        assert served == wanted
        if threshold == 0.5:  # a model that learnt something: its label sets vary from text to text
            assert len({frozenset(labels) for labels in served}) >= 3
        for prediction, row in zip(predictions, sigmoids):
            scores = [entry["score"] for entry in prediction["labels"]]
            assert scores == sorted(scores, reverse=True)
            for entry in prediction["labels"]:
                assert abs(entry["score"] - row[kt.MULTI_LABELS.index(entry["label"])]) <= 1e-3


def test_the_threshold_is_part_of_the_cache_key_and_is_checked(converted_multi_label, converted_sentiment):
    source, out_root = converted_multi_label
    service = make_service(ModelRegistry(out_root))
    text = "What a wonderful, wonderful day!"
    first = post(service, "/sentiment", {"model": source.name, "text": text, "threshold": 0.0})["predictions"][0]
    assert len(first["labels"]) == len(kt.MULTI_LABELS) and not first["cached"]
    second = post(service, "/sentiment", {"model": source.name, "text": text, "threshold": 1.0})["predictions"][0]
    assert not second["cached"] and len(second["labels"]) < len(kt.MULTI_LABELS)
    again = post(service, "/sentiment", {"model": source.name, "text": text, "threshold": 0.0})["predictions"][0]
    assert again["cached"] and again["labels"] == first["labels"]
    for bad in (1.5, -0.1, "0.5", True, None):
        error = post(service, "/sentiment", {"model": source.name, "text": text, "threshold": bad}, status=400)
        assert error["error"]["code"] == "invalid_field" and "threshold" in error["error"]["message"]
    single, single_root = converted_sentiment("pool")
    error = post(make_service(ModelRegistry(single_root)), "/sentiment",
                 {"model": single.name, "text": text, "threshold": 0.5}, status=400)
    assert error["error"]["code"] == "invalid_field" and "multi-label" in error["error"]["message"]


def test_a_text_embedding_from_a_keras_file_embeds_raw_strings_as_model_predict(text_models_root, tmp_path):
    import keras

    from convert.__main__ import main

    source = kt.text_embedding_dir(text_models_root)
    out_root = tmp_path / "served"
    assert main([str(source / "model.keras"), str(out_root / source.name), "--sidecar", str(source / "sidecar.json"),
                 "--quantization", "float32"]) == 0
    manifest = json.loads((out_root / source.name / "manifest.json").read_text())
    assert [spec["role"] for spec in manifest["inputs"]] == ["input_ids"]  # fixed length: no attention mask
    texts = np.load(source / "validation.npz")["raw_texts"]
    wanted = keras.saving.load_model(source / "model.keras").predict(kt.strings(texts), verbose=0)
    service = make_service(ModelRegistry(out_root))
    got = []
    for start in range(0, len(texts), REQUEST_TEXTS):
        chunk = [str(text) for text in texts[start:start + REQUEST_TEXTS]]
        body = post(service, "/embed", {"model": source.name, "texts": chunk, "normalize": False})
        got += [entry["embedding"] for entry in body["embeddings"]]
    got = np.array(got)
    assert got.shape == (kt.HELD_OUT, kt.EMBEDDING_DIMENSIONS)
    assert np.abs(got - wanted).max() <= 1e-4
    assert np.std(wanted, axis=0).min() > 0  # the vectors differ from text to text
