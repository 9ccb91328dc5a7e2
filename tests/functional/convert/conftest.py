"""Tiny real SavedModels for the conversion tests, built once per session in seconds (sklearn digits, synthetic text).

Each is exported the way users must export (`model.export()`), with sidecar.json and validation samples per
docs/model-format.md; the broken ones reproduce real mistakes (tf.saved_model.save, string ops, no signature).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.support.convert_models import SEED, digits_split, image_sidecar, seeded_keras, write_model_dir

SEQUENCE_LENGTH = 12
VOCABULARY = ["[PAD]", "[UNK]"] + [f"w{i}" for i in range(30)]
POSITIVE_TOKEN = "w7"  # the synthetic sentiment: a sentence is positive when it contains this word


@pytest.fixture(scope="session")
def models_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("convert-models")


@pytest.fixture(scope="session")
def trained_digits_model():
    keras = seeded_keras()
    x_train, y_train, _, _ = digits_split()
    inputs = keras.Input(shape=(8, 8, 1), name="pixels")
    x = keras.layers.Conv2D(8, 3, padding="same", activation="relu", name="conv")(inputs)
    x = keras.layers.Flatten(name="flatten")(x)
    outputs = keras.layers.Dense(10, activation="softmax", name="probabilities")(x)
    model = keras.Model(inputs, outputs, name="tiny_digits")
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="sparse_categorical_crossentropy")
    model.fit(x_train, y_train, epochs=8, batch_size=64, verbose=0)
    return model


@pytest.fixture(scope="session")
def image_saved_model(models_root, trained_digits_model) -> Path:
    """A digits CNN with sidecar, 297 labelled validation images and 200 representative ones."""
    x_train, _, x_test, y_test = digits_split()
    return write_model_dir(models_root / "tiny_digits", trained_digits_model, image_sidecar("tiny_digits"),
                           {"inputs_image": x_test, "labels": y_test}, {"inputs_image": x_train[:200]})


@pytest.fixture(scope="session")
def sidecarless_saved_model(models_root, trained_digits_model) -> Path:
    """The same CNN exported bare: no sidecar, no samples (users bring these too)."""
    return write_model_dir(models_root / "bare_digits", trained_digits_model, None, None)


def synthetic_sentences(count: int, rng: np.random.Generator):
    """Token ids padded to SEQUENCE_LENGTH, their attention masks, and whether POSITIVE_TOKEN occurs."""
    positive_id = VOCABULARY.index(POSITIVE_TOKEN)
    ids = np.zeros((count, SEQUENCE_LENGTH), dtype=np.int32)
    mask = np.zeros_like(ids)
    labels = np.zeros(count, dtype=np.int64)
    for row in range(count):
        length = rng.integers(3, SEQUENCE_LENGTH + 1)
        ids[row, :length] = rng.integers(2, len(VOCABULARY), size=length)
        if rng.random() < 0.5:
            ids[row, rng.integers(0, length)] = positive_id
        mask[row, :length] = 1
        labels[row] = int(positive_id in ids[row, :length])
    return ids, mask, labels


def write_tokenizer(path: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers

    tokenizer = Tokenizer(models.WordLevel({word: i for i, word in enumerate(VOCABULARY)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(path))


@pytest.fixture(scope="session")
def text_saved_model(models_root) -> Path:
    """Two int32 inputs (input_ids, attention_mask), a real tokenizer.json, and a learnable synthetic task."""
    keras = seeded_keras()
    rng = np.random.default_rng(SEED)
    ids, mask, labels = synthetic_sentences(800, rng)
    input_ids = keras.Input(shape=(SEQUENCE_LENGTH,), dtype="int32", name="input_ids")
    attention_mask = keras.Input(shape=(SEQUENCE_LENGTH,), dtype="int32", name="attention_mask")
    embedded = keras.layers.Embedding(len(VOCABULARY), 8, name="embedding")(input_ids)
    weights = keras.layers.Reshape((SEQUENCE_LENGTH, 1), name="mask_column")(
        keras.ops.cast(attention_mask, "float32"))
    pooled = keras.layers.GlobalMaxPooling1D(name="pool")(keras.layers.Multiply(name="masked")([embedded, weights]))
    outputs = keras.layers.Dense(2, activation="softmax", name="probabilities")(pooled)
    model = keras.Model([input_ids, attention_mask], outputs, name="tiny_text")
    model.compile(optimizer=keras.optimizers.Adam(3e-2), loss="sparse_categorical_crossentropy")
    model.fit({"input_ids": ids[:600], "attention_mask": mask[:600]}, labels[:600], epochs=15, batch_size=32, verbose=0)
    directory = models_root / "tiny_text"
    sidecar = {
        "schema": 1, "name": "tiny_text", "task": "text_classification", "labels": ["negative", "positive"],
        "output": "probabilities",
        "preprocessing": {"type": "text", "tokenizer": "tokenizer.json", "max_length": SEQUENCE_LENGTH,
                          "lowercase": False},
        "inputs": {"input_ids": "input_ids", "attention_mask": "attention_mask"},
        "validation": {"samples": "validation.npz"},
    }
    write_model_dir(directory, model, None, {"inputs_input_ids": ids[600:], "inputs_attention_mask": mask[600:],
                                             "labels": labels[600:]})
    write_tokenizer(directory / "tokenizer.json")
    (directory / "sidecar.json").write_text(json.dumps(sidecar, indent=2))
    return directory


EMBEDDING_DIMENSIONS = 8


def text_embedding_sidecar(name: str) -> dict:
    return {
        "schema": 1, "name": name, "task": "text_embedding",
        "preprocessing": {"type": "text", "tokenizer": "tokenizer.json", "max_length": SEQUENCE_LENGTH,
                          "lowercase": False},
        "inputs": {"input_ids": "input_ids", "attention_mask": "attention_mask"},
        "validation": {"samples": "validation.npz"},
    }


@pytest.fixture(scope="session")
def embedding_saved_model(models_root) -> Path:
    """Token embeddings, a tanh projection and a mean over real tokens only; the sequence length is open (None),
    as the function pads each batch to its own longest text. Untrained: the gate compares, it does not judge."""
    keras = seeded_keras()
    rng = np.random.default_rng(SEED)
    ids, mask, _ = synthetic_sentences(200, rng)
    input_ids = keras.Input(shape=(None,), dtype="int32", name="input_ids")
    attention_mask = keras.Input(shape=(None,), dtype="int32", name="attention_mask")
    tokens = keras.layers.Embedding(len(VOCABULARY), 16, name="embedding")(input_ids)
    tokens = keras.layers.Dense(EMBEDDING_DIMENSIONS, activation="tanh", name="project")(tokens)
    weights = keras.ops.expand_dims(keras.ops.cast(attention_mask, "float32"), -1)
    pooled = keras.ops.sum(tokens * weights, axis=1) / keras.ops.maximum(keras.ops.sum(weights, axis=1), 1.0)
    model = keras.Model([input_ids, attention_mask], pooled, name="tiny_embedding")
    directory = write_model_dir(models_root / "tiny_embedding", model, None,
                                {"inputs_input_ids": ids, "inputs_attention_mask": mask})
    write_tokenizer(directory / "tokenizer.json")
    (directory / "sidecar.json").write_text(json.dumps(text_embedding_sidecar("tiny_embedding"), indent=2))
    return directory


def tensor_inputs(count: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Two float inputs on very different scales, as raw tabular features are."""
    features = (rng.normal(size=(count, 4)) * np.array([1.0, 10.0, 100.0, 0.1])).astype(np.float32)
    extra = rng.uniform(0, 5, size=(count, 3)).astype(np.float32)
    return {"features": features, "extra": extra}


@pytest.fixture(scope="session")
def tensor_saved_model(models_root) -> Path:
    """Two inputs (features, extra) and two outputs (category probabilities, a price), trained for a few epochs
    on a synthetic rule so that the outputs vary as a real model's do."""
    keras = seeded_keras()
    rng = np.random.default_rng(SEED)
    train, validation, representative = tensor_inputs(600, rng), tensor_inputs(150, rng), tensor_inputs(200, rng)
    features, extra = keras.Input(shape=(4,), name="features"), keras.Input(shape=(3,), name="extra")
    scaled = keras.layers.Normalization(name="scale")
    scaled.adapt(train["features"])
    hidden = keras.layers.Dense(16, activation="relu", name="hidden")(
        keras.layers.Concatenate(name="merge")([scaled(features), extra]))
    outputs = {"category": keras.layers.Dense(3, activation="softmax", name="category")(hidden),
               "price": keras.layers.Dense(1, name="price")(hidden)}
    model = keras.Model({"features": features, "extra": extra}, outputs, name="tiny_tensor")
    price = train["features"][:, 1:2] * 3.0 + train["extra"][:, :1] * 20.0
    category = (train["extra"][:, 1] > 2.5).astype(np.int64) + (train["features"][:, 0] > 1.0)
    model.compile(optimizer=keras.optimizers.Adam(1e-2),
                  loss={"category": "sparse_categorical_crossentropy", "price": "mse"})
    model.fit(train, {"category": category, "price": price}, epochs=10, batch_size=64, verbose=0)
    sidecar = {"schema": 1, "name": "tiny_tensor", "task": "tensor", "inputs": ["features", "extra"],
               "validation": {"samples": "validation.npz", "representative": "representative.npz"}}
    return write_model_dir(models_root / "tiny_tensor", model, sidecar,
                           {f"inputs_{name}": array for name, array in validation.items()},
                           {f"inputs_{name}": array for name, array in representative.items()})


@pytest.fixture(scope="session")
def feature_model_declared_as_image(models_root) -> Path:
    """One float feature vector in, class probabilities out, and a sidecar that calls it an image classifier."""
    keras = seeded_keras()
    features = keras.Input(shape=(4,), name="features")
    model = keras.Model(features, keras.layers.Dense(10, activation="softmax", name="classes")(features))
    sidecar = image_sidecar("features", "features")
    del sidecar["validation"]["representative"]
    rng = np.random.default_rng(SEED)
    return write_model_dir(models_root / "features", model, sidecar,
                           {"inputs_image": rng.normal(size=(20, 4)).astype(np.float32)})


@pytest.fixture(scope="session")
def two_output_image_saved_model(models_root) -> Path:
    """A digits-shaped image model with a second (auxiliary) output that a classifier would drop."""
    keras = seeded_keras()
    pixels = keras.Input(shape=(8, 8, 1), name="pixels")
    flat = keras.layers.Flatten(name="flatten")(pixels)
    outputs = {"digit": keras.layers.Dense(10, activation="softmax", name="digit")(flat),
               "ink": keras.layers.Dense(1, name="ink")(flat)}
    model = keras.Model(pixels, outputs, name="two_outputs")
    _, _, x_test, y_test = digits_split()
    return write_model_dir(models_root / "two_outputs", model, image_sidecar("two_outputs"),
                           {"inputs_image": x_test[:50], "labels": y_test[:50]}, {"inputs_image": x_test[:50]})


@pytest.fixture(scope="session")
def weightless_saved_model(models_root, trained_digits_model, image_saved_model) -> Path:
    """The weightless-export trap: tf.saved_model.save() of a Keras 3 model; TF predicts from it, the converter drops
    weights."""
    import tensorflow as tf

    directory = models_root / "weightless_digits"
    tf.saved_model.save(trained_digits_model, str(directory))
    input_name = next(iter(tf.saved_model.load(str(directory)).signatures["serving_default"]
                           .structured_input_signature[1]))
    for name in ("validation.npz", "representative.npz"):
        shutil.copyfile(image_saved_model / name, directory / name)
    (directory / "sidecar.json").write_text(json.dumps(image_sidecar("weightless_digits", input_name)))
    return directory


@pytest.fixture(scope="session")
def string_input_saved_model(models_root) -> Path:
    """Raw text in, TextVectorization inside: needs Flex string ops that LiteRT cannot run."""
    keras = seeded_keras()
    vectorize = keras.layers.TextVectorization(max_tokens=20, output_sequence_length=6, name="vectorize")
    vectorize.adapt(["a good film", "a bad film", "good acting"])
    text = keras.Input(shape=(1,), dtype="string", name="text")
    embedded = keras.layers.Embedding(20, 4, name="embed")(vectorize(text))
    pooled = keras.layers.GlobalAveragePooling1D(name="pool")(embedded)
    model = keras.Model(text, keras.layers.Dense(2, activation="softmax", name="out")(pooled))
    return write_model_dir(models_root / "string_input", model, None, None)


@pytest.fixture(scope="session")
def two_float_inputs_saved_model(models_root) -> Path:
    """Two anonymous float inputs and no sidecar: nothing says which is which."""
    keras = seeded_keras()
    left, right = keras.Input(shape=(4,), name="left"), keras.Input(shape=(4,), name="right")
    merged = keras.layers.Concatenate(name="merge")([left, right])
    model = keras.Model([left, right], keras.layers.Dense(3, activation="softmax", name="out")(merged))
    return write_model_dir(models_root / "two_float_inputs", model, None, None)


@pytest.fixture(scope="session")
def no_signature_saved_model(models_root) -> Path:
    """A valid SavedModel with no serving_default signature (a bare tf.Module)."""
    import tensorflow as tf

    directory = models_root / "no_signature"
    tf.saved_model.save(tf.Module(), str(directory))
    return directory


@pytest.fixture
def run_convert(capsys):
    """Calls the CLI's main() in-process (TensorFlow is imported once per session) and returns (code, out, err)."""
    from convert.__main__ import main

    def run(*argv) -> tuple[int, str, str]:
        code = main([str(arg) for arg in argv])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run
