"""Keras preprocessing layers at a column -> the manifest's steps -> the function's numpy: exactly the layers' own
tensors on the edge cases (mask tokens, unseen values, several OOV indices hashed by FarmHash64 or SipHash with a
salt, floormod on negative integers, one_hot / multi_hot / count, pad_to_max_tokens, lookup -> CategoryEncoding,
Hashing of strings, integers and floats), and each setting the function does not reproduce refused naming it."""
from __future__ import annotations

import os

import numpy as np
import pytest

from convert.errors import ConversionError
from function.errors import ServingError
from function.model.manifest import TensorSpec
from function.preprocessing.columns import apply_column, parse_columns
from function.preprocessing.string_hashes import fingerprint64, hash_bucket, siphash

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

WORDS = np.array(["red", "green", "blue", "", "mauve", "Red", "grün", "a much longer unseen value than any other",
                  "x" * 70, "green"])
NUMBERS = np.array([3, 5, 7, 0, 8, -4, 11, -1, 123456789, 5], dtype=np.int64)


def _keras():
    from convert.quiet import import_tensorflow

    import_tensorflow()
    import keras

    return keras


def _column(layers, dtype: str, width: int = 1):
    """The manifest entry for keras.Input((width,), dtype) -> layers, parsed as the function parses it, and the
    model that calls the layers."""
    from convert.lookup_layers import column_entry, plan_columns

    keras = _keras()
    source = keras.Input((width,), dtype=dtype, name="column")
    tensor = source
    for layer in layers:
        tensor = layer(tensor)
    model = keras.Model(source, tensor)
    entry = column_entry(plan_columns(model)[0])
    spec = TensorSpec(name="column", shape=(-1,), dtype="float32", scale=None, zero_point=None)
    return parse_columns({"type": "columns", "columns": [entry]}, [spec])[0], model, entry


def _assert_same(layers, dtype: str, values: np.ndarray) -> dict:
    import tensorflow as tf

    width = values.shape[1] if values.ndim > 1 else 1
    column, model, entry = _column(layers, dtype, width)
    fed = values.reshape(len(values), width)
    theirs = np.asarray(model(tf.constant(fed.astype(object) if dtype == "string" else fed)))
    ours = apply_column(column, values)
    assert ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)
    return entry


@pytest.mark.slow
@pytest.mark.parametrize("settings", [
    {"mask_token": "", "output_mode": "int"},
    {"mask_token": "", "output_mode": "one_hot"},
    {"num_oov_indices": 3, "output_mode": "int"},  # FarmHash64 buckets
    {"num_oov_indices": 4, "salt": [7, 11], "output_mode": "int"},  # SipHash-2-4 buckets
    {"num_oov_indices": 0, "output_mode": "int"},
    {"num_oov_indices": 2, "mask_token": "", "output_mode": "count"},
])
def test_string_lookup_gives_the_layers_indices(settings):
    keras = _keras()
    vocabulary = ["red", "green", "blue"]
    layer = keras.layers.StringLookup(vocabulary=vocabulary, **settings)
    values = WORDS if settings.get("num_oov_indices") != 0 else np.array(["red", "blue", "green", "red"])
    _assert_same([layer], "string", values)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["multi_hot", "count"])
def test_multi_valued_columns_and_padding_to_max_tokens(mode):
    keras = _keras()
    layer = keras.layers.StringLookup(vocabulary=["a", "b", "c"], output_mode=mode, pad_to_max_tokens=True,
                                      max_tokens=7)
    entry = _assert_same([layer], "string", np.array([["a", "a", "q"], ["c", "b", "b"], ["z", "z", "z"]]))
    assert entry["steps"][0]["depth"] == 7


@pytest.mark.slow
@pytest.mark.parametrize("settings", [
    {"num_oov_indices": 3, "mask_token": 0},  # floormod, negative values included
    {"num_oov_indices": 4, "oov_method": "farmhash"},
    {"num_oov_indices": 4, "oov_method": "farmhash", "salt": 5},
    {"output_mode": "one_hot"},
])
def test_integer_lookup_gives_the_layers_indices(settings):
    keras = _keras()
    layer = keras.layers.IntegerLookup(vocabulary=[3, 5, 7], **settings)
    _assert_same([layer], "int64", NUMBERS)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["one_hot", "multi_hot", "count"])
def test_a_lookup_then_category_encoding(mode):
    keras = _keras()
    lookup = keras.layers.IntegerLookup(vocabulary=[3, 5, 7], output_mode="int")
    _assert_same([lookup, keras.layers.CategoryEncoding(num_tokens=lookup.vocabulary_size(), output_mode=mode)],
                 "int64", NUMBERS)


@pytest.mark.slow
@pytest.mark.parametrize(("dtype", "values"), [("string", WORDS), ("int64", NUMBERS),
                                               ("float32", np.array([1.9, -1.9, 0.0, 3.0, 1e6], dtype=np.float32))])
@pytest.mark.parametrize("settings", [
    {"num_bins": 5},
    {"num_bins": 5, "salt": [1, 2]},
    {"num_bins": 6, "salt": 133, "output_mode": "one_hot"},
    {"num_bins": 4, "output_mode": "count"},
])
def test_hashing_gives_the_layers_bins(dtype, values, settings):
    keras = _keras()
    _assert_same([keras.layers.Hashing(**settings)], dtype, values)


@pytest.mark.slow
def test_hashing_with_a_mask_value_keeps_bin_zero_for_it():
    keras = _keras()
    _assert_same([keras.layers.Hashing(num_bins=5, mask_value="")], "string", WORDS)


@pytest.mark.slow
def test_normalization_of_a_three_wide_column_in_float32():
    keras = _keras()
    layer = keras.layers.Normalization()
    layer.adapt(np.array([[1.0, 10.0, 5.0], [2.0, 30.0, 5.0], [4.0, 20.0, 5.0]], dtype=np.float32))
    values = np.array([[1.5, 12.0, 5.0], [-3.0, 1e4, 6.0]], dtype=np.float32)
    column, model, _ = _column([layer], "float32", 3)
    np.testing.assert_allclose(apply_column(column, values), np.asarray(model(values)), rtol=1e-6, atol=1e-6)


@pytest.mark.slow
def test_an_unseen_value_without_an_oov_index_is_refused():
    keras = _keras()
    column, _, _ = _column([keras.layers.StringLookup(vocabulary=["a", "b"], num_oov_indices=0)], "string")
    with pytest.raises(ServingError) as refused:
        apply_column(column, np.array(["a", "c"]))
    assert refused.value.code == "unknown_category" and "'c'" in refused.value.message


@pytest.mark.slow
@pytest.mark.parametrize(("make", "said"), [
    (lambda keras: keras.layers.StringLookup(vocabulary=["a", "b"], idf_weights=[0.5, 0.7], output_mode="tf_idf"),
     "output_mode is 'tf_idf'"),
    (lambda keras: keras.layers.StringLookup(vocabulary=["a", "b"], output_mode="one_hot", sparse=True),
     "sparse is True"),
])
def test_settings_the_function_does_not_reproduce_are_refused_naming_them(make, said):
    keras = _keras()
    with pytest.raises(ConversionError) as refused:
        _column([make(keras)], "string")
    assert refused.value.code == "unsupported_preprocessing_layer" and said in refused.value.message


def test_the_hashes_are_the_published_reference_values():
    """SipHash-2-4's paper test vector (key 00..0f, message 00..0e) and FarmHash's empty-string fingerprint (k2)."""
    key = (int.from_bytes(bytes(range(8)), "little"), int.from_bytes(bytes(range(8, 16)), "little"))
    assert siphash(key, bytes(range(15))) == 0xA129CA6149BE45E5
    assert fingerprint64(b"") == 0x9AE16A3B2F90404F
    assert hash_bucket("anything", 1) == 0


@pytest.mark.slow
def test_the_hashes_equal_tensorflows_on_every_length_class():
    import tensorflow as tf

    _keras()
    rng = np.random.default_rng(0)
    texts = ["".join(chr(code) for code in rng.integers(32, 0x3000, size=length)) for length in range(0, 200, 3)]
    for buckets in (7, 2 ** 62 + 5):
        fast = tf.strings.to_hash_bucket_fast(texts, buckets).numpy().tolist()
        strong = tf.strings.to_hash_bucket_strong(texts, buckets, key=[123, 456]).numpy().tolist()
        assert fast == [hash_bucket(text, buckets) for text in texts]
        assert strong == [hash_bucket(text, buckets, (123, 456)) for text in texts]


@pytest.mark.slow
def test_an_integer_lookup_on_a_float_input_truncates_as_the_layer_casts():
    keras = _keras()
    layer = keras.layers.IntegerLookup(vocabulary=[2007, 2008, 2009], output_mode="one_hot")
    _assert_same([layer], "float32", np.array([2008.0, 2008.7, -2009.5, 2010.0], dtype=np.float32))


@pytest.mark.slow
def test_a_lookup_inside_a_nested_model_is_refused_naming_both():
    from convert.lookup_layers import has_lookup_layers, plan_columns

    keras = _keras()
    inner_input = keras.Input((1,), dtype="string")
    inner = keras.Model(inner_input, keras.layers.StringLookup(vocabulary=["a"], output_mode="one_hot",
                                                               name="letters")(inner_input), name="encoder")
    outer_input = keras.Input((1,), dtype="string", name="letter")
    model = keras.Model(outer_input, keras.layers.Dense(1)(inner(outer_input)))
    assert has_lookup_layers(model)
    with pytest.raises(ConversionError) as refused:
        plan_columns(model)
    assert "StringLookup layer 'letters' sits inside the nested model 'encoder'" in refused.value.message


@pytest.mark.slow
def test_a_normalization_deeper_in_the_graph_stays_but_a_stray_lookup_is_refused():
    from convert.lookup_layers import plan_columns

    keras = _keras()
    colour = keras.Input((1,), dtype="string", name="colour")
    encoded = keras.layers.StringLookup(vocabulary=["a", "b"], output_mode="one_hot")(colour)
    hidden = keras.layers.Normalization(mean=0.5, variance=0.25, name="deep_norm")(keras.layers.Dense(4)(encoded))
    plans = plan_columns(keras.Model(colour, keras.layers.Dense(1)(hidden)))
    assert [type(layer).__name__ for layer in plans[0].layers] == ["StringLookup"]
    ids = keras.Input((1,), dtype="int64", name="ids")
    stray = keras.layers.IntegerLookup(vocabulary=[1, 2], name="late_lookup")(keras.layers.Identity()(ids))
    with pytest.raises(ConversionError, match="IntegerLookup layer 'late_lookup' does not read a model input"):
        plan_columns(keras.Model(ids, keras.layers.Dense(1)(stray)))
