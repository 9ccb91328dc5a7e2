"""The `digits` and `sentiment` demo SavedModels honour docs/model-format.md and the accuracy they claim.

Uses saved_model/<name> when `make models` has built it, else builds it into a temporary directory
(digits ~15 s, sentiment ~2-5 min on 2 cores).
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

from saved_model.recipes import digits, minilm_encoder, sentiment
from saved_model.recipes.vader_corpus import load_rated_sentences, polarity_split

REPO = Path(__file__).resolve().parents[2]
CONTRACT_KEYS = {"schema", "name", "task", "labels", "output", "preprocessing", "inputs", "validation"}
NON_ASCII_SENTENCE = "Ce film était génial 😀"


def built_model(name: str, recipe, tmp_path_factory) -> Path:
    directory = REPO / "saved_model" / name
    if (directory / "sidecar.json").is_file() and (directory / "saved_model.pb").is_file():
        return directory
    directory = tmp_path_factory.mktemp(name) / name
    recipe.build(directory)
    return directory


@pytest.fixture(scope="module")
def digits_dir(tmp_path_factory) -> Path:
    return built_model("digits", digits, tmp_path_factory)


@pytest.fixture(scope="module")
def sentiment_dir(tmp_path_factory) -> Path:
    return built_model("sentiment", sentiment, tmp_path_factory)


def read_sidecar(directory: Path) -> dict:
    return json.loads((directory / "sidecar.json").read_text(encoding="utf-8"))


def serving_signature(directory: Path):
    import tensorflow as tf  # noqa: PLC0415

    return tf.saved_model.load(str(directory)).signatures["serving_default"]


def predict(directory: Path, inputs: dict[str, np.ndarray]) -> np.ndarray:
    import tensorflow as tf  # noqa: PLC0415

    signature = serving_signature(directory)
    outputs = signature(**{name: tf.constant(value) for name, value in inputs.items()})
    assert len(outputs) == 1
    return next(iter(outputs.values())).numpy()


def assert_samples_fit_signature(directory: Path, sidecar: dict, file_key: str) -> dict[str, np.ndarray]:
    """Every role has an `inputs_<role>` array with the signature's dtype and per-example shape."""
    samples = dict(np.load(directory / sidecar["validation"][file_key]))
    _, specs = serving_signature(directory).structured_input_signature
    assert set(sidecar["inputs"].values()) == set(specs)
    inputs = {}
    for role, name in sidecar["inputs"].items():
        array = samples[f"inputs_{role}"]
        assert array.dtype == specs[name].dtype.as_numpy_dtype
        assert list(array.shape[1:]) == specs[name].shape.as_list()[1:]
        inputs[name] = array
    return inputs


def assert_contract_sidecar(sidecar: dict, task: str, labels: list[str]) -> None:
    assert CONTRACT_KEYS <= set(sidecar)
    assert sidecar["schema"] == 1 and sidecar["task"] == task and sidecar["labels"] == labels
    assert sidecar["output"] in ("probabilities", "logits")
    assert sidecar["preprocessing"]["type"] == task.split("_")[0]


# ---- digits ----------------------------------------------------------------------------------------------------

def test_digits_sidecar_follows_the_contract(digits_dir):
    sidecar = read_sidecar(digits_dir)
    assert_contract_sidecar(sidecar, "image_classification", [str(d) for d in range(10)])
    assert sidecar["preprocessing"] == {"type": "image", "color_mode": "L", "size": [8, 8], "resize": "bilinear",
                                        "mean": [0.0], "std": [255.0]}
    assert set(sidecar["inputs"]) == {"image"}
    assert_samples_fit_signature(digits_dir, sidecar, "representative")


def test_digits_validation_accuracy_matches_the_claim(digits_dir):
    sidecar = read_sidecar(digits_dir)
    inputs = assert_samples_fit_signature(digits_dir, sidecar, "samples")
    labels = np.load(digits_dir / "validation.npz")["labels"]
    probabilities = predict(digits_dir, inputs)
    accuracy = float(np.mean(probabilities.argmax(axis=1) == labels))
    assert probabilities.shape == (len(labels), 10)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-4)
    assert accuracy > 0.9
    assert accuracy == pytest.approx(sidecar["metrics"]["test_accuracy"], abs=1e-3)  # validation IS the test split


def png_bytes(image_0_to_16: np.ndarray) -> bytes:
    from PIL import Image  # noqa: PLC0415

    buffer = io.BytesIO()
    Image.fromarray(digits.pixels_as_png_values(image_0_to_16), mode="L").save(buffer, format="PNG")
    return buffer.getvalue()


def test_real_grayscale_pngs_preprocessed_per_the_sidecar_are_the_training_inputs(digits_dir):
    from PIL import Image  # noqa: PLC0415
    from sklearn.datasets import load_digits  # noqa: PLC0415

    preprocessing = read_sidecar(digits_dir)["preprocessing"]
    dataset = load_digits()
    x_train, _, x_test, _ = digits.load_split()
    known_inputs = np.concatenate([x_train, x_test])
    batch = []
    for image in dataset.images[:30]:
        decoded = Image.open(io.BytesIO(png_bytes(image))).convert(preprocessing["color_mode"])
        pixels = np.asarray(decoded, dtype=np.float32)
        batch.append(((pixels - preprocessing["mean"][0]) / preprocessing["std"][0])[:, :, None])
        assert np.any(np.all(np.isclose(known_inputs, batch[-1], atol=1e-6), axis=(1, 2, 3)))
    predicted = predict(digits_dir, {"image": np.stack(batch)}).argmax(axis=1)
    assert np.mean(predicted == dataset.target[:30]) >= 0.9


def test_digits_build_is_reproducible(tmp_path):
    digits.build(tmp_path / "one")
    digits.build(tmp_path / "two")
    one, two = np.load(tmp_path / "one" / "validation.npz"), np.load(tmp_path / "two" / "validation.npz")
    assert all(np.array_equal(one[key], two[key]) for key in ("inputs_image", "labels"))
    first, second = read_sidecar(tmp_path / "one"), read_sidecar(tmp_path / "two")
    # Float reductions on CPU threads are not bit-exact, so the weights may differ in the last bits only.
    assert first.pop("metrics")["test_accuracy"] == pytest.approx(second.pop("metrics")["test_accuracy"], abs=0.01)
    assert first == second


# ---- sentiment -------------------------------------------------------------------------------------------------

def test_sentiment_sidecar_follows_the_contract(sentiment_dir):
    sidecar = read_sidecar(sentiment_dir)
    assert_contract_sidecar(sidecar, "text_classification", ["negative", "positive"])
    preprocessing = sidecar["preprocessing"]
    assert preprocessing["tokenizer"] == "tokenizer.json" and (sentiment_dir / "tokenizer.json").is_file()
    assert preprocessing["max_length"] == sentiment.MAX_LENGTH
    assert "input_ids" in sidecar["inputs"] and set(sidecar["inputs"]) <= {"input_ids", "attention_mask"}
    representative = assert_samples_fit_signature(sentiment_dir, sidecar, "representative")
    assert all(array.dtype == np.int32 for array in representative.values())


def test_sentiment_validation_accuracy_reaches_the_claim(sentiment_dir):
    sidecar = read_sidecar(sentiment_dir)
    inputs = assert_samples_fit_signature(sentiment_dir, sidecar, "samples")
    labels = np.load(sentiment_dir / "validation.npz")["labels"]
    assert 500 <= len(labels) <= 1000
    scores = predict(sentiment_dir, inputs)
    assert scores.shape == (len(labels), 1)  # one sigmoid unit: P(positive)
    assert np.all((scores >= 0) & (scores <= 1))
    accuracy = float(np.mean((scores[:, 0] > 0.5) == labels))
    claimed = sidecar["metrics"]["test_accuracy"]
    assert claimed >= 0.76
    assert accuracy >= 0.76
    assert accuracy == pytest.approx(claimed, abs=0.03)  # a 1,000-sentence subset of the same test split


def test_sentiment_validation_is_the_tokenized_test_split(sentiment_dir):
    """The samples are what the shipped tokenizer.json makes of real test sentences, not arbitrary ids."""
    from tokenizers import Tokenizer  # noqa: PLC0415

    tokenizer = Tokenizer.from_file(str(sentiment_dir / "tokenizer.json"))
    split = polarity_split(load_rated_sentences(), seed=sentiment.SEED)
    samples = np.load(sentiment_dir / "validation.npz")
    ids, _ = minilm_encoder.encode(tokenizer, split.test_texts[:20])
    np.testing.assert_array_equal(samples["inputs_input_ids"][:20], ids)
    np.testing.assert_array_equal(samples["labels"], split.test_labels[: len(samples["labels"])])
    assert samples["raw_texts"].tolist() == split.test_texts[:len(samples["labels"])]  # the served gate's texts
    assert samples["expected"].shape == (len(samples["labels"]), 1)


def test_tokenizer_maps_non_ascii_text_to_ids_the_model_can_embed(sentiment_dir):
    import tensorflow as tf  # noqa: PLC0415
    from tokenizers import Tokenizer  # noqa: PLC0415

    tokenizer = Tokenizer.from_file(str(sentiment_dir / "tokenizer.json"))
    encoding = tokenizer.encode(NON_ASCII_SENTENCE)
    checkpoint = tf.train.load_checkpoint(str(sentiment_dir / "variables" / "variables"))
    embedding_rows = max(shape[0] for shape in checkpoint.get_variable_to_shape_map().values() if len(shape) == 2)

    assert len(encoding.ids) == sentiment.MAX_LENGTH
    assert all(0 <= i < embedding_rows for i in encoding.ids)
    assert tokenizer.get_vocab_size() == embedding_rows
    words = tokenizer.decode(encoding.ids)
    assert "film" in words and "genial" in words  # lowercased, accents stripped, not [UNK]
    score = predict(sentiment_dir, {"input_ids": np.array([encoding.ids], dtype=np.int32)})
    assert np.isfinite(score).all()


def test_tokenizer_truncates_long_text_to_max_length_keeping_the_end_marker(sentiment_dir):
    from tokenizers import Tokenizer  # noqa: PLC0415

    tokenizer = Tokenizer.from_file(str(sentiment_dir / "tokenizer.json"))
    encoding = tokenizer.encode("what a wonderful film " * 100)
    assert len(encoding.ids) == sentiment.MAX_LENGTH
    assert encoding.tokens[0] == "[CLS]" and encoding.tokens[-1] == "[SEP]"
    assert encoding.overflowing


def test_sentiment_split_and_tokenizer_are_the_same_every_build():
    """What a rebuild must not change: which sentences are test sentences and which ids they become."""
    first, second = sentiment.make_tokenizer(), sentiment.make_tokenizer()
    assert first.to_str() == second.to_str()
    sentences = load_rated_sentences()
    split_a, split_b = polarity_split(sentences, seed=sentiment.SEED), polarity_split(sentences, seed=sentiment.SEED)
    assert split_a.test_texts == split_b.test_texts
    ids_a, _ = minilm_encoder.encode(first, split_a.test_texts[:200])
    ids_b, _ = minilm_encoder.encode(second, split_b.test_texts[:200])
    np.testing.assert_array_equal(ids_a, ids_b)


@pytest.mark.parametrize("fixture", ["digits_dir", "sentiment_dir"])
def test_the_conversion_stage_accepts_the_sidecar(fixture, request):
    from convert.sidecar_reader import load_sidecar  # noqa: PLC0415  (the real consumer of the contract)

    directory = request.getfixturevalue(fixture)
    parsed = load_sidecar(directory)
    assert parsed is not None and parsed.name == directory.name
    assert parsed.samples.name == "validation.npz" and parsed.representative.name == "representative.npz"
