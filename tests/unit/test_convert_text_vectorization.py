"""A TextVectorization layer's settings -> tokenizer.json: exactly the layer's ids on every standardize/split mode,
and each setting a WordLevel tokenizer cannot reproduce refused in one line that names it."""
from __future__ import annotations

import os

import numpy as np
import pytest

from convert.errors import ConversionError
from convert.text_vectorization import check_settings, check_vocabulary, write_tokenizer
from function.preprocessing.text import TextEncoder

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

# Texts where a near miss would show: Unicode case (tf.strings.lower is ASCII-only), whitespace that
# tf.strings.split does not split on (no-break and em spaces, NEL), runs and edges of whitespace, punctuation.
EDGE_TEXTS = ["  Leading and   trailing\t\n", "ÉCOLE École straße İstanbul", "no\u00a0break\u2003em\u0085nel",
              "a\x0bb\x0cc\rd", "don't-stop!!! (ok) [x] {y} a_b", "UPPER lower MiXeD", "emoji 😀😀 ok", "ǅ ß ﬁ",
              "!!!", "one"]
DEFAULT = {"output_mode": "int", "ngrams": None, "standardize": "lower_and_strip_punctuation", "split": "whitespace",
           "ragged": False, "output_sequence_length": 16, "encoding": "utf-8"}


def corpus() -> list[str]:
    from saved_model.recipes.vader_corpus import load_rated_sentences

    return EDGE_TEXTS + [s.text for s in load_rated_sentences()[:600]]


@pytest.mark.slow
@pytest.mark.parametrize("standardize", ["lower_and_strip_punctuation", "lower", "strip_punctuation", None])
@pytest.mark.parametrize("split", ["whitespace", "character", None])
def test_the_tokenizer_gives_the_layers_ids(standardize, split, tmp_path):
    from convert.quiet import import_tensorflow

    import_tensorflow()
    import keras

    texts = corpus()
    layer = keras.layers.TextVectorization(max_tokens=80 if split == "character" else 400, standardize=standardize,
                                           split=split, output_sequence_length=24)
    layer.adapt(texts[len(EDGE_TEXTS):])
    preprocessing = write_tokenizer(layer, tmp_path / "tokenizer.json")
    assert preprocessing == {"type": "text", "tokenizer": "tokenizer.json", "max_length": 24, "lowercase": False}
    encoder = TextEncoder(tmp_path / "tokenizer.json", 24)
    assert encoder.pad_id == 0
    got = encoder.batch(encoder.encode(texts), fixed_length=True)["input_ids"]
    np.testing.assert_array_equal(got, np.asarray(layer(np.array(texts)[:, None])))


def tutorial_standardization(input_data):
    """keras.io "Text classification from scratch", as written there."""
    import re
    import string

    import tensorflow as tf

    lowercase = tf.strings.lower(input_data)
    stripped_html = tf.strings.regex_replace(lowercase, "<br />", " ")
    return tf.strings.regex_replace(stripped_html, f"[{re.escape(string.punctuation)}]", "")


def unicode_lower_then_strip(input_data):
    import tensorflow as tf

    return tf.strings.strip(tf.strings.regex_replace(tf.strings.lower(input_data, encoding="utf-8"), r"\d+", "0"))


@pytest.mark.slow
@pytest.mark.parametrize("standardize", [tutorial_standardization, unicode_lower_then_strip])
def test_a_custom_standardize_of_lower_regex_and_strip_gives_the_layers_ids(standardize, tmp_path):
    from convert.quiet import import_tensorflow

    import_tensorflow()
    import keras

    texts = [text.replace(" ", " <br />", 1) if index % 3 == 0 else text for index, text in enumerate(corpus())]
    texts += ["Line one.<br /><br />Line 2, 3 and 45!", "  <BR />mixed Case 2024  "]
    layer = keras.layers.TextVectorization(max_tokens=400, standardize=standardize, output_sequence_length=24)
    layer.adapt(texts)
    write_tokenizer(layer, tmp_path / "tokenizer.json")
    encoder = TextEncoder(tmp_path / "tokenizer.json", 24)
    got = encoder.batch(encoder.encode(texts), fixed_length=True)["input_ids"]
    np.testing.assert_array_equal(got, np.asarray(layer(np.array(texts)[:, None])))


def splits_words(input_data):
    import tensorflow as tf

    return tf.strings.reduce_join(tf.strings.split(input_data), axis=-1, separator=" ")


def first_match_only(input_data):
    import tensorflow as tf

    return tf.strings.regex_replace(input_data, "a", "b", replace_global=False)


def group_reference(input_data):
    import tensorflow as tf

    return tf.strings.regex_replace(input_data, "(a)b", r"\1")


@pytest.mark.parametrize(("function", "named"), [
    (splits_words, "uses the TensorFlow op StringSplit"),
    (first_match_only, "replaces only the first match of 'a' (replace_global=False)"),
    (group_reference, "rewrites '(a)b' with a group reference"),
])
def test_a_custom_standardize_the_tokenizer_cannot_express_is_refused_naming_the_op(function, named):
    with pytest.raises(ConversionError) as raised:
        check_settings("vectorize", {**DEFAULT, "standardize": function})
    assert raised.value.code == "unsupported_text_vectorization"
    assert raised.value.message.startswith(f"TextVectorization layer 'vectorize': standardize {function.__name__} "
                                           f"{named}")
    assert "\n" not in raised.value.message


@pytest.mark.parametrize(("setting", "value", "named"), [
    ("output_mode", "multi_hot", "output_mode is 'multi_hot'"),
    ("output_mode", "tf_idf", "output_mode is 'tf_idf'"),
    ("ngrams", 2, "ngrams is 2"),
    ("standardize", {"class_name": "my_standardize"}, "standardize is {'class_name': 'my_standardize'}"),
    ("split", {"class_name": "my_split"}, "split is a custom callable"),
    ("ragged", True, "ragged is True"),
    ("output_sequence_length", None, "output_sequence_length is None"),
    ("encoding", "latin-1", "encoding is 'latin-1'"),
])
def test_each_setting_that_cannot_be_reproduced_is_refused_by_name(setting, value, named):
    with pytest.raises(ConversionError) as raised:
        check_settings("vectorize", {**DEFAULT, setting: value})
    assert raised.value.code == "unsupported_text_vectorization"
    assert raised.value.message.startswith(f"TextVectorization layer 'vectorize': {named}")
    assert "\n" not in raised.value.message


def test_several_oov_ids_are_refused():
    with pytest.raises(ConversionError) as raised:
        check_vocabulary("vectorize", ["", "[UNK]", "[UNK]", "the"])
    assert raised.value.code == "unsupported_text_vectorization" and "num_oov_indices" in raised.value.message
    with pytest.raises(ConversionError) as raised:
        check_vocabulary("vectorize", ["[UNK]", "the"])
    assert "padding token" in raised.value.message


def test_the_default_settings_pass():
    check_settings("vectorize", DEFAULT)
    check_vocabulary("vectorize", ["", "[UNK]", "the", "film"])
