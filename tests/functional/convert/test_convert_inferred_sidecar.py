"""A `.keras` file converts without a sidecar: convert infers it from the model (task, output, input, preprocessing
inside it or found on the raw samples) and the files beside it (labels.txt, validation.npz with raw samples +
expected), and the function then answers held-out raw inputs as Keras does: the same label, every score within the
gate's bound."""
from __future__ import annotations

import io
import json
from base64 import b64encode

import numpy as np
import pytest
from PIL import Image

from convert.fidelity.classification import SCORE_BOUNDS
from function.catalog.registry import ModelRegistry
from function.entry import handle_event
from tests.support.convert_models import digits_split, seeded_keras
from kit.events import http_api_event
from tests.support.function_fixtures import make_service

pytestmark = pytest.mark.slow

TINT = np.array([1.0, 0.55, 0.15])
SIDE = 16
DIGIT_NAMES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
TOPICS = ("amazonReviewSnippets", "movieReviewSnippets", "tweets")
MODE = "float16"


def photos(images: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """8x8 digits (0..1) as orange-on-noise 16x16 RGB uint8 photos."""
    big = np.repeat(np.repeat(images[:, :, :, 0], 2, axis=1), 2, axis=2)
    return np.clip(big[..., None] * TINT * 230 + rng.uniform(0, 25, size=(*big.shape, 3)), 0, 255).astype(np.uint8)


def post(service, path: str, body: dict) -> dict:
    result = handle_event(service, http_api_event("POST", path, body), None)
    assert result["statusCode"] == 200, result["body"]
    return json.loads(result["body"])


def converted(run_convert, source, out_root) -> tuple[str, object]:
    code, out, err = run_convert(source, out_root / "served", "--quantization", MODE)
    assert code == 0, err
    registry = ModelRegistry(out_root)
    assert not registry.unservable, registry.unservable
    return out, make_service(registry)


@pytest.mark.parametrize("rescaling", ["inside", "outside", "saved_model"])
def test_an_image_classifier_keras_file_converts_without_a_sidecar_and_answers_as_keras(rescaling, tmp_path,
                                                                                       run_convert):
    """inside: a Rescaling layer takes 0..255 pixels; outside: the user's pipeline gives [-1, 1] pixels, which
    convert finds on the raw samples against expected; saved_model: the same, exported with model.export() and
    labels.txt + validation.npz put in its directory."""
    keras = seeded_keras()
    rng = np.random.default_rng(5)
    x_train, y_train, x_test, _ = digits_split()
    train, held_out, validation = photos(x_train, rng), photos(x_test[:60], rng), photos(x_test[60:160], rng)

    def theirs(pixels):
        return pixels.astype(np.float32) if rescaling == "inside" else pixels.astype(np.float32) / 127.5 - 1.0

    inputs = keras.Input((SIDE, SIDE, 3), name="photo")
    x = keras.layers.Rescaling(1 / 255, name="rescale")(inputs) if rescaling == "inside" else inputs
    x = keras.layers.Conv2D(8, 3, activation="relu")(x)
    x = keras.layers.Flatten()(keras.layers.MaxPooling2D()(x))
    model = keras.Model(inputs, keras.layers.Dense(10, activation="softmax", name="digit")(x))
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="sparse_categorical_crossentropy")
    model.fit(theirs(train), y_train, epochs=4, batch_size=64, verbose=0)
    if rescaling == "saved_model":
        folder = source = tmp_path / "digits"
        model.export(str(folder), verbose=False)
    else:
        folder = tmp_path / "my_digits"
        folder.mkdir()
        source = folder / "digits.keras"
        model.save(source)
    (folder / "labels.txt").write_text("\n".join(DIGIT_NAMES) + "\n")
    np.savez(folder / "validation.npz", raw_images=validation, expected=model.predict(theirs(validation), verbose=0))

    out, service = converted(run_convert, source, tmp_path / "models")
    assert "sidecar task: a float (N, height, width, channels) input and the last layer (" in out
    assert "sidecar labels: labels.txt beside the model (10 lines)" in out
    if rescaling != "inside":
        assert "preprocessing inferred from the raw samples against expected: tf preprocessing" in out
    manifest = json.loads((tmp_path / "models" / "served" / "manifest.json").read_text())
    assert manifest["task"] == "image_classification" and manifest["labels"] == DIGIT_NAMES
    wanted = model.predict(theirs(held_out), verbose=0)
    for photo, scores in zip(held_out, wanted):
        buffer = io.BytesIO()
        Image.fromarray(photo).save(buffer, "PNG")
        body = post(service, "/classify", {"model": "digits", "image": b64encode(buffer.getvalue()).decode(),
                                           "top_k": 10})
        prediction = body["predictions"][0]
        assert prediction["label"] == DIGIT_NAMES[int(np.argmax(scores))]
        served = {entry["label"]: entry["score"] for entry in prediction["top_k"]}
        assert max(abs(served[name] - float(score)) for name, score in zip(DIGIT_NAMES, scores)) <= SCORE_BOUNDS[MODE]


def test_a_text_vectorization_topic_classifier_converts_without_a_sidecar_and_answers_as_keras(tmp_path,
                                                                                              run_convert):
    import tensorflow as tf

    from saved_model.recipes.vader_corpus import load_rated_sentences

    keras = seeded_keras()
    sentences = [s for s in load_rated_sentences() if s.source in TOPICS]
    order = np.random.default_rng(11).permutation(len(sentences))
    texts = np.array([sentences[i].text for i in order])
    topics = np.array([TOPICS.index(sentences[i].source) for i in order])
    train, train_topics, validation, held_out = texts[:3000], topics[:3000], texts[3000:3150], texts[3150:3250]
    vectorize = keras.layers.TextVectorization(max_tokens=2000, output_sequence_length=24, name="vectorize")
    vectorize.adapt(train)
    model = keras.Sequential([keras.Input((1,), dtype="string", name="text"), vectorize,
                              keras.layers.Embedding(2000, 16, name="embedding"),
                              keras.layers.GlobalAveragePooling1D(name="pool"),
                              keras.layers.Dense(3, activation="softmax", name="topic")], name="topics")
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(tf.constant(train[:, None]), train_topics, epochs=3, batch_size=64, verbose=0)
    folder = tmp_path / "my_topics"
    folder.mkdir()
    model.save(folder / "topics.keras")
    (folder / "labels.txt").write_text("\n".join(TOPICS) + "\n")
    np.savez(folder / "validation.npz", raw_texts=validation,
             expected=model.predict(tf.constant(validation[:, None]), verbose=0))

    out, service = converted(run_convert, folder / "topics.keras", tmp_path / "models")
    assert "sidecar task: a TextVectorization input and the last layer (Dense, activation softmax, 3 unit(s))" in out
    manifest = json.loads((tmp_path / "models" / "served" / "manifest.json").read_text())
    assert manifest["task"] == "text_classification" and manifest["labels"] == list(TOPICS)
    wanted = model.predict(tf.constant(held_out[:, None]), verbose=0)
    predictions = post(service, "/sentiment", {"model": "topics", "texts": [str(text) for text in held_out]})
    for prediction, scores in zip(predictions["predictions"], wanted):
        assert prediction["label"] == TOPICS[int(np.argmax(scores))]
        assert abs(prediction["score"] - float(scores.max())) <= SCORE_BOUNDS[MODE]


def small_image_model(keras, activation: str = "softmax", units: int = 10):
    inputs = keras.Input((SIDE, SIDE, 3), name="photo")
    x = keras.layers.Flatten()(keras.layers.Rescaling(1 / 255, name="rescale")(inputs))
    return keras.Model(inputs, keras.layers.Dense(units, activation=activation, name="out")(x))


def test_init_writes_the_inferred_sidecar_and_says_what_it_came_from(tmp_path, capsys):
    from convert.init_sidecar import main

    keras = seeded_keras()
    model = small_image_model(keras, "sigmoid", 4)
    model.save(tmp_path / "tags.keras")
    (tmp_path / "labels.txt").write_text("cat\ndog\nsky\ngrass\n")
    np.savez(tmp_path / "validation.npz", raw_images=np.zeros((2, SIDE, SIDE, 3), np.uint8),
             expected=np.zeros((2, 4), np.float32))
    assert main([str(tmp_path / "tags.keras"), "--out", str(tmp_path / "tags.json")]) == 0
    out = capsys.readouterr().out
    sidecar = json.loads((tmp_path / "tags.json").read_text())
    assert sidecar == {"schema": 1, "name": "tags", "task": "image_classification",
                       "labels": ["cat", "dog", "sky", "grass"], "output": "probabilities", "multi_label": True,
                       "preprocessing": {"type": "image", "color_mode": "RGB", "size": [SIDE, SIDE]},
                       "inputs": {"image": "photo"}, "validation": {"samples": "validation.npz"}}
    assert "multi_label: 4 sigmoid units: each label on its own" in out
    assert "layer 'rescale' inside the model rescales, so pixels go in as they are (0..255)" in out
    assert main([str(tmp_path / "tags.keras"), "--out", str(tmp_path / "tags.json")]) == 2
    assert "tags.json exists: review it" in capsys.readouterr().err


def test_every_problem_is_reported_in_one_run(tmp_path, run_convert):
    keras = seeded_keras()
    small_image_model(keras).save(tmp_path / "digits.keras")
    (tmp_path / "labels.txt").write_text("zero\none\n")
    code, _, err = run_convert(tmp_path / "digits.keras", tmp_path / "out")
    assert code == 2 and err.strip().endswith("[cannot_infer]"), err
    assert "2 problems to fix before convert can infer the sidecar: (1) labels.txt has 2 labels but the model's " \
           "output needs 10" in err
    assert "(2) no validation.npz beside the model" in err


@pytest.mark.parametrize(("activation", "declared", "fix"), [
    ("softmax", "logits", 'but the model ends in activation softmax (last layer Dense): write "output": '
                          '"probabilities"'),
    ("sigmoid", "logits", 'but the model ends in activation sigmoid (last layer Dense): write "output": '
                          '"probabilities"'),
])
def test_a_wrong_output_declaration_is_refused_naming_what_the_model_ends_in(tmp_path, run_convert, activation,
                                                                            declared, fix):
    keras = seeded_keras()
    small_image_model(keras, activation, 1 if activation == "sigmoid" else 10).save(tmp_path / "m.keras")
    np.savez(tmp_path / "validation.npz", raw_images=np.zeros((2, SIDE, SIDE, 3), np.uint8),
             expected=np.zeros((2, 10), np.float32))
    (tmp_path / "sidecar.json").write_text(json.dumps({"output": declared}))
    code, _, err = run_convert(tmp_path / "m.keras", tmp_path / "out", "--sidecar", tmp_path / "sidecar.json")
    assert code == 2 and f'"output" is "{declared}" {fix}' in err, err


def test_init_reads_a_saved_model_by_its_signature_and_expected(tmp_path, capsys):
    from convert.init_sidecar import main

    keras = seeded_keras()
    small_image_model(keras).export(str(tmp_path / "photos"), verbose=False)
    expected = np.full((2, 10), 0.1, np.float32)  # rows of probabilities: a softmax
    np.savez(tmp_path / "photos" / "validation.npz", raw_images=np.zeros((2, SIDE, SIDE, 3), np.uint8),
             expected=expected)
    assert main([str(tmp_path / "photos")]) == 0
    sidecar = json.loads((tmp_path / "photos" / "sidecar.json").read_text())
    assert sidecar["task"] == "image_classification" and sidecar["output"] == "probabilities"
    assert sidecar["preprocessing"] == {"type": "image", "color_mode": "RGB", "size": [SIDE, SIDE], "divisor": 255.0}
    assert sidecar["labels"] == [str(index) for index in range(10)]
    out = capsys.readouterr().out
    assert "labels: the class indices 0..9 (no labels.txt beside the model" in out
    assert "convert replaces the preprocessing guess with the one the raw samples show" in out
